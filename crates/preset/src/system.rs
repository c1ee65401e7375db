//! A system's own table in a preset (`[accel]`, `[insider]`, `[active_flash]`, `[hayagui]`): typed by the
//! system's config struct, validated by it when the preset loads, and read back by the
//! commands that need that system. Adding a system is one `SystemTable` impl and one line in
//! `SYSTEMS`; the preset struct does not grow a field per paper.

use crate::error::ValidationError;
use nearflash_accel::AccelConfig;
use nearflash_activeflash::ActiveFlashConfig;
use nearflash_cs::CsConfig;
use nearflash_hayagui::HayaguiConfig;
use nearflash_insider::InsiderConfig;
use serde::de::DeserializeOwned;

/// The config of one system, stored as the preset's `[TABLE]`.
pub trait SystemTable: DeserializeOwned {
    /// The TOML table name.
    const TABLE: &'static str;
    /// What reads the table, for the error when a preset lacks it.
    const NEEDED_BY: &'static str;
    /// Checks the values (the error names the field).
    fn validate_table(&self) -> Result<(), ValidationError>;
    /// Whether a preset without the table means the table's defaults (so `--set TABLE.field=…`
    /// works on any preset), rather than "this preset does not describe the system".
    const DEFAULT_WHEN_ABSENT: bool = false;
}

impl SystemTable for AccelConfig {
    const TABLE: &'static str = "accel";
    const NEEDED_BY: &'static str =
        "FlashAbacus (the accelerator's LWPs, DDR3L, PCIe and hardware queues)";
    fn validate_table(&self) -> Result<(), ValidationError> {
        Ok(self.validate()?)
    }
}

impl SystemTable for InsiderConfig {
    const TABLE: &'static str = "insider";
    const NEEDED_BY: &'static str =
        "INSIDER (the drive around the flash: backing, PCIe, ISC unit, engines)";
    fn validate_table(&self) -> Result<(), ValidationError> {
        Ok(self.validate()?)
    }
}

impl SystemTable for ActiveFlashConfig {
    const TABLE: &'static str = "active_flash";
    const NEEDED_BY: &'static str = "Active Flash (the controller and host engines)";
    fn validate_table(&self) -> Result<(), ValidationError> {
        Ok(self.validate()?)
    }
}

impl SystemTable for HayaguiConfig {
    const TABLE: &'static str = "hayagui";
    const NEEDED_BY: &'static str =
        "Hayagui (the Vector Engine, AccelFS, the redirected path's costs, the SSD's NVMe front end)";
    fn validate_table(&self) -> Result<(), ValidationError> {
        Ok(self.validate()?)
    }
}

impl SystemTable for CsConfig {
    const TABLE: &'static str = "cs";
    const NEEDED_BY: &'static str =
        "computational storage (NVMe Computational Programs and Subsystem Local Memory: engines, SLM, limits)";
    // Every drive can take the command sets: absent, the table is its defaults.
    const DEFAULT_WHEN_ABSENT: bool = true;
    fn validate_table(&self) -> Result<(), ValidationError> {
        Ok(self.validate()?)
    }
}

/// One known system table: its name and how to check a parsed table of it.
pub struct SystemEntry {
    pub table: &'static str,
    /// `SystemTable::DEFAULT_WHEN_ABSENT`.
    pub default_when_absent: bool,
    pub check: fn(toml::Value) -> Result<(), CheckError>,
}

/// Why a system table was refused: it did not deserialise, or its values are impossible.
pub enum CheckError {
    Toml(toml::de::Error),
    Invalid(ValidationError),
}

const fn entry<T: SystemTable>() -> SystemEntry {
    SystemEntry {
        table: T::TABLE,
        default_when_absent: T::DEFAULT_WHEN_ABSENT,
        check: check::<T>,
    }
}

fn check<T: SystemTable>(value: toml::Value) -> Result<(), CheckError> {
    let parsed: T = value.try_into().map_err(CheckError::Toml)?;
    parsed.validate_table().map_err(CheckError::Invalid)
}

/// Every system table a preset may carry.
pub const SYSTEMS: &[SystemEntry] = &[
    entry::<AccelConfig>(),
    entry::<InsiderConfig>(),
    entry::<ActiveFlashConfig>(),
    entry::<HayaguiConfig>(),
    entry::<CsConfig>(),
];
