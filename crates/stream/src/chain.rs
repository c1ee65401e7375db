//! Sub-programs chained by FIFOs into one dataflow pipeline (INSIDER §3.4).

use crate::{Flit, FlitWriter, ProgramError, StreamProgram, WorkCost};

/// A pipeline of programs: each stage's output flits are the next stage's input flits.
/// Parameters go to the first stage. As a whole it is itself a `StreamProgram`.
pub struct Chain {
    name: &'static str,
    stages: Vec<Box<dyn StreamProgram>>,
}

impl Chain {
    /// Chains `stages` (at least one) in order.
    pub fn new(name: &'static str, stages: Vec<Box<dyn StreamProgram>>) -> Chain {
        assert!(!stages.is_empty(), "a chain needs a stage");
        Chain { name, stages }
    }
}

impl StreamProgram for Chain {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_params(&mut self, params: &[u8]) -> Result<(), ProgramError> {
        self.stages[0].on_params(params)
    }

    fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
        let mut fifo = vec![*input];
        let last = self.stages.len() - 1;
        for (i, stage) in self.stages.iter_mut().enumerate() {
            if i == last {
                for f in &fifo {
                    stage.on_flit(f, out)?;
                }
            } else {
                let mut w = FlitWriter::new();
                for f in &fifo {
                    stage.on_flit(f, &mut w)?;
                }
                fifo = w.drain();
            }
        }
        Ok(())
    }

    /// Stages run side by side (slots) but share a core: the slowest stage bounds a slot
    /// pipeline; instruction counts add on a core. (Per input byte of the first stage, a
    /// conservative bound: later stages see at most as many bytes as they are given.)
    fn cost(&self) -> WorkCost {
        let costs: Vec<WorkCost> = self.stages.iter().map(|s| s.cost()).collect();
        WorkCost {
            slot_bytes_per_cycle: costs
                .iter()
                .map(|c| c.slot_bytes_per_cycle)
                .fold(f64::INFINITY, f64::min),
            instructions_per_byte: costs.iter().map(|c| c.instructions_per_byte).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{flits_of, Reassembler};

    /// Adds `k` to every byte.
    struct AddK(u8);
    impl StreamProgram for AddK {
        fn name(&self) -> &'static str {
            "add"
        }
        fn on_flit(&mut self, input: &Flit, out: &mut FlitWriter) -> Result<(), ProgramError> {
            let b: Vec<u8> = input
                .payload()
                .iter()
                .map(|x| x.wrapping_add(self.0))
                .collect();
            out.push(&b);
            if input.eop() {
                out.end();
            }
            Ok(())
        }
        fn cost(&self) -> WorkCost {
            WorkCost {
                slot_bytes_per_cycle: 64.0,
                instructions_per_byte: 2.0,
            }
        }
    }

    #[test]
    fn two_stages_compose_and_costs_combine() {
        let mut c = Chain::new("add3", vec![Box::new(AddK(1)), Box::new(AddK(2))]);
        let mut w = FlitWriter::new();
        for f in flits_of(&[0u8; 100]) {
            c.on_flit(&f, &mut w).unwrap();
        }
        let mut r = Reassembler::new();
        for f in w.drain() {
            r.push(&f).unwrap();
        }
        assert_eq!(r.into_bytes(), vec![3u8; 100]);
        assert_eq!(c.cost().instructions_per_byte, 4.0);
        assert!(c.on_params(b"x").is_err());
    }
}
