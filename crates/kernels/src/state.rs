//! A kernel's working arrays: named, typed, row-major. Kernels address arrays by the index
//! they were pushed at (a constant per kernel); verification and dumps go by name.
//!
//! On a device an array lives in the data section of the same name as its elements in
//! little-endian byte order, row-major: `Data::read_bytes` / `Data::write_bytes` move any
//! byte range of that image in and out of an array, `State::zeroed` gives the shape of a
//! state without its contents (a DDR3L buffer before anything was loaded into it).

#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::F64(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::U8(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` widened to f64 (exact for every stored type at our sizes).
    pub fn get_f64(&self, i: usize) -> f64 {
        match self {
            Data::F64(v) => v[i],
            Data::F32(v) => v[i] as f64,
            Data::I32(v) => v[i] as f64,
            Data::I64(v) => v[i] as f64,
            Data::U8(v) => v[i] as f64,
        }
    }

    /// Bytes per element in the device's byte image.
    pub fn elem_bytes(&self) -> u64 {
        match self {
            Data::F64(_) | Data::I64(_) => 8,
            Data::F32(_) | Data::I32(_) => 4,
            Data::U8(_) => 1,
        }
    }

    /// Bytes of the whole array's image.
    pub fn byte_len(&self) -> u64 {
        self.len() as u64 * self.elem_bytes()
    }

    /// The same type and length, every element zero.
    pub fn zeroed(&self) -> Data {
        match self {
            Data::F64(v) => Data::F64(vec![0.0; v.len()]),
            Data::F32(v) => Data::F32(vec![0.0; v.len()]),
            Data::I32(v) => Data::I32(vec![0; v.len()]),
            Data::I64(v) => Data::I64(vec![0; v.len()]),
            Data::U8(v) => Data::U8(vec![0; v.len()]),
        }
    }

    /// Copies the image bytes `[offset_bytes, offset_bytes + out.len())` into `out`
    /// (little-endian, row-major). The range must lie inside the image.
    pub fn read_bytes(&self, offset_bytes: u64, out: &mut [u8]) {
        assert!(
            offset_bytes + out.len() as u64 <= self.byte_len(),
            "read past the array"
        );
        match self {
            Data::F64(v) => read_le(v, offset_bytes, out, |x| x.to_le_bytes()),
            Data::F32(v) => read_le(v, offset_bytes, out, |x| x.to_le_bytes()),
            Data::I32(v) => read_le(v, offset_bytes, out, |x| x.to_le_bytes()),
            Data::I64(v) => read_le(v, offset_bytes, out, |x| x.to_le_bytes()),
            Data::U8(v) => read_le(v, offset_bytes, out, |x| [*x]),
        }
    }

    /// Overwrites the image bytes `[offset_bytes, offset_bytes + bytes.len())` (a partial
    /// element keeps its other bytes). The range must lie inside the image.
    pub fn write_bytes(&mut self, offset_bytes: u64, bytes: &[u8]) {
        assert!(
            offset_bytes + bytes.len() as u64 <= self.byte_len(),
            "write past the array"
        );
        match self {
            Data::F64(v) => write_le(
                v,
                offset_bytes,
                bytes,
                |x| x.to_le_bytes(),
                f64::from_le_bytes,
            ),
            Data::F32(v) => write_le(
                v,
                offset_bytes,
                bytes,
                |x| x.to_le_bytes(),
                f32::from_le_bytes,
            ),
            Data::I32(v) => write_le(
                v,
                offset_bytes,
                bytes,
                |x| x.to_le_bytes(),
                i32::from_le_bytes,
            ),
            Data::I64(v) => write_le(
                v,
                offset_bytes,
                bytes,
                |x| x.to_le_bytes(),
                i64::from_le_bytes,
            ),
            Data::U8(v) => write_le(v, offset_bytes, bytes, |x| [*x], |b: [u8; 1]| b[0]),
        }
    }

    /// The whole array's image.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.byte_len() as usize];
        self.read_bytes(0, &mut out);
        out
    }

    /// Relative tolerance for comparisons with a reference (WORKLOADS.md §1): 1e-8 for
    /// double, 1e-4 for float, exact for integers and bytes.
    pub fn tolerance(&self) -> f64 {
        match self {
            Data::F64(_) => 1e-8,
            Data::F32(_) => 1e-4,
            _ => 0.0,
        }
    }
}

/// Image bytes of elements `v` from byte `offset` on, into `out`.
fn read_le<T, const N: usize>(v: &[T], offset: u64, out: &mut [u8], enc: impl Fn(&T) -> [u8; N]) {
    let mut at = offset as usize;
    let mut done = 0;
    while done < out.len() {
        let (i, within) = (at / N, at % N);
        let n = (N - within).min(out.len() - done);
        out[done..done + n].copy_from_slice(&enc(&v[i])[within..within + n]);
        done += n;
        at += n;
    }
}

