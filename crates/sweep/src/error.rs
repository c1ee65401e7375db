//! Every way a sweep can fail, each naming the problem: the spec (a field, a parameter, an
//! empty grid), the output directory and its table, or a point's job (with the point named).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum SweepError {
    #[error("sweep spec {source_name}: {reason}")]
    Spec { source_name: String, reason: String },

    #[error("point {point} ({params}): {source}")]
    Point {
        point: String,
        params: String,
        #[source]
        source: Box<nearflash_jobs::JobError>,
    },

    /// A point whose worker process died or broke the line protocol while running it.
    #[error("point {point} ({params}): {reason}")]
    Worker {
        point: String,
        params: String,
        reason: String,
    },

    /// A point's error as its worker process reported it (the text crossed a pipe).
    #[error("{0}")]
    Remote(String),

    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: {reason}")]
    Table { path: String, reason: String },

    /// Boxed, as in `Point`: the jobs' errors are large.
    #[error(transparent)]
    Job(Box<nearflash_jobs::JobError>),
}

impl From<nearflash_jobs::JobError> for SweepError {
    fn from(e: nearflash_jobs::JobError) -> Self {
        SweepError::Job(Box::new(e))
    }
}
