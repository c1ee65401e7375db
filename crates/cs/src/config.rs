//! `[cs]`: the computational-storage side of a drive — its compute engines (one compute
//! namespace each), its Subsystem Local Memory (the memory namespace, a part of the drive's
//! DRAM) and the limits the CP Identify fields report. A preset without the table gets the
//! defaults below; each says where it comes from.

use serde::{Deserialize, Serialize};

/// What kind of hardware a compute engine is (the shared engine model, `nearflash_hw::compute`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EngineKind {
    /// `count` cores sharing the engine's programs (`TimeSharedCores`): a run is charged its
    /// instructions × CPI ÷ clock on the core that frees first.
    Cores {
        count: u32,
        clock_mhz: f64,
        cpi: f64,
    },
    /// FPGA-like slots (`SlotSpec`): the program, synthesised into a pipeline, streams the
    /// bytes it reads and writes at `bytes_per_cycle` per clock cycle; the interpreter still
    /// computes its result.
    Slots {
        count: u32,
        clock_mhz: f64,
        bytes_per_cycle: f64,
    },
}

/// One compute engine: one compute namespace. (Unknown fields are refused by the kind's
/// table, which receives every field but `name`.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineConfig {
    pub name: String,
    #[serde(flatten)]
    pub kind: EngineKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CsConfig {
    /// The memory namespace's size (SLM). Assumption: 2 GiB, the DRAM of a 2 TB drive at the
    /// customary 1 GB per TB of flash, all of it lent to SLM (a real drive keeps its mapping
    /// table there too; the model's FTL map is not charged to this DRAM).
    pub slm_bytes: u64,
    /// The SLM's DRAM port. Assumption: 6400 MB/s, DDR4-1600 on a 32-bit bus (the drive
    /// DRAM of a client SSD controller such as Samsung's Phoenix, LPDDR4 32-bit).
    pub slm_bandwidth_mb_s: f64,
    /// Program slots (PIND 0..programs_max). Assumption: 32, twice MAXACT.
    pub programs_max: u16,
    /// MAXACT: programs activated at once. The SPDK CPCS implementation's default, 16
    /// (STANDARDS.md §3.1, `lib/nvmf/cpcs/nvmf_cpcs.c`).
    pub activated_max: u16,
    /// MAXMEMRS: range sets at once. SPDK CPCS default, 256.
    pub range_sets_max: u16,
    /// MAXMEMR: ranges per set. SPDK CPCS default, 32.
    pub ranges_per_set_max: u16,
    /// MRSG: range granularity in bytes. 1: compute-namespace accesses are byte-granular
    /// (STANDARDS.md §3.1), and a range must end where its data ends — at the SPDK CPCS
    /// default of 4, an input of any other length would need padding its program could not
    /// tell from data (a checksum would change).
    pub range_granularity_bytes: u64,
    /// MAXPB: MiB for downloaded programs, per program. Assumption: 4 MiB, above the
    /// examples (2–32 KiB) and the kernel's 1 M-instruction eBPF limit (8 MiB) halved.
    pub program_mib_max: u32,
    /// LPG: Load Program granularity in bytes (chunk sizes and offsets). Assumption: 4, a
    /// dword, as the other host-visible granularities.
    pub load_granularity_bytes: u32,
    /// Memory Copy splits its LBA ranges into flash reads of this size. Assumption: 128 KiB,
    /// the host's `io_request_bytes` (crates/host: Linux `max_sectors_kb`).
    pub copy_chunk_bytes: u64,
    /// Flash reads one Memory Copy keeps in flight. Assumption: 32, the host's
    /// `io_queue_depth`.
    pub copy_reads_max: u32,
    /// Instructions (or WebAssembly fuel) any run may use: 2.5 × 10^8. It bounds the wall time
    /// of a runaway loop: 10^9 eBPF instructions took 8.6 s in the interpreter on this 2-core
    /// machine at load average 7 (tests/offload.rs, the runaway loop), so a quarter of that
    /// stops one in about 2 s, well inside the 10 s a hostile program may take. A real run's
    /// budget grows with its data (`instructions_per_range_byte`).
    pub instructions_base: u64,
    /// Instructions added per byte of the range set: 100, the WebAssembly default per input
    /// byte (`FUEL_PER_INPUT_BYTE`).
    pub instructions_per_range_byte: u64,
    /// The compute engines, one compute namespace each, in namespace order.
    pub engines: Vec<EngineConfig>,
    /// The host core of the host-only path (the same program, computed on the host). INSIDER's
    /// host: 2.3 GHz at CPI 1.0 (configs/insider.toml `host_clock_mhz`, `host_cpi`: its
    /// assumptions for §5.2's Xeon).
    pub host_clock_mhz: f64,
    pub host_cpi: f64,
}

