//! Active Flash (seed 004, Boboila et al.): moving part of a computation into the SSD
//! controller. The paper's analytic model (`model`), the controller and the host CPU as
//! compute engines (`engine`), real DEFLATE compression of generated data (`corpus`), and the
//! two simulations of §III over the FTL device: compression in the background while the
//! foreground writes (`background`, Fig. 2) and compression split between host and
//! controller after it (`split`, Fig. 3). Beside them, a user's program run by the controller
//! as a background task over a file on flash (`program`, issue 14).

pub mod background;
pub mod config;
pub mod corpus;
mod engine;
pub mod error;
pub mod model;
pub mod program;
pub mod rig;
pub mod split;
mod worker;

pub use background::{run_background, BackgroundParams, BackgroundPoint};
pub use config::{ActiveFlashConfig, EngineSpec};
pub use error::{ActiveFlashError, ProgramFault};
pub use model::{Model, ModelPoint};
pub use program::{run_program, ForegroundRun, ProgramParams, ProgramRun};
pub use rig::{write_ceiling_mb_s, Fidelity, Rig};
pub use split::{run_split, SplitPoint};
pub use worker::Side;
