//! A kernel's working arrays: named, typed, row-major. Kernels address arrays by the index
//! they were pushed at (a constant per kernel); verification and dumps go by name.

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
