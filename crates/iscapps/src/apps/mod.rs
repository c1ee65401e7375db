//! The applications, one folder or file each.

mod grep;
mod passthrough;
mod statistics;

pub use grep::{GrepApp, GrepProgram};
pub use passthrough::{PassThrough, PassThroughApp};
pub use statistics::{StatisticsApp, StatisticsProgram};
