//! The applications, one folder or file each.

mod grep;
mod integration;
mod knn;
mod passthrough;
mod relief;
mod rle;
mod sql;
mod statistics;

pub use grep::{
    GrepApp, GrepProgram,
    HAND_DERIVED_INSTRUCTIONS_PER_BYTE as GREP_HAND_DERIVED_INSTRUCTIONS_PER_BYTE,
};
pub use integration::{IntegrationApp, IntegrationProgram, PAPER_QUERY};
pub use knn::{KnnApp, KnnDistanceProgram};
pub use passthrough::{PassThrough, PassThroughApp};
pub use relief::{ReliefApp, ReliefFilterProgram, ReliefNearestProgram};
pub use rle::{RleApp, RleDecodeProgram};
pub use sql::{SqlApp, SqlFilterProgram};
pub use statistics::{
    StatisticsApp, StatisticsProgram,
    HAND_DERIVED_INSTRUCTIONS_PER_BYTE as STATISTICS_HAND_DERIVED_INSTRUCTIONS_PER_BYTE,
};
