//! What a timing experiment needs to know about an application, per pass over the data: the
//! bytes it streams, its drive program's cost (slot and core rates), how much output it makes
//! per input byte, and the host's work — the whole computation per input byte when the host
//! does everything (host-only, host-bypass), the remainder per output byte after the drive did
//! its part (INSIDER). `from_app` takes all of it from a `nearflash-iscapps` application at
//! the paper's size.

use crate::stream::Direction;
use nearflash_iscapps::{AppError, IscApp};
use nearflash_stream::WorkCost;

pub struct Pass {
    /// Bytes the pass streams through the drive program (read: the file; write: what the
    /// host gives to vwrite).
    pub input_bytes: u64,
    pub direction: Direction,
    pub cost: WorkCost,
    /// Output bytes per input byte.
    pub output_per_input: f64,
    /// Host-only / host-bypass: host instructions per input byte for this pass's share of
    /// the whole computation.
    pub host_instructions_per_input_byte: f64,
    /// INSIDER: host instructions per byte of the drive's output (the remainder).
    pub host_instructions_per_output_byte: f64,
}

pub struct AppProfile {
    pub name: String,
    pub passes: Vec<Pass>,
}

impl AppProfile {
    pub fn input_bytes(&self) -> u64 {
        self.passes.iter().map(|p| p.input_bytes).sum()
    }

    /// The application at the paper's size (WORKLOADS.md §4).
    pub fn from_app(app: &dyn IscApp) -> Result<AppProfile, AppError> {
        let passes = app.pass_count();
        let host = app.host_cost();
        let direction = match app.direction() {
            nearflash_iscapps::Direction::Read => Direction::Read,
            nearflash_iscapps::Direction::Write => Direction::Write,
        };
        let passes = (0..passes)
            .map(|p| {
                Ok(Pass {
                    input_bytes: app.paper_input_bytes(),
                    direction,
                    cost: app.program(p)?.cost(),
                    output_per_input: app.output_ratio(p)?.ratio,
                    host_instructions_per_input_byte: host.pure_cpu_instructions_per_input_byte
                        / passes as f64,
                    host_instructions_per_output_byte: host.remainder_instructions_per_output_byte,
                })
            })
            .collect::<Result<_, AppError>>()?;
        Ok(AppProfile {
            name: app.name().to_string(),
            passes,
        })
    }
}
