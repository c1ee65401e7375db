//! Measures INSIDER's applications' instruction counts (the method: `nearflash_iscapps::measure`)
//! and writes or checks the table crates/iscapps/src/measured.rs.
//!
//! The WebAssembly build of the applications (`nearflash-iscapps-wasm`) runs under wasmi with
//! `nearflash_wasm::cost::metered_config()`; the fuel of each step is the difference of the
//! store's fuel around that step's call. WASI imports the module carries (the standard
//! library's, for a panic message) are linked to functions that trap: a measured run that
//! reaches one fails.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use nearflash_iscapps::measure::{source_digest, Measurement, DIGEST_SOURCES, TABLE_PATH};
use wasmi::{Engine, ExternType, Linker, Module, Store, TypedFunc};

/// The two input sizes each app is measured at: 4 MiB and 8 MiB (whole records), large
/// enough for several of every app's records (a grep line is 64 KiB, a KNN record 4,160 B).
pub const INPUT_BYTES: [u64; 2] = [4 << 20, 8 << 20];
/// The generators' seed.
pub const SEED: u64 = 1;

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("the WebAssembly module: {0}")]
    Wasm(String),
    #[error("{app}: step {step} failed in the WebAssembly build")]
    Step { app: String, step: String },
    #[error("reading {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn wasm_err(e: impl std::fmt::Display) -> MeasureError {
    MeasureError::Wasm(e.to_string())
}

/// One application's fuel, owned (the table's `Measurement` borrows 'static slices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppFuel {
    pub app: String,
    pub input_bytes: [u64; 2],
    pub pass_fuel: Vec<[u64; 2]>,
    pub output_bytes: Vec<[u64; 2]>,
    pub remainder_fuel: [u64; 2],
}

impl AppFuel {
    /// The same figures as the table's type (leaks two small slices; a tool's lifetime).
    pub fn as_measurement(&self) -> Measurement {
        Measurement {
            app: Box::leak(self.app.clone().into_boxed_str()),
            input_bytes: self.input_bytes,
            pass_fuel: Box::leak(self.pass_fuel.clone().into_boxed_slice()),
            output_bytes: Box::leak(self.output_bytes.clone().into_boxed_slice()),
            remainder_fuel: self.remainder_fuel,
        }
    }
}

impl From<&Measurement> for AppFuel {
    fn from(m: &Measurement) -> AppFuel {
        AppFuel {
            app: m.app.to_string(),
            input_bytes: m.input_bytes,
            pass_fuel: m.pass_fuel.to_vec(),
            output_bytes: m.output_bytes.to_vec(),
            remainder_fuel: m.remainder_fuel,
        }
    }
}

struct Exports {
    prepare: TypedFunc<(u32, u64, u64), u64>,
    params: TypedFunc<u32, u64>,
    run_pass: TypedFunc<u32, u64>,
    collect: TypedFunc<u32, u64>,
    remainder: TypedFunc<(), u64>,
    verify: TypedFunc<(), u64>,
}

const FAILED: u64 = u64::MAX;
/// Fuel given to each run: far above any app's need (KNN at 8 MiB is about 10⁹).
const FUEL: u64 = 1 << 50;

