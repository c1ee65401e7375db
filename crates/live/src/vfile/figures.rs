//! The virtual files' figures in the statistics (`LiveStats::vfiles`): registrations and
//! refusals, runs and their failures, bytes in and out, the ISC unit's requests and credits,
//! its engines' time, and what the engine is.

use serde::{Deserialize, Serialize};

/// Virtual files since the server started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VfileFigures {
    /// Registered now.
    pub registered: u64,
    /// Loaded from the image at start, and registrations there that did not load.
    pub loaded_at_start: u64,
    pub load_errors: u64,
    /// Control requests accepted: registrations, unregistrations.
    pub registrations: u64,
    pub unregistrations: u64,
    /// Control requests refused (permission, a bad program, a limit).
    pub requests_refused: u64,
    /// Runs (one per open of a virtual file), and those that failed (the reader saw EIO, or
    /// EFBIG over the output limit; a refused real file is not a run).
    pub runs: u64,
    pub runs_failed: u64,
    /// Read requests served from runs' outputs.
    pub reads: u64,
    /// Real-file bytes the programs consumed, and output bytes they produced.
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Requests INSIDER's ISC unit issued for the runs (one credit each, C bytes of the real
    /// file), and credits that came back as the program's slot took chunks.
    #[serde(default)]
    pub isc_requests: u64,
    #[serde(default)]
    pub credits_returned: u64,
    /// Simulated time the unit's slots (or cores) spent on programs, and from each open to
    /// its run's end.
    pub program_sim_s: f64,
    pub run_sim_s: f64,
    /// What runs the programs, and where its figures come from.
    pub engine: String,
    /// The last failed run or refused request, with its reason.
    pub last_error: Option<String>,
}
