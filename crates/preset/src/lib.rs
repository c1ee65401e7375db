//! Presets: a machine's hardware and firmware parameters as one TOML document. The shared
//! layers come first — `[flash]` and `[ftl]` (the device), `[nvme]` (its NVMe front end and
//! PCIe link, as `nearflash io` drives it; the NVMe crate's cited defaults where the file is
//! silent), optionally `[write_cache]` (the drive's DRAM write buffer, `crates/wcache`; off
//! when absent), optionally `[host]` (the host's
//! storage stack and powers) and the conventional SSD of a baseline (`[ssd_flash]` with
//! `[ssd_ftl]`) — then one table per system the preset can run (`[accel]`, `[insider]`,
//! `[active_flash]`: see `system`), each typed by its system's config and validated on load.
//! Built-in presets are compiled in from `configs/`; any other TOML file can be named by path.
//! `--set table.field=value` overrides apply to the parsed document before it is checked, so
//! an override is validated exactly like the file and an error names the field.

mod error;
mod explain;
mod overrides;
mod parse;
pub mod system;

pub use error::{PresetError, ValidationError};
pub use explain::error_key;
pub use system::SystemTable;

use nearflash_flash::FlashConfig;
use nearflash_ftl::fdp::FdpConfig;
use nearflash_ftl::zns::ZnsConfig;
use nearflash_ftl::FtlConfig;
use nearflash_host::HostConfig;
use nearflash_nvme::NvmeConfig;
use nearflash_wcache::WriteCacheConfig;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::path::Path;

/// Built-in presets: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "flashabacus",
        include_str!("../../../configs/flashabacus.toml"),
    ),
    ("test-min", include_str!("../../../configs/test-min.toml")),
    ("insider", include_str!("../../../configs/insider.toml")),
    (
        "active-flash",
        include_str!("../../../configs/active-flash.toml"),
    ),
    (
        "ssd-970evo",
        include_str!("../../../configs/ssd-970evo.toml"),
    ),
    (
        "ssd-970evoplus",
        include_str!("../../../configs/ssd-970evoplus.toml"),
    ),
    ("hayagui", include_str!("../../../configs/hayagui.toml")),
];

/// The shared layers of a preset: everything but the system tables.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Layers {
    name: String,
    #[serde(default)]
    description: String,
    flash: FlashConfig,
    ftl: FtlConfig,
    nvme: NvmeConfig,
    #[serde(default)]
    write_cache: Option<WriteCacheConfig>,
    #[serde(default)]
    host: Option<HostConfig>,
    #[serde(default)]
    ssd_flash: Option<FlashConfig>,
    #[serde(default)]
    ssd_ftl: Option<FtlConfig>,
    #[serde(default)]
    ssd_nvme: Option<NvmeConfig>,
    #[serde(default)]
    zns: ZnsConfig,
    #[serde(default)]
    fdp: FdpConfig,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    pub flash: FlashConfig,
    /// The drive's firmware. Its `fdp` (Flexible Data Placement) is the preset's top-level
    /// `[fdp]` table (off unless `fdp.enabled`; `--set fdp.enabled=true` works on any
    /// preset whose FTL maps 4 KiB units), carried here so that every drive built from
    /// `ftl` has it.
    pub ftl: FtlConfig,
    /// The drive's DRAM write buffer (`[write_cache]`; disabled when the table is absent).
    /// A machine wraps its FTL in it unconditionally — a disabled buffer passes requests
    /// through: `WriteCache::new(preset.write_cache.clone(), dev)`.
    pub write_cache: WriteCacheConfig,
    /// The device's NVMe front end and PCIe link (`[nvme]`): what `nearflash io` puts between
    /// the host and the FTL unless `--interface bare`.
    pub nvme: NvmeConfig,
    /// The host: storage stack (syscall, copy costs), CPU and powers. Shared by the SIMD
    /// baseline of FlashAbacus and INSIDER's host-side systems.
    pub host: Option<HostConfig>,
    /// A baseline's discrete SSD (FlashAbacus's SIMD): its flash and FTL.
    pub ssd: Option<(FlashConfig, FtlConfig)>,
    /// That SSD's NVMe front end and PCIe link (`[ssd_nvme]`; the NVMe crate's cited
    /// defaults when the table is absent).
    pub ssd_nvme: NvmeConfig,
    /// Zoned namespace mode (`[zns]`; off unless `zns.enabled`): the drive exposes zones
    /// (`nearflash_ftl::zns`) instead of a conventional namespace.
    pub zns: ZnsConfig,
    /// The system tables present, by table name, each already validated by its type.
    systems: BTreeMap<&'static str, toml::Value>,
}

