//! The one table of command-set identifiers, opcodes, program types and status codes, with
//! where each value comes from (STANDARDS.md §3.1). **Ratified** values are from the
//! ratified specifications or libnvme's enums of them; **assumed** values are
//! implementations' choices the ratified text could not be checked against. The model's
//! behaviour never depends on the numbers; they are what a trace or a completion shows.

/// Command set identifiers (libnvme `enum nvme_csi`): ratified.
pub const CSI_NVM: u8 = 0;
pub const CSI_SLM: u8 = 3;
pub const CSI_CP: u8 = 4;

/// One command of the two command sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opcode {
    pub name: &'static str,
    pub value: u8,
    pub admin: bool,
    pub ratified: bool,
    pub source: &'static str,
}

const SPDK: &str = "hsung-yang/spdk CPCS README (vendor-specific admin range: assumed)";
const SLM: &str = "hsung-yang/spdk vSLM/pSLM (assumed)";

pub const LOAD_PROGRAM: Opcode = Opcode {
    name: "Load Program",
    value: 0xC0,
    admin: true,
    ratified: false,
    source: SPDK,
};
pub const PROGRAM_ACTIVATION: Opcode = Opcode {
    name: "Program Activation Management",
    value: 0xC1,
    admin: true,
    ratified: false,
    source: SPDK,
};
pub const MEMORY_RANGE_SET: Opcode = Opcode {
    name: "Memory Range Set Management",
    value: 0xC2,
    admin: true,
    ratified: false,
    source: SPDK,
};
pub const EXECUTE_PROGRAM: Opcode = Opcode {
    name: "Execute Program",
    value: 0x01,
    admin: false,
    ratified: false,
    source: "hsung-yang/spdk CPCS README, I/O opcode on the compute namespace (assumed)",
};
pub const MEMORY_READ: Opcode = Opcode {
    name: "Memory Read",
    value: 0x02,
    admin: false,
    ratified: false,
    source: SLM,
};
pub const MEMORY_WRITE: Opcode = Opcode {
    name: "Memory Write",
    value: 0x01,
    admin: false,
    ratified: false,
    source: SLM,
};
pub const MEMORY_COPY: Opcode = Opcode {
    name: "Memory Copy",
    value: 0x19,
    admin: false,
    ratified: false,
    source: "NVM Copy's opcode (NVMe NVM Command Set 1.0: 0x19), taken for SLM's copy (assumed)",
};
pub const IDENTIFY: Opcode = Opcode {
    name: "Identify",
    value: 0x06,
    admin: true,
    ratified: true,
    source: "NVMe Base Specification, admin Identify",
};

/// Every opcode, for the docs and the trace.
pub const OPCODES: &[Opcode] = &[
    IDENTIFY,
    LOAD_PROGRAM,
    PROGRAM_ACTIVATION,
    MEMORY_RANGE_SET,
    EXECUTE_PROGRAM,
    MEMORY_READ,
    MEMORY_WRITE,
    MEMORY_COPY,
];

/// Program types (PTYPE). The ratified eBPF code point was not found: the SPDK fork's
/// vendor value 0xC0 (`ebpf_runtime.h`) is used; WebAssembly's 0xC1 is nearflash's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramType {
    Ebpf,
    Wasm,
}

impl ProgramType {
    pub const fn value(self) -> u8 {
        match self {
            ProgramType::Ebpf => 0xC0,
            ProgramType::Wasm => 0xC1,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            ProgramType::Ebpf => "eBPF",
            ProgramType::Wasm => "WebAssembly",
        }
    }
}

/// Status codes a command completes with. Generic values are the NVMe Base
/// Specification's (ratified); the command-specific ones carry the SPDK CPCS names
/// (`lib/nvmf/cpcs/README.md`) and nearflash's numbering from 0xC0 up (assumed), as the
/// ratified values were not available.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    Success,
    InvalidField,
    InvalidNamespace,
    LbaOutOfRange,
    InternalError,
    InvalidProgramIndex,
    NoProgram,
    ProgramInUse,
    InvalidProgramData,
    ProgramTooBig,
    MaxProgramsActivated,
    ProgramNotActivated,
    InvalidMemoryRangeSetId,
    MaxMemoryRangesExceeded,
    MaxMemoryRangeSetsExceeded,
    MemoryRangeNotReachable,
    ProgramMemoryViolation,
    ProgramTimeExceeded,
    ProgramFault,
}