/// Overwrites image bytes of elements `v` from byte `offset` on with `bytes`.
fn write_le<T, const N: usize>(
    v: &mut [T],
    offset: u64,
    bytes: &[u8],
    enc: impl Fn(&T) -> [u8; N],
    dec: impl Fn([u8; N]) -> T,
) {
    let mut at = offset as usize;
    let mut done = 0;
    while done < bytes.len() {
        let (i, within) = (at / N, at % N);
        let n = (N - within).min(bytes.len() - done);
        let mut e = enc(&v[i]);
        e[within..within + n].copy_from_slice(&bytes[done..done + n]);
        v[i] = dec(e);
        done += n;
        at += n;
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub name: String,
    pub dims: Vec<usize>,
    pub data: Data,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    arrays: Vec<Array>,
}

macro_rules! typed_access {
    ($get:ident, $get_mut:ident, $take:ident, $put:ident, $variant:ident, $t:ty) => {
        pub fn $get(&self, i: usize) -> &[$t] {
            match &self.arrays[i].data {
                Data::$variant(v) => v,
                _ => panic!("array {} is not {}", self.arrays[i].name, stringify!($t)),
            }
        }

        pub fn $get_mut(&mut self, i: usize) -> &mut [$t] {
            let name = self.arrays[i].name.clone();
            match &mut self.arrays[i].data {
                Data::$variant(v) => v,
                _ => panic!("array {name} is not {}", stringify!($t)),
            }
        }

        /// Move array `i` out (leaving it empty) so it can be written while others are read.
        pub fn $take(&mut self, i: usize) -> Vec<$t> {
            match std::mem::replace(&mut self.arrays[i].data, Data::$variant(Vec::new())) {
                Data::$variant(v) => v,
                _ => panic!("array {} is not {}", self.arrays[i].name, stringify!($t)),
            }
        }

        /// Put back an array moved out with the matching `take` (a 1-D array may change
        /// length: variable-size outputs such as word lists).
        pub fn $put(&mut self, i: usize, v: Vec<$t>) {
            if self.arrays[i].dims.len() == 1 {
                self.arrays[i].dims[0] = v.len();
            }
            self.arrays[i].data = Data::$variant(v);
        }
    };
}

impl State {
    pub fn new() -> Self {
        State::default()
    }

    /// Append an array; returns its index.
    pub fn push(&mut self, name: &str, dims: &[usize], data: Data) -> usize {
        debug_assert_eq!(dims.iter().product::<usize>(), data.len(), "{name}");
        self.arrays.push(Array {
            name: name.to_string(),
            dims: dims.to_vec(),
            data,
        });
        self.arrays.len() - 1
    }

    pub fn get(&self, name: &str) -> Option<&Array> {
        self.arrays.iter().find(|a| a.name == name)
    }

    pub fn arrays(&self) -> &[Array] {
        &self.arrays
    }

    pub fn array(&self, i: usize) -> &Array {
        &self.arrays[i]
    }

    /// Index of the array called `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.arrays.iter().position(|a| a.name == name)
    }

    /// Array `i`'s data, to load bytes into (its length and type stay as they are).
    pub fn data_mut(&mut self, i: usize) -> &mut Data {
        &mut self.arrays[i].data
    }

    /// The same arrays (names, shapes, types), every element zero.
    pub fn zeroed(&self) -> State {
        State {
            arrays: self
                .arrays
                .iter()
                .map(|a| Array {
                    name: a.name.clone(),
                    dims: a.dims.clone(),
                    data: a.data.zeroed(),
                })
                .collect(),
        }
    }

    /// Keep only the named arrays (in the given order): a reference's live-out result.
    pub fn select(mut self, names: &[&str]) -> State {
        let mut out = State::new();
        for n in names {
            if let Some(pos) = self.arrays.iter().position(|a| a.name == *n) {
                out.arrays.push(self.arrays.swap_remove(pos));
            }
        }
        out
    }

    typed_access!(f64s, f64s_mut, take_f64, put_f64, F64, f64);
    typed_access!(f32s, f32s_mut, take_f32, put_f32, F32, f32);
    typed_access!(i32s, i32s_mut, take_i32, put_i32, I32, i32);
    typed_access!(i64s, i64s_mut, take_i64, put_i64, I64, i64);
    typed_access!(u8s, u8s_mut, take_u8, put_u8, U8, u8);
}

/// Row-major 2-D fill from a closed-form formula.
pub fn fill2(rows: usize, cols: usize, f: impl Fn(usize, usize) -> f64) -> Vec<f64> {
    let mut v = Vec::with_capacity(rows * cols);
    for i in 0..rows {
        for j in 0..cols {
            v.push(f(i, j));
        }
    }
    v
}

/// 1-D fill from a closed-form formula.
pub fn fill1(n: usize, f: impl Fn(usize) -> f64) -> Vec<f64> {
    (0..n).map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_round_trip_at_any_byte_offset() {
        let mut d = Data::F64(vec![1.5, -2.25, 3.0]);
        let img = d.to_le_bytes();
        assert_eq!(img.len(), 24);
        assert_eq!(&img[8..16], &(-2.25f64).to_le_bytes());
        // a range straddling elements 0 and 1
        let mut part = [0u8; 5];
        d.read_bytes(5, &mut part);
        assert_eq!(&part[..], &img[5..10]);
        let mut z = d.zeroed();
        assert_eq!(z, Data::F64(vec![0.0; 3]));
        z.write_bytes(3, &img[3..20]);
        z.write_bytes(0, &img[0..3]);
        z.write_bytes(20, &img[20..24]);
        assert_eq!(z, d);
        d.write_bytes(16, &7.0f64.to_le_bytes());
        assert_eq!(d.get_f64(2), 7.0);
        let mut b = Data::U8(vec![0; 4]);
        b.write_bytes(1, &[9, 8]);
        assert_eq!(b, Data::U8(vec![0, 9, 8, 0]));
        let i = Data::I32(vec![-1, 2]);
        assert_eq!(i.to_le_bytes(), [255, 255, 255, 255, 2, 0, 0, 0]);
    }
}
