//! The applications, one folder or file each.

mod grep;
mod integration;
mod knn;
mod passthrough;
mod relief;
mod rle;
mod sql;
mod statistics;

pub use grep::{GrepApp, GrepProgram};
pub use integration::{IntegrationApp, IntegrationProgram, PAPER_QUERY};
pub use knn::{KnnApp, KnnDistanceProgram};
pub use passthrough::{PassThrough, PassThroughApp};
pub use relief::{ReliefApp, ReliefFilterProgram, ReliefNearestProgram};
pub use rle::{RleApp, RleDecodeProgram};
pub use sql::{SqlApp, SqlFilterProgram};
pub use statistics::{StatisticsApp, StatisticsProgram};