impl Status {
    /// (status code type, status code).
    pub const fn code(self) -> (u8, u8) {
        match self {
            Status::Success => (0, 0x00),
            Status::InvalidField => (0, 0x02),
            Status::InternalError => (0, 0x06),
            Status::InvalidNamespace => (0, 0x0B),
            Status::LbaOutOfRange => (0, 0x80),
            Status::InvalidProgramIndex => (1, 0xC0),
            Status::NoProgram => (1, 0xC1),
            Status::ProgramInUse => (1, 0xC2),
            Status::InvalidProgramData => (1, 0xC3),
            Status::ProgramTooBig => (1, 0xC4),
            Status::MaxProgramsActivated => (1, 0xC5),
            Status::ProgramNotActivated => (1, 0xC6),
            Status::InvalidMemoryRangeSetId => (1, 0xC7),
            Status::MaxMemoryRangesExceeded => (1, 0xC8),
            Status::MaxMemoryRangeSetsExceeded => (1, 0xC9),
            Status::MemoryRangeNotReachable => (1, 0xCA),
            Status::ProgramMemoryViolation => (1, 0xCB),
            Status::ProgramTimeExceeded => (1, 0xCC),
            Status::ProgramFault => (1, 0xCD),
        }
    }

    /// Whether the value is the ratified one.
    pub const fn ratified(self) -> bool {
        self.code().0 == 0
    }

    pub const fn name(self) -> &'static str {
        match self {
            Status::Success => "SUCCESS",
            Status::InvalidField => "INVALID_FIELD",
            Status::InternalError => "INTERNAL_ERROR",
            Status::InvalidNamespace => "INVALID_NAMESPACE",
            Status::LbaOutOfRange => "LBA_OUT_OF_RANGE",
            Status::InvalidProgramIndex => "INVALID_PROGRAM_INDEX",
            Status::NoProgram => "NO_PROGRAM",
            Status::ProgramInUse => "PROGRAM_IN_USE",
            Status::InvalidProgramData => "INVALID_PROGRAM_DATA",
            Status::ProgramTooBig => "PROGRAM_TOO_BIG",
            Status::MaxProgramsActivated => "MAX_PROGRAMS_ACTIVATED",
            Status::ProgramNotActivated => "PROGRAM_NOT_ACTIVATED",
            Status::InvalidMemoryRangeSetId => "INVALID_MEMORY_RANGE_SET_ID",
            Status::MaxMemoryRangesExceeded => "MAX_MEMORY_RANGES_EXCEEDED",
            Status::MaxMemoryRangeSetsExceeded => "MAX_MEMORY_RANGE_SETS_EXCEEDED",
            Status::MemoryRangeNotReachable => "MEMORY_RANGE_NOT_REACHABLE",
            Status::ProgramMemoryViolation => "PROGRAM_MEMORY_VIOLATION",
            Status::ProgramTimeExceeded => "PROGRAM_EXECUTION_TIME_EXCEEDED",
            Status::ProgramFault => "PROGRAM_FAULT",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (sct, sc) = self.code();
        write!(f, "{} (SCT {sct}, SC {sc:#04x})", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_are_distinct_within_admin_and_within_io_and_say_their_source() {
        for (i, a) in OPCODES.iter().enumerate() {
            assert!(!a.source.is_empty());
            for b in &OPCODES[i + 1..] {
                // Memory Write and Execute Program share 0x01 on different command sets.
                let same_set = a.admin == b.admin
                    && !(a.name.starts_with("Memory") ^ b.name.starts_with("Memory"));
                assert!(
                    !(same_set && a.value == b.value),
                    "{} and {}",
                    a.name,
                    b.name
                );
            }
        }
    }

    #[test]
    fn only_generic_status_values_claim_to_be_ratified() {
        assert!(Status::InvalidField.ratified());
        assert!(!Status::ProgramTooBig.ratified());
        assert_eq!(
            Status::ProgramNotActivated.to_string(),
            "PROGRAM_NOT_ACTIVATED (SCT 1, SC 0xc6)"
        );
    }
}
