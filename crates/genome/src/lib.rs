//! DNA seed-and-vote matching in Hayagui's six phases (load reference, index reference, save
//! index, load index, load target, matching), pure and deterministic: a synthetic dataset
//! generator (`dataset`), a streaming FASTA parser (`fasta`), a k-mer CSR index with a checked
//! on-storage format (`index`), the matcher and its brute-force reference (`matcher`), and the
//! pipeline over the caller's storage (`io::GenomeIo`) reporting work counts per phase
//! (`pipeline`).
//!
//! Plugging in: implement `GenomeIo` over the simulated file system (or use `MemIo`), optionally
//! a `PhaseObserver` to stamp simulated time, then call `run_pipeline(&mut io, &config,
//! &mut observer)` and price each phase's `PhaseCounts` with the cost model.

#![deny(missing_docs)]

pub mod dataset;
pub mod error;
pub mod fasta;
pub mod index;
pub mod io;
pub mod matcher;
pub mod pipeline;

pub use dataset::{generate, Dataset, DatasetSizes, ReadOrigin};
pub use error::GenomeError;
pub use fasta::{FastaParser, FastaRecord};
pub use index::{KmerIndex, Reference};
pub use io::{GenomeIo, MemIo};
pub use matcher::{match_read, match_read_brute_force, Hit, MatchParams};
pub use pipeline::{
    run_pipeline, GenomeConfig, GenomeReport, NoObserver, Phase, PhaseCounts, PhaseObserver,
};