impl Preset {
    /// Loads a built-in preset by name or a TOML file by path (see `read_text`), then applies
    /// `overrides` (`table.field=value`).
    pub fn load(name_or_path: &str, overrides: &[String]) -> Result<Preset, PresetError> {
        let (source, text) = read_text(name_or_path)?;
        Self::parse(&source, &text, overrides)
    }

    /// The system table `T` if the preset has one.
    pub fn system<T: SystemTable>(&self) -> Option<T> {
        let value = self.systems.get(T::TABLE)?;
        let parsed = value
            .clone()
            .try_into()
            .expect("a system table is deserialised once when the preset loads");
        Some(parsed)
    }

    /// The system table `T`, or an error naming the preset and the table.
    pub fn require<T: SystemTable>(&self) -> Result<T, PresetError> {
        self.system::<T>().ok_or_else(|| PresetError::Missing {
            preset: self.name.clone(),
            table: T::TABLE,
            needed_by: T::NEEDED_BY,
        })
    }

    /// The `[host]` table, or an error saying what needs it.
    pub fn require_host(&self, needed_by: &'static str) -> Result<&HostConfig, PresetError> {
        self.host.as_ref().ok_or_else(|| PresetError::Missing {
            preset: self.name.clone(),
            table: "host",
            needed_by,
        })
    }

    /// The baseline's SSD (`[ssd_flash]` and `[ssd_ftl]`), or an error saying what needs it.
    pub fn require_ssd(
        &self,
        needed_by: &'static str,
    ) -> Result<(&FlashConfig, &FtlConfig), PresetError> {
        self.ssd
            .as_ref()
            .map(|(f, t)| (f, t))
            .ok_or_else(|| PresetError::Missing {
                preset: self.name.clone(),
                table: "ssd_flash",
                needed_by,
            })
    }

    /// The tables the preset carries beyond `[flash]`, `[ftl]` and `[nvme]` (every preset
    /// has those), in a fixed order: the shared layers, then the systems.
    pub fn tables(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.host.is_some() {
            v.push("host");
        }
        if self.ssd.is_some() {
            v.push("ssd");
        }
        v.extend(self.systems.keys().copied());
        v
    }
}

/// A preset serialises as the document it was parsed from (overrides applied): the shared
/// layers, then each system table as given.
impl Serialize for Preset {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("description", &self.description)?;
        m.serialize_entry("flash", &self.flash)?;
        m.serialize_entry("ftl", &self.ftl)?;
        if self.write_cache != WriteCacheConfig::default() {
            m.serialize_entry("write_cache", &self.write_cache)?;
        }
        m.serialize_entry("nvme", &self.nvme)?;
        if let Some(h) = &self.host {
            m.serialize_entry("host", h)?;
        }
        if let Some((f, t)) = &self.ssd {
            m.serialize_entry("ssd_flash", f)?;
            m.serialize_entry("ssd_ftl", t)?;
            m.serialize_entry("ssd_nvme", &self.ssd_nvme)?;
        }
        if self.zns != ZnsConfig::default() {
            m.serialize_entry("zns", &self.zns)?;
        }
        if !self.ftl.fdp.is_default() {
            m.serialize_entry("fdp", &self.ftl.fdp)?;
        }
        for (table, value) in &self.systems {
            m.serialize_entry(table, value)?;
        }
        m.end()
    }
}

