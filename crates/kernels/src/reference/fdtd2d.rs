//! FDTD-2D reference: PolyBench/C 4.2.1 `kernel_fdtd_2d`.

use super::{f64v, result};
use crate::state::{Data, State};

pub fn run(tmax: usize, nx: usize, ny: usize, input: &State) -> State {
    let fict = f64v(input, "_fict_");
    let mut ex = f64v(input, "ex");
    let mut ey = f64v(input, "ey");
    let mut hz = f64v(input, "hz");
    for t in 0..tmax {
        for j in 0..ny {
            ey[j] = fict[t];
        }
        for i in 1..nx {
            for j in 0..ny {
                ey[i * ny + j] = ey[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
            }
        }
        for i in 0..nx {
            for j in 1..ny {
                ex[i * ny + j] = ex[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[i * ny + j - 1]);
            }
        }
        for i in 0..nx - 1 {
            for j in 0..ny - 1 {
                hz[i * ny + j] = hz[i * ny + j]
                    - 0.7
                        * (ex[i * ny + j + 1] - ex[i * ny + j] + ey[(i + 1) * ny + j]
                            - ey[i * ny + j]);
            }
        }
    }
    result(vec![
        ("ex", vec![nx, ny], Data::F64(ex)),
        ("ey", vec![nx, ny], Data::F64(ey)),
        ("hz", vec![nx, ny], Data::F64(hz)),
    ])
}
