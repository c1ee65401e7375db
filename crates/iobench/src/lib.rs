//! Block I/O benchmarks of the FTL device, as a library (the `nearflash io` command is its
//! front end): synthetic workloads (`workload`) and block traces (`trace`) drive the device,
//! behind its NVMe front end and PCIe link or bare (`interface`), through the discrete-event
//! driver (`driver`: closed loop at a queue depth, or open loop at
//! recorded arrival times, with every read verified in functional fidelity), and `bench`
//! runs a whole benchmark into the report (`report`) of every measured figure.

pub mod bench;
pub mod driver;
mod error;
pub mod interface;
pub mod placement;
pub mod report;
mod sysinfo;
pub mod trace;
pub mod workload;
pub mod zoned;

pub use bench::{capacity_bytes, precondition, Bench, Plan, Stage};
pub use driver::StoreSpec;
pub use error::IoBenchError;
pub use interface::Interface;
pub use placement::PlacementSpread;
pub use report::IoReport;