/// Measures every registry app in `wasm` (the module's bytes).
pub fn measure(wasm: &[u8]) -> Result<Vec<AppFuel>, MeasureError> {
    let engine = Engine::new(&nearflash_wasm::cost::metered_config());
    let module = Module::new(&engine, wasm).map_err(wasm_err)?;
    let mut linker = Linker::<()>::new(&engine);
    for import in module.imports() {
        if let ExternType::Func(ty) = import.ty() {
            let what = format!("{}::{}", import.module(), import.name());
            linker
                .func_new(
                    import.module(),
                    import.name(),
                    ty.clone(),
                    move |_, _, _| {
                        Err(wasmi::Error::new(format!("the measured run called {what}")))
                    },
                )
                .map_err(wasm_err)?;
        }
    }
    let mut out = Vec::new();
    for (index, name) in nearflash_iscapps::APPS.iter().enumerate() {
        let app = nearflash_iscapps::app(name).map_err(wasm_err)?;
        let mut fuel = AppFuel {
            app: name.to_string(),
            input_bytes: [0; 2],
            pass_fuel: vec![[0; 2]; app.pass_count()],
            output_bytes: vec![[0; 2]; app.pass_count()],
            remainder_fuel: [0; 2],
        };
        for (k, &bytes) in INPUT_BYTES.iter().enumerate() {
            // A fresh instance per size: the allocator starts from the same state.
            let mut store = Store::new(&engine, ());
            store.set_fuel(FUEL).map_err(wasm_err)?;
            let instance = linker
                .instantiate_and_start(&mut store, &module)
                .map_err(wasm_err)?;
            let f = |n: &str| -> Result<wasmi::Func, MeasureError> {
                instance
                    .get_func(&store, n)
                    .ok_or_else(|| MeasureError::Wasm(format!("no export {n}")))
            };
            let e = Exports {
                prepare: f("nf_prepare")?.typed(&store).map_err(wasm_err)?,
                params: f("nf_params")?.typed(&store).map_err(wasm_err)?,
                run_pass: f("nf_run_pass")?.typed(&store).map_err(wasm_err)?,
                collect: f("nf_collect")?.typed(&store).map_err(wasm_err)?,
                remainder: f("nf_remainder")?.typed(&store).map_err(wasm_err)?,
                verify: f("nf_verify")?.typed(&store).map_err(wasm_err)?,
            };
            let step = |s: &str| MeasureError::Step {
                app: name.to_string(),
                step: s.to_string(),
            };
            let used = |store: &Store<()>| FUEL - store.get_fuel().expect("fuel metering is on");
            let n = e
                .prepare
                .call(&mut store, (index as u32, SEED, bytes))
                .map_err(wasm_err)?;
            if n == FAILED {
                return Err(step("prepare"));
            }
            fuel.input_bytes[k] = n;
            for pass in 0..app.pass_count() {
                let p = pass as u32;
                if e.params.call(&mut store, p).map_err(wasm_err)? == FAILED {
                    return Err(step(&format!("params of pass {pass}")));
                }
                let before = used(&store);
                if e.run_pass.call(&mut store, p).map_err(wasm_err)? == FAILED {
                    return Err(step(&format!("pass {pass}")));
                }
                fuel.pass_fuel[pass][k] = used(&store) - before;
                let got = e.collect.call(&mut store, p).map_err(wasm_err)?;
                if got == FAILED {
                    return Err(step(&format!("output of pass {pass}")));
                }
                fuel.output_bytes[pass][k] = got;
            }
            let before = used(&store);
            if e.remainder.call(&mut store, ()).map_err(wasm_err)? == FAILED {
                return Err(step("remainder"));
            }
            fuel.remainder_fuel[k] = used(&store) - before;
            if e.verify.call(&mut store, ()).map_err(wasm_err)? != 0 {
                return Err(step("verify against the reference"));
            }
        }
        out.push(fuel);
    }
    Ok(out)
}

/// The digest of `DIGEST_SOURCES` under the workspace root `root`.
pub fn digest(root: &Path) -> Result<u64, MeasureError> {
    let mut files = Vec::new();
    for s in DIGEST_SOURCES {
        collect(root, &root.join(s), &mut files)?;
    }
    files.retain(|(p, _)| p != TABLE_PATH);
    files.sort();
    Ok(source_digest(
        files.iter().map(|(p, c)| (p.as_str(), c.as_slice())),
    ))
}

fn collect(root: &Path, at: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), MeasureError> {
    let io = |source| MeasureError::Io {
        path: at.to_path_buf(),
        source,
    };
    if at.is_dir() {
        for entry in std::fs::read_dir(at).map_err(io)? {
            collect(root, &entry.map_err(io)?.path(), out)?;
        }
    } else if at.extension().is_some_and(|e| e == "rs" || e == "toml") {
        let rel = at
            .strip_prefix(root)
            .expect("below the root")
            .to_string_lossy()
            .replace('\\', "/");
        out.push((rel, std::fs::read(at).map_err(io)?));
    } else if !at.exists() {
        return Err(io(std::io::Error::from(std::io::ErrorKind::NotFound)));
    }
    Ok(())
}

/// The table's Rust source: the fuel, the digest, how it was measured.
pub fn render(fuel: &[AppFuel], digest: u64, toolchain: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "//! GENERATED by scripts/measure-insider-costs.sh (nearflash-iscmeasure); do not edit.\n\
         //! The method: `crate::measure`. Measured with {toolchain}, target wasm32-wasip1, the\n\
         //! release profile, wasmi fuel under nearflash_wasm::cost's schedule, seed {SEED}, inputs\n\
         //! of {} and {} bytes (rounded down to whole records).\n",
        INPUT_BYTES[0], INPUT_BYTES[1]
    );
    let _ = writeln!(s, "use crate::measure::Measurement;\n");
    let _ = writeln!(
        s,
        "/// FNV-1a of `crate::measure::DIGEST_SOURCES` when measured."
    );
    let _ = writeln!(s, "pub const SOURCE_DIGEST: u64 = {digest:#018x};\n");
    let _ = writeln!(s, "/// The compiler the module was built with.");
    let _ = writeln!(s, "pub const TOOLCHAIN: &str = {toolchain:?};\n");
    let _ = writeln!(s, "pub const MEASUREMENTS: &[Measurement] = &[");
    for f in fuel {
        let _ = writeln!(s, "    Measurement {{");
        let _ = writeln!(s, "        app: {:?},", f.app);
        let _ = writeln!(s, "        input_bytes: {:?},", f.input_bytes);
        let _ = writeln!(s, "        pass_fuel: &{:?},", f.pass_fuel);
        let _ = writeln!(s, "        output_bytes: &{:?},", f.output_bytes);
        let _ = writeln!(s, "        remainder_fuel: {:?},", f.remainder_fuel);
        let _ = writeln!(s, "    }},");
    }
    let _ = writeln!(s, "];");
    s
}
