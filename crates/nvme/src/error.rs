//! The NVMe front end's errors: bad configuration (naming the field) and refused
//! submissions.

use nearflash_hw::link::LinkError;
use thiserror::Error;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum NvmeError {
    #[error("nvme.{field}: {reason}")]
    Config { field: &'static str, reason: String },
    #[error("nvme.{0}")]
    Link(#[from] LinkError),
    #[error("submission queue {qid} is full ({depth_max} commands in flight)")]
    QueueFull { qid: u16, depth_max: u32 },
    #[error("no I/O queue {qid}: the controller has {queue_pairs}")]
    NoSuchQueue { qid: u16, queue_pairs: u16 },
    #[error("no memory endpoint {0}")]
    NoSuchEndpoint(u16),
    #[error(
        "nvme.queue_pairs × (queue_entries − 1) = {slots} commands in flight, more than the \
         device admits at once ({limit})"
    )]
    SlotsOverAdmission { slots: u64, limit: u64 },
}
