//! The flash backbone: NAND geometry and timing, the NAND rules (program in order, erase
//! before program, wear), the page store that holds data and spare bytes, and the timed
//! engine in which every read, program and erase occupies its die and every transfer its
//! channel bus.

pub mod backbone;
pub mod config;
pub mod geometry;
pub mod media;
pub mod nand;
pub mod store;

pub use backbone::{Backbone, FlashCompletion, FlashEvent, FlashOp, OpKind, OpStatus};
pub use config::{ConfigError, FlashConfig};
pub use geometry::{BlockId, DieId, Geometry, PageId};
pub use media::{MediaConfig, MediaStats};
pub use nand::NandState;
pub use store::{MemoryStore, NoStore, PageState, PageStore, SparseFileStore, StoreError};