impl Default for CsConfig {
    fn default() -> Self {
        CsConfig {
            slm_bytes: 2 << 30,
            slm_bandwidth_mb_s: 6400.0,
            programs_max: 32,
            activated_max: 16,
            range_sets_max: 256,
            ranges_per_set_max: 32,
            range_granularity_bytes: 1,
            program_mib_max: 4,
            load_granularity_bytes: 4,
            copy_chunk_bytes: 128 << 10,
            copy_reads_max: 32,
            instructions_base: 250_000_000,
            instructions_per_range_byte: 100,
            engines: vec![
                // INSIDER's drive cores (configs/insider.toml: core_clock_mhz 2000, CPI 1/3);
                // four of them is an assumption.
                EngineConfig {
                    name: "drive-cores".into(),
                    kind: EngineKind::Cores {
                        count: 4,
                        clock_mhz: 2000.0,
                        cpi: 1.0 / 3.0,
                    },
                },
                // Active Flash's SSD controller, an 800 MHz Cortex-A8 at 1600 DMIPS: CPI 0.5
                // (configs/active-flash.toml, §II of the paper).
                EngineConfig {
                    name: "controller".into(),
                    kind: EngineKind::Cores {
                        count: 1,
                        clock_mhz: 800.0,
                        cpi: 0.5,
                    },
                },
                // INSIDER's FPGA slots: 250 MHz, one 64-byte flit per cycle
                // (configs/insider.toml, §3.4); two slots is an assumption.
                EngineConfig {
                    name: "fpga".into(),
                    kind: EngineKind::Slots {
                        count: 2,
                        clock_mhz: 250.0,
                        bytes_per_cycle: 64.0,
                    },
                },
            ],
            host_clock_mhz: 2300.0,
            host_cpi: 1.0,
        }
    }
}

/// A `[cs]` value that cannot describe a drive.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cs.{field}: {reason}")]
pub struct CsConfigError {
    pub field: String,
    pub reason: String,
}

impl CsConfig {
    pub fn validate(&self) -> Result<(), CsConfigError> {
        let bad = |field: &str, reason: &str| {
            Err(CsConfigError {
                field: field.into(),
                reason: reason.into(),
            })
        };
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if self.slm_bytes == 0 {
            return bad("slm_bytes", "the memory namespace needs at least a byte");
        }
        if !positive(self.slm_bandwidth_mb_s) {
            return bad("slm_bandwidth_mb_s", "must be positive");
        }
        if self.programs_max == 0 {
            return bad("programs_max", "at least one program slot");
        }
        if self.activated_max == 0 {
            return bad("activated_max", "at least one program may be active");
        }
        if self.activated_max > self.programs_max {
            return bad("activated_max", "cannot exceed programs_max");
        }
        if self.range_sets_max == 0 {
            return bad("range_sets_max", "at least one range set");
        }
        if self.ranges_per_set_max == 0
            || usize::from(self.ranges_per_set_max) > crate::ebpf::vm::RANGES_MAX
        {
            return bad(
                "ranges_per_set_max",
                &format!("between 1 and {}", crate::ebpf::vm::RANGES_MAX),
            );
        }
        if self.range_granularity_bytes == 0 || self.load_granularity_bytes == 0 {
            return bad(
                "range_granularity_bytes",
                "granularities are at least a byte",
            );
        }
        if self.program_mib_max == 0 {
            return bad("program_mib_max", "at least 1 MiB");
        }
        if self.copy_chunk_bytes == 0
            || !self
                .copy_chunk_bytes
                .is_multiple_of(nearflash_blockdev::SECTOR_BYTES)
        {
            return bad("copy_chunk_bytes", "a positive multiple of 512");
        }
        if self.copy_reads_max == 0 {
            return bad("copy_reads_max", "at least one read in flight");
        }
        if self.instructions_base == 0 {
            return bad("instructions_base", "at least one instruction");
        }
        if !positive(self.host_clock_mhz) || !positive(self.host_cpi) {
            return bad(
                "host_clock_mhz",
                "the host core's clock and CPI must be positive",
            );
        }
        if self.engines.is_empty() {
            return bad("engines", "at least one compute engine");
        }
        for (i, e) in self.engines.iter().enumerate() {
            let field = format!("engines[{i}]");
            let ok = match e.kind {
                EngineKind::Cores {
                    count,
                    clock_mhz,
                    cpi,
                } => count > 0 && positive(clock_mhz) && positive(cpi),
                EngineKind::Slots {
                    count,
                    clock_mhz,
                    bytes_per_cycle,
                } => count > 0 && positive(clock_mhz) && positive(bytes_per_cycle),
            };
            if !ok {
                return bad(
                    &field,
                    "count, clock and CPI or bytes per cycle must be positive",
                );
            }
            if self.engines[..i].iter().any(|o| o.name == e.name) {
                return bad(&field, &format!("a second engine named {}", e.name));
            }
        }
        Ok(())
    }

    /// The byte limit of one downloaded program (MAXPB).
    pub fn program_bytes_max(&self) -> u64 {
        u64::from(self.program_mib_max) << 20
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_a_zero_clock_is_named() {
        CsConfig::default().validate().unwrap();
        let mut c = CsConfig::default();
        c.engines[1].kind = EngineKind::Cores {
            count: 1,
            clock_mhz: 0.0,
            cpi: 1.0,
        };
        assert_eq!(c.validate().unwrap_err().field, "engines[1]");
    }

    #[test]
    fn a_table_in_toml_reads_back() {
        let c: CsConfig = toml_from(
            "slm_bytes = 1048576\n[[engines]]\nname = \"arm\"\nkind = \"cores\"\ncount = 2\nclock_mhz = 1000.0\ncpi = 1.0\n",
        );
        assert_eq!(c.slm_bytes, 1 << 20);
        assert_eq!(c.engines.len(), 1);
        c.validate().unwrap();
        let typo: Result<CsConfig, _> = toml::from_str(
            "[[engines]]\nname = \"arm\"\nkind = \"cores\"\ncount = 2\nclock_mhz = 1000.0\ncpi = 1.0\nclok = 3\n",
        );
        assert!(typo.unwrap_err().to_string().contains("clok"));
    }

    fn toml_from(text: &str) -> CsConfig {
        toml::from_str(text).unwrap()
    }
}
