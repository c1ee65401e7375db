//! PolyBench/C's `-DPOLYBENCH_DUMP_ARRAYS` text format (WORKLOADS.md §1): live-out arrays
//! between `==BEGIN DUMP_ARRAYS==` and `==END   DUMP_ARRAYS==`, one `begin dump: <name>`
//! … `end   dump: <name>` block per array, values printed `%0.2lf ` with a newline before
//! every 20th value. `format` writes our live-out arrays that way, with each kernel's
//! print quirks (so `diff` against PolyBench's stderr works), `parse` reads such text, and `compare` checks a state
//! against a PolyBench dump with the print's rounding allowed (|x − r| ≤ 0.005 +
//! 1e-8·|r|). Arrays our kernels add beyond PolyBench's (correlation's mean and stddev)
//! are simply absent from a real PolyBench dump and skipped.

use crate::desc::KernelDesc;
use crate::error::KernelError;
use crate::state::State;
use std::fmt::Write;

/// PolyBench 4.2.1's `print_array` quirks, per kernel: which arrays it prints, the
/// multiplier K in its line-break test `(i·K + j) % 20 == 0` for 2-D arrays (the row
/// length, except gemm, 2mm, 3mm and fdtd-2d, which use their first dimension), and
/// whether the END marker comes right after the first array (fdtd-2d).
struct Layout {
    arrays: &'static [&'static str],
    k_is_first_dim: bool,
    end_after_first: bool,
}

fn layout(desc: &KernelDesc) -> Layout {
    match desc.name {
        "gemm" | "2mm" | "3mm" => Layout {
            arrays: &[],
            k_is_first_dim: true,
            end_after_first: false,
        },
        "fdtd-2d" => Layout {
            arrays: &[],
            k_is_first_dim: true,
            end_after_first: true,
        },
        // PolyBench prints only corr; we also keep mean and stddev live.
        "correlation" => Layout {
            arrays: &["corr"],
            k_is_first_dim: false,
            end_after_first: false,
        },
        _ => Layout {
            arrays: &[],
            k_is_first_dim: false,
            end_after_first: false,
        },
    }
}

/// Our live-out arrays in PolyBench's dump format, with its per-kernel quirks, so the text
/// can be `diff`ed against PolyBench's stderr.
pub fn format(desc: &KernelDesc, state: &State) -> String {
    let lay = layout(desc);
    let names: Vec<&str> = if lay.arrays.is_empty() {
        desc.live_out.clone()
    } else {
        lay.arrays.to_vec()
    };
    let mut out = String::from("==BEGIN DUMP_ARRAYS==\n");
    for (n, name) in names.iter().enumerate() {
        let Some(a) = state.get(name) else { continue };
        write!(out, "begin dump: {name}").expect("string");
        let (rows, cols) = match a.dims.as_slice() {
            [r, c] => (*r, *c),
            _ => (1, a.data.len()),
        };
        let k = if a.dims.len() == 2 && lay.k_is_first_dim {
            rows
        } else {
            cols
        };
        for i in 0..rows {
            for j in 0..cols {
                if (i * k + j) % 20 == 0 {
                    out.push('\n');
                }
                write!(out, "{:.2} ", a.data.get_f64(i * cols + j)).expect("string");
            }
        }
        writeln!(out, "\nend   dump: {name}").expect("string");
        if n == 0 && lay.end_after_first {
            out.push_str("==END   DUMP_ARRAYS==\n");
        }
    }
    if !lay.end_after_first {
        out.push_str("==END   DUMP_ARRAYS==\n");
    }
    out
}

/// Parse a dump: (array name, values) in order of appearance. `begin dump:` …
/// `end   dump:` blocks are read wherever they appear — PolyBench 4.2.1's fdtd-2d prints
/// its `==END   DUMP_ARRAYS==` marker after the first array and the other two after it —
/// and any other text (timing lines, other output) is ignored.
pub fn parse(text: &str) -> Result<Vec<(String, Vec<f64>)>, KernelError> {
    let bad = |message: String| KernelError::Io {
        path: "<polybench dump>".into(),
        message,
    };
    let mut arrays = Vec::new();
    let mut current: Option<(String, Vec<f64>)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("begin dump:") {
            if current.is_some() {
                return Err(bad(format!("`{t}` inside another array")));
            }
            current = Some((name.trim().to_string(), Vec::new()));
            continue;
        }
        if let Some(name) = t.strip_prefix("end   dump:") {
            match current.take() {
                Some((n, v)) if n == name.trim() => arrays.push((n, v)),
                _ => return Err(bad(format!("unmatched `{t}`"))),
            }
            continue;
        }
        if let Some((_, values)) = current.as_mut() {
            for tok in t.split_whitespace() {
                values.push(
                    tok.parse::<f64>()
                        .map_err(|e| bad(format!("`{tok}`: {e}")))?,
                );
            }
        }
    }
    if let Some((n, _)) = current {
        return Err(bad(format!("array {n} has no end marker")));
    }
    Ok(arrays)
}

/// Compare our state with a PolyBench dump, allowing for the dump's 2-decimal rounding.
pub fn compare(desc: &KernelDesc, state: &State, dump: &str) -> Result<(), KernelError> {
    for (name, expected) in parse(dump)? {
        let a = state.get(&name).ok_or_else(|| KernelError::MissingArray {
            kernel: desc.name.into(),
            array: name.clone(),
            side: "run",
        })?;
        if a.data.len() != expected.len() {
            return Err(KernelError::ShapeMismatch {
                kernel: desc.name.into(),
                array: name,
                got: a.data.len(),
                expected: expected.len(),
            });
        }
        for (i, &e) in expected.iter().enumerate() {
            let x = a.data.get_f64(i);
            let allowed = 0.005 + 1e-8 * e.abs();
            if (x - e).abs() > allowed + 1e-12 {
                return Err(KernelError::Mismatch {
                    kernel: desc.name.into(),
                    array: name,
                    index: i,
                    got: x,
                    expected: e,
                    allowed,
                });
            }
        }
    }
    Ok(())
}
