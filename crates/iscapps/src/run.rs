//! Running programs in-process: the functional core the runtime wraps in time, the host-only
//! ("pure_cpu") formulation (the same computation on the host's data), and the test harness.

use nearflash_stream::{flits_of, Flit, FlitWriter, ProgramError, Reassembler, StreamProgram};

use crate::{AppError, AppOutput, Dataset, IscApp};

/// Flits of `bytes` whose non-final lengths come from `lengths` (each taken modulo 64, 0 ↦
/// 64), so records land at arbitrary flit offsets. The last flit carries `eop`.
pub fn flits_with_lengths(bytes: &[u8], lengths: &[usize]) -> Vec<Flit> {
    if lengths.is_empty() {
        return flits_of(bytes);
    }
    let mut flits = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while bytes.len() - at > 64 {
        let len = match lengths[i % lengths.len()] % 64 {
            0 => 64,
            n => n,
        };
        flits.push(Flit::new(&bytes[at..at + len], false));
        at += len;
        i += 1;
    }
    flits.push(Flit::new(&bytes[at..], true));
    flits
}

/// Feeds `params` then `flits` to `program`; returns the bytes it wrote. The program must
/// close its output by the `eop` flit.
pub fn run_program(
    program: &mut dyn StreamProgram,
    params: &[Vec<u8>],
    flits: &[Flit],
) -> Result<Vec<u8>, ProgramError> {
    for p in params {
        program.on_params(p)?;
    }
    let mut out = FlitWriter::new();
    let mut bytes = Reassembler::new();
    for f in flits {
        program.on_flit(f, &mut out)?;
        for o in out.drain() {
            bytes.push(&o)?;
        }
    }
    if !bytes.is_done() {
        return Err(ProgramError::Framing("program did not end its output"));
    }
    Ok(bytes.into_bytes())
}

/// Runs every pass of `app` on `dataset` (flits cut by `cut`), then the host remainder.
pub fn run_app(
    app: &dyn IscApp,
    dataset: &Dataset,
    cut: &dyn Fn(&[u8]) -> Vec<Flit>,
) -> Result<AppOutput, AppError> {
    let flits = cut(&dataset.input);
    let mut outputs = Vec::with_capacity(app.pass_count());
    for pass in 0..app.pass_count() {
        let params = app.pass_params(dataset, pass, &outputs)?;
        let mut program = app.program(pass)?;
        outputs.push(run_program(program.as_mut(), &params, &flits)?);
    }
    app.host_remainder(dataset, &outputs)
}

/// The host-only formulation: the app's computation on the host, over 64-byte reads.
pub fn pure_cpu(app: &dyn IscApp, dataset: &Dataset) -> Result<AppOutput, AppError> {
    run_app(app, dataset, &|b: &[u8]| flits_of(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_flits_cover_the_bytes_and_only_the_last_has_eop() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let flits = flits_with_lengths(&data, &[1, 63, 64, 200]);
        let joined: Vec<u8> = flits.iter().flat_map(|f| f.payload().to_vec()).collect();
        assert_eq!(joined, data);
        assert!(flits
            .iter()
            .rev()
            .skip(1)
            .all(|f| !f.eop() && !f.is_empty()));
        assert!(flits.last().unwrap().eop());
        assert_eq!(flits_with_lengths(&[], &[3]).len(), 1);
    }
}