/// The TOML text of a built-in preset by name, or of a file by path (anything containing a
/// path separator or ending in `.toml`), with a name for it to use in errors.
pub fn read_text(name_or_path: &str) -> Result<(String, String), PresetError> {
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        let text =
            std::fs::read_to_string(Path::new(name_or_path)).map_err(|e| PresetError::Read {
                path: name_or_path.to_string(),
                source: e,
            })?;
        return Ok((name_or_path.to_string(), text));
    }
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name_or_path)
        .map(|(_, t)| (format!("preset {name_or_path}"), t.to_string()))
        .ok_or_else(|| PresetError::Unknown {
            name: name_or_path.to_string(),
            known: BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_accel::AccelConfig;
    use nearflash_activeflash::ActiveFlashConfig;
    use nearflash_insider::InsiderConfig;

    /// Story (issue 28): a name field given a number in a preset file read "invalid type: unit
    /// variant, expected string only", naming neither what it takes nor what it got.
    #[test]
    fn a_name_field_of_the_wrong_type_names_the_key_and_the_names_it_takes() {
        let (_, text) = read_text("test-min").unwrap();
        let policy = "gc_policy = \"greedy\"";
        assert!(text.contains(policy));
        for (given, found) in [
            ("3", "an integer (3)"),
            ("true", "a boolean (true)"),
            ("[\"greedy\"]", "an array ([\"greedy\"])"),
            ("{}", "a table ({})"),
        ] {
            let bad = text.replace(policy, &format!("gc_policy = {given}"));
            let e = Preset::parse("p.toml", &bad, &[]).unwrap_err();
            assert!(matches!(e, PresetError::FieldType { .. }), "{e}");
            assert_eq!(
                e.to_string(),
                format!(
                    "p.toml: ftl.gc_policy must be one of `round-robin`, `greedy`, \
                     `cost-benefit`, not {found}"
                )
            );
        }
        // Through an override too (it was "ftl.gc_policy is a string, got a integer").
        let e = Preset::load("test-min", &["ftl.gc_policy=3".into()])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "preset test-min: ftl.gc_policy must be one of `round-robin`, `greedy`, \
             `cost-benefit`, not an integer (3)"
        );
        let e = Preset::load("test-min", &["flash.channels=two".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("flash.channels is an integer, got a string"),
            "{e}"
        );
        // In a system's own table too.
        let (_, text) = read_text("insider").unwrap();
        let bad = text.replace("engine = \"slots\"", "engine = 2");
        let e = Preset::parse("i.toml", &bad, &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("i.toml [insider]: insider.engine must be ")
                && e.ends_with("not an integer (2)"),
            "{e}"
        );
        // Other type errors already name the key and the type, and stay as they are.
        let (_, text) = read_text("test-min").unwrap();
        let bad = text.replace(policy, &format!("{policy}\nscratchpad_bytes_x = 1"));
        assert!(Preset::parse("p.toml", &bad, &[])
            .unwrap_err()
            .to_string()
            .contains("scratchpad_bytes_x"));
    }

    #[test]
    fn every_builtin_preset_parses_and_validates() {
        for (name, _) in BUILTIN {
            let p = Preset::load(name, &[]).expect(name);
            assert_eq!(&p.name, name);
        }
    }

    #[test]
    fn media_errors_are_off_in_every_preset_and_settable_as_a_nested_table() {
        for (name, _) in BUILTIN {
            assert!(
                !Preset::load(name, &[]).unwrap().flash.media.enabled,
                "{name}"
            );
        }
        let p = Preset::load(
            "test-min",
            &[
                "flash.media.enabled=true".into(),
                "flash.media.correctable_bits=72".into(),
            ],
        )
        .unwrap();
        assert!(p.flash.media.enabled);
        assert_eq!(p.flash.media.correctable_bits, 72);
        let e = Preset::load("test-min", &["flash.media.codeword_bytes=8".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.media.codeword_bytes"), "{e}");
    }

    /// Story: Hayagui's preset copied the 970 EVO's tables when the drive was page-group
    /// mapped, and kept that mapping after the 970 EVO moved to page-level mapping: "the same
    /// drive" under Hayagui was a different FTL. Its drive tables must equal the 970 EVO's.
    #[test]
    fn hayagui_drive_is_the_970_evo_preset_table_for_table() {
        let h = Preset::load("hayagui", &[]).unwrap();
        let e = Preset::load("ssd-970evo", &[]).unwrap();
        assert_eq!(h.flash, e.flash);
        assert_eq!(h.ftl, e.ftl);
        assert_eq!(h.write_cache, e.write_cache);
    }

    #[test]
    fn the_write_cache_table_is_optional_settable_and_checked_by_field() {
        let p = Preset::load("flashabacus", &[]).unwrap();
        assert!(!p.write_cache.enabled, "absent: off");
        let p = Preset::load("ssd-970evo", &[]).unwrap();
        assert!(p.write_cache.enabled);
        assert!(
            !p.write_cache.plp,
            "the 970 EVO has no power-loss protection"
        );
        let p = Preset::load("test-min", &["write_cache.enabled=true".into()]).unwrap();
        assert!(p.write_cache.enabled);
        let e = Preset::load("test-min", &["write_cache.unit_bytes=1000".into()]).unwrap_err();
        assert!(e.to_string().contains("write_cache.unit_bytes"), "{e}");
        // With PLP the hold-up must cover destaging a full buffer on this device.
        let e = Preset::load(
            "test-min",
            &[
                "write_cache.plp=true".into(),
                "write_cache.plp_holdup_us=1000".into(),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("write_cache.plp_holdup_us"), "{e}");
        // A preset serialises to a document that parses back to it.
        let p = Preset::load("ssd-970evo", &[]).unwrap();
        let text = toml::to_string(&p).unwrap();
        assert_eq!(
            Preset::parse("again", &text, &[]).unwrap().write_cache,
            p.write_cache
        );
    }

    /// Story: `nearflash cs run --set cs.slm_bytes=…` on a preset without a `[cs]` table said
    /// "the preset has no [cs] table", though an absent `[cs]` means its defaults.
    #[test]
    fn the_cs_table_is_settable_on_any_preset_and_checked_by_field() {
        use nearflash_cs::CsConfig;
        let p = Preset::load("ssd-970evo", &[]).unwrap();
        assert!(
            p.system::<CsConfig>().is_none(),
            "absent: the defaults, read as None"
        );
        let p = Preset::load("ssd-970evo", &["cs.slm_bytes=1048576".into()]).unwrap();
        let cs: CsConfig = p.system().unwrap();
        assert_eq!(cs.slm_bytes, 1 << 20);
        assert_eq!(
            cs.engines,
            CsConfig::default().engines,
            "the rest: defaults"
        );
        let e = Preset::load("ssd-970evo", &["cs.slm_bytes=0".into()]).unwrap_err();
        assert!(e.to_string().contains("slm_bytes"), "{e}");
        let e = Preset::load("ssd-970evo", &["cs.slm_byte=1".into()]).unwrap_err();
        assert!(e.to_string().contains("slm_byte"), "{e}");
        // A system whose absence means "not described" is still refused by name.
        let e = Preset::load("ssd-970evo", &["insider.slots=2".into()]).unwrap_err();
        assert!(e.to_string().contains("[insider]"), "{e}");
    }

    #[test]
    fn the_fdp_table_is_settable_on_any_preset_checked_by_field_and_reaches_the_ftl() {
        let p = Preset::load("ssd-970evo", &[]).unwrap();
        assert!(!p.ftl.fdp.enabled, "absent: off");
        // The 970 EVO's SLC cache mixes every handle's writes: FDP refuses it by name.
        let e = Preset::load("ssd-970evo", &["fdp.enabled=true".into()]).unwrap_err();
        assert!(e.to_string().contains("ftl.slc_cache.enabled"), "{e}");
        let p = Preset::load(
            "ssd-970evo",
            &[
                "ftl.slc_cache.enabled=false".into(),
                "fdp.enabled=true".into(),
                "fdp.handles=4".into(),
                "fdp.handle_type=\"persistently-isolated\"".into(),
            ],
        )
        .unwrap();
        assert!(p.ftl.fdp.enabled);
        assert_eq!(p.ftl.fdp.handles, 4);
        // It serialises as the top-level table and parses back.
        let text = toml::to_string(&p).unwrap();
        assert!(text.contains("[fdp]"), "{text}");
        assert_eq!(Preset::parse("again", &text, &[]).unwrap().ftl, p.ftl);
        // Page-group mapping keeps no 4 KiB units apart: refused, naming the field.
        let e = Preset::load("flashabacus", &["fdp.enabled=true".into()]).unwrap_err();
        assert!(e.to_string().contains("fdp.enabled"), "{e}");
        let e = Preset::load("ssd-970evo", &["fdp.handles=0".into()]).unwrap_err();
        assert!(e.to_string().contains("fdp.handles"), "{e}");
        let e = Preset::load("ssd-970evo", &["fdp.handle_count=2".into()]).unwrap_err();
        assert!(e.to_string().contains("handle_count"), "{e}");
        let e = Preset::load(
            "test-min",
            &[
                "ftl.mapping=\"page\"".into(),
                "fdp.enabled=true".into(),
                "fdp.handles=2".into(),
                "zns.enabled=true".into(),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("fdp.enabled"), "{e}");
    }

    #[test]
    fn the_host_page_cache_and_the_ssd_nvme_front_end_are_settable_and_checked() {
        let p = Preset::load(
            "flashabacus",
            &[
                "host.page_cache.capacity_bytes=268435456".into(),
                "ssd_nvme.queue_entries=64".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            p.host.as_ref().unwrap().page_cache.capacity_bytes,
            256 << 20
        );
        assert_eq!(p.ssd_nvme.queue_entries, 64);
        let dflt = Preset::load("flashabacus", &[]).unwrap();
        assert_eq!(dflt.ssd_nvme, NvmeConfig::default());
        let e = Preset::load(
            "flashabacus",
            &["host.page_cache.capacity_bytes=4096".into()],
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("host.page_cache.capacity_bytes"),
            "{e}"
        );
        let e = Preset::load("flashabacus", &["ssd_nvme.queue_entries=1".into()]).unwrap_err();
        assert!(e.to_string().contains("ssd_nvme.queue_entries"), "{e}");
        let (_, text) = read_text("test-min").unwrap();
        let e = Preset::parse(
            "t",
            &format!("{text}\n[ssd_nvme]\nqueue_entries = 64\n"),
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("[ssd_nvme] only with them"), "{e}");
    }

    #[test]
    fn flashabacus_preset_matches_table_1() {
        let p = Preset::load("flashabacus", &[]).unwrap();
        let f = &p.flash;
        assert_eq!(f.channels, 4);
        assert_eq!(f.channels * f.packages_per_channel, 16);
        assert_eq!(f.dies_per_package, 2);
        assert_eq!(f.page_size_bytes, 8192);
        let raw = u64::from(f.channels * f.packages_per_channel * f.dies_per_package)
            * u64::from(f.planes_per_die * f.blocks_per_plane * f.pages_per_block)
            * u64::from(f.page_size_bytes);
        assert_eq!(raw, 32 << 30);
        assert_eq!(f.planes_per_die * f.channels * f.page_size_bytes, 64 << 10);
    }

    #[test]
    fn flashabacus_accel_table_matches_table_1() {
        let p = Preset::load("flashabacus", &[]).unwrap();
        let a: AccelConfig = p.system().expect("flashabacus has an [accel] table");
        assert_eq!(a, AccelConfig::default());
        let e = Preset::load("flashabacus", &["accel.lwp_cpi=0".into()]).unwrap_err();
        assert!(e.to_string().contains("accel.lwp_cpi"), "{e}");
    }

    #[test]
    fn insider_preset_is_the_documented_drive() {
        let p = Preset::load("insider", &[]).unwrap();
        assert_eq!(p.system::<InsiderConfig>(), Some(InsiderConfig::default()));
        assert_eq!(p.host, Some(nearflash_insider::config::insider_host()));
        let e = Preset::load("insider", &["insider.credits_initial=0".into()]).unwrap_err();
        assert!(e.to_string().contains("insider.credits_initial"), "{e}");
        let e = Preset::load("insider", &["insider.pcie_lanes=3".into()]).unwrap_err();
        assert!(e.to_string().contains("insider.pcie_lanes"), "{e}");
    }

    #[test]
    fn active_flash_preset_has_its_engines_and_names_a_zero_clock() {
        let p = Preset::load("active-flash", &[]).unwrap();
        let a: ActiveFlashConfig = p
            .system()
            .expect("active-flash has an [active_flash] table");
        assert_eq!(a.controller_clock_mhz, 800.0);
        assert_eq!(p.flash.channels * p.flash.planes_per_die, 1);
        let e = Preset::load(
            "active-flash",
            &["active_flash.controller_clock_mhz=0".into()],
        )
        .unwrap_err();
        assert!(e.to_string().contains("controller_clock_mhz"), "{e}");
    }

    #[test]
    fn a_missing_system_table_is_named_with_what_needs_it() {
        let p = Preset::load("test-min", &[]).unwrap();
        assert_eq!(p.system::<InsiderConfig>(), None);
        let e = p.require::<InsiderConfig>().unwrap_err();
        assert!(e.to_string().contains("no [insider] table"), "{e}");
        let e = p.require_host("the test").unwrap_err();
        assert!(e.to_string().contains("no [host] table: the test"), "{e}");
        assert_eq!(p.tables(), vec!["accel"]);
    }

    #[test]
    fn a_cs_table_is_read_and_an_impossible_one_is_refused_naming_its_field() {
        let (_, text) = read_text("test-min").unwrap();
        let p = Preset::parse(
            "x.toml",
            &format!("{text}\n[cs]\nslm_bytes = 1048576\n"),
            &[],
        )
        .unwrap();
        let cs: nearflash_cs::CsConfig = p.system().unwrap();
        assert_eq!(cs.slm_bytes, 1 << 20);
        assert_eq!(cs.engines.len(), 3, "the engines keep their cited defaults");
        let e = Preset::parse("x.toml", &format!("{text}\n[cs]\nactivated_max = 0\n"), &[])
            .unwrap_err();
        assert!(e.to_string().contains("cs.activated_max"), "{e}");
    }

    #[test]
    fn unknown_tables_and_system_fields_are_named() {
        let (_, text) = read_text("test-min").unwrap();
        let e = Preset::parse("x.toml", &format!("{text}\n[nosuch]\na = 1\n"), &[]).unwrap_err();
        assert!(e.to_string().contains("nosuch"), "{e}");
        let e = Preset::load("flashabacus", &["accel.lwp_cpix=1".into()]).unwrap_err();
        assert!(
            e.to_string().contains("[accel]") && e.to_string().contains("lwp_cpix"),
            "{e}"
        );
    }

    #[test]
    fn half_an_ssd_is_refused() {
        let (_, text) = read_text("flashabacus").unwrap();
        let cut = text.find("[ssd_ftl]").unwrap();
        let e = Preset::parse("x.toml", &text[..cut], &[]).unwrap_err();
        assert!(e.to_string().contains("come together"), "{e}");
    }

    #[test]
    fn every_builtin_preset_round_trips_through_toml() {
        for (name, _) in BUILTIN {
            let p = Preset::load(name, &["flash.read_latency_us=30".into()]).unwrap();
            let text = toml::to_string(&p).expect(name);
            assert_eq!(Preset::parse(name, &text, &[]).unwrap(), p, "{name}");
        }
    }

    /// The 970 EVO preset is the 1 TB drive: 32 dies on 8 channels, 10^12 bytes of user
    /// capacity, and the TurboWrite cache on (6 GB static + 36 GB dynamic).
    #[test]
    fn ssd_970evo_is_a_1_tb_drive_with_its_slc_cache() {
        let p = Preset::load("ssd-970evo", &[]).unwrap();
        let geo = nearflash_flash::Geometry::from_config(&p.flash);
        assert_eq!((geo.channels, geo.die_count()), (8, 32));
        let raw = geo.page_count() * u64::from(p.flash.page_size_bytes);
        assert!(raw >= 1 << 40, "{raw}");
        let user = nearflash_ftl::Layout::new(&geo, &p.ftl).logical_bytes();
        assert!(
            (1_000_000_000_000..1_001_000_000_000).contains(&user),
            "{user}"
        );
        let c = &p.ftl.slc_cache;
        assert!(c.enabled);
        assert_eq!(
            (c.static_capacity_bytes, c.dynamic_capacity_max_bytes),
            (6_000_000_000, 36_000_000_000)
        );
        // Off by an override, like any field.
        let off = Preset::load("ssd-970evo", &["ftl.slc_cache.enabled=false".into()]).unwrap();
        assert!(!off.ftl.slc_cache.enabled);
    }

    /// Every preset has a front end for `nearflash io`: the 970 EVO's is its own PCIe 3.0 ×4
    /// link (the datasheet's interface), the others take the NVMe crate's cited defaults, and
    /// any preset's link can be overridden and is checked like the file.
    #[test]
    fn every_preset_has_an_nvme_front_end_and_the_970evo_is_pcie_3_x4() {
        let evo = Preset::load("ssd-970evo", &[]).unwrap();
        assert_eq!((evo.nvme.link.generation, evo.nvme.link.lanes), (3, 4));
        assert!((evo.nvme.link.payload_mb_s() - 3600.9).abs() < 0.1);
        let t = Preset::load("test-min", &[]).unwrap();
        assert_eq!(t.nvme, NvmeConfig::default());
        let wide = Preset::load("test-min", &["nvme.link.lanes=8".into()]).unwrap();
        assert_eq!(wide.nvme.link.lanes, 8);
        let e = Preset::load("test-min", &["nvme.link.lanes=3".into()]).unwrap_err();
        assert!(e.to_string().contains("nvme.link.lanes"), "{e}");
        let e = Preset::load("test-min", &["nvme.queue_entries=1".into()]).unwrap_err();
        assert!(e.to_string().contains("nvme.queue_entries"), "{e}");
    }

    /// The 970 EVO Plus preset is the 1 TB drive too: 32 dies of 9x-layer TLC on 8 channels,
    /// 10^12 bytes of user capacity, TurboWrite 6 GB static + 36 GB dynamic.
    #[test]
    fn ssd_970evoplus_is_a_1_tb_drive_with_its_slc_cache() {
        let p = Preset::load("ssd-970evoplus", &[]).unwrap();
        let geo = nearflash_flash::Geometry::from_config(&p.flash);
        assert_eq!((geo.channels, geo.die_count()), (8, 32));
        let user = nearflash_ftl::Layout::new(&geo, &p.ftl).logical_bytes();
        assert!(
            (1_000_000_000_000..1_001_000_000_000).contains(&user),
            "{user}"
        );
        let c = &p.ftl.slc_cache;
        assert!(c.enabled);
        assert_eq!(
            (c.static_capacity_bytes, c.dynamic_capacity_max_bytes),
            (6_000_000_000, 36_000_000_000)
        );
    }

    /// `ftl.mapping` takes `page-group` or `page`; anything else is refused naming the field,
    /// and page-level mapping on a geometry it cannot hold names what is wrong.
    #[test]
    fn a_wrong_mapping_is_refused_naming_the_field() {
        let e = Preset::load("test-min", &["ftl.mapping=sideways".into()]).unwrap_err();
        assert!(e.to_string().contains("mapping"), "{e}");
        let ok = Preset::load("test-min", &["ftl.mapping=page".into()]).unwrap();
        assert_eq!(ok.ftl.mapping, nearflash_ftl::MappingMode::Page);
        let e = Preset::load(
            "test-min",
            &["ftl.mapping=page".into(), "flash.oob_size_bytes=16".into()],
        )
        .unwrap_err();
        assert!(e.to_string().contains("oob_size_bytes"), "{e}");
    }

    #[test]
    fn unknown_field_is_named() {
        let e = Preset::load("test-min", &["flash.chanels=4".into()]).unwrap_err();
        assert!(e.to_string().contains("chanels"), "{e}");
    }

    #[test]
    fn zero_rate_is_named() {
        let e = Preset::load("test-min", &["flash.channel_rate_mb_s=0".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.channel_rate_mb_s"), "{e}");
    }

    #[test]
    fn impossible_geometry_is_named() {
        let e = Preset::load("test-min", &["flash.planes_per_die=9".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.planes_per_die"), "{e}");
        let e = Preset::load("test-min", &["flash.blocks_per_plane=3".into()]).unwrap_err();
        assert!(e.to_string().contains("blocks_per_plane"), "{e}");
    }

    #[test]
    fn overrides_change_values_and_keep_types() {
        let p = Preset::load(
            "test-min",
            &[
                "flash.read_latency_us=50".into(),
                "ftl.gc_policy=cost-benefit".into(),
            ],
        )
        .unwrap();
        assert_eq!(p.flash.read_latency_us, 50.0);
        assert_eq!(p.ftl.gc_policy, nearflash_ftl::GcPolicy::CostBenefit);
        let e = Preset::load("test-min", &["flash.channels=two".into()]).unwrap_err();
        assert!(e.to_string().contains("flash.channels"), "{e}");
        let e = Preset::load("test-min", &["nochannels".into()]).unwrap_err();
        assert!(e.to_string().contains("table.field=value"), "{e}");
    }

    #[test]
    fn malformed_toml_is_an_error_naming_the_source() {
        let e = Preset::parse("my.toml", "name = \"x\"\n[flash\n", &[]).unwrap_err();
        assert!(e.to_string().contains("my.toml"), "{e}");
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let e = Preset::load("nosuch", &[]).unwrap_err();
        assert!(e.to_string().contains("flashabacus"), "{e}");
    }
}
