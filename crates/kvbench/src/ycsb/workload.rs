//! YCSB's core workload parameters (CoreWorkload's properties) and the shipped workloads A–F
//! (`workloads/workload[a-f]`).

use crate::error::KvBenchError;
use serde::{Deserialize, Serialize};

/// `requestdistribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RequestDistribution {
    /// Uniform over the loaded records.
    Uniform,
    /// Scrambled zipfian (θ = 0.99) over records plus expected inserts.
    Zipfian,
    /// Skewed towards the most recently inserted record.
    Latest,
}

/// `insertorder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InsertOrder {
    /// Key number hashed with FNV-64 (the default).
    Hashed,
    /// Key number as is.
    Ordered,
}

/// A core workload's operation mix and distributions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreWorkload {
    /// `readproportion`.
    pub read_proportion: f64,
    /// `updateproportion`.
    pub update_proportion: f64,
    /// `insertproportion`.
    pub insert_proportion: f64,
    /// `scanproportion`.
    pub scan_proportion: f64,
    /// `readmodifywriteproportion`.
    pub read_modify_write_proportion: f64,
    /// `requestdistribution`.
    pub request_distribution: RequestDistribution,
    /// `minscanlength` (scan lengths are uniform in [min, max]).
    pub min_scan_length: i64,
    /// `maxscanlength`.
    pub max_scan_length: i64,
}

impl CoreWorkload {
    fn mix(
        read: f64,
        update: f64,
        insert: f64,
        scan: f64,
        rmw: f64,
        dist: RequestDistribution,
    ) -> Self {
        Self {
            read_proportion: read,
            update_proportion: update,
            insert_proportion: insert,
            scan_proportion: scan,
            read_modify_write_proportion: rmw,
            request_distribution: dist,
            min_scan_length: 1,
            max_scan_length: 1000,
        }
    }

    /// A: read 50 / update 50, zipfian (session store).
    pub fn a() -> Self {
        Self::mix(0.5, 0.5, 0.0, 0.0, 0.0, RequestDistribution::Zipfian)
    }
    /// B: read 95 / update 5, zipfian (photo tagging).
    pub fn b() -> Self {
        Self::mix(0.95, 0.05, 0.0, 0.0, 0.0, RequestDistribution::Zipfian)
    }
    /// C: read 100, zipfian (profile cache).
    pub fn c() -> Self {
        Self::mix(1.0, 0.0, 0.0, 0.0, 0.0, RequestDistribution::Zipfian)
    }
    /// D: read 95 / insert 5, latest (status updates).
    pub fn d() -> Self {
        Self::mix(0.95, 0.0, 0.05, 0.0, 0.0, RequestDistribution::Latest)
    }
    /// E: scan 95 / insert 5, zipfian start keys, scan lengths uniform in 1..=100.
    pub fn e() -> Self {
        Self {
            max_scan_length: 100,
            ..Self::mix(0.0, 0.0, 0.05, 0.95, 0.0, RequestDistribution::Zipfian)
        }
    }
    /// F: read 50 / read-modify-write 50, zipfian (user database).
    pub fn f() -> Self {
        Self::mix(0.5, 0.0, 0.0, 0.0, 0.5, RequestDistribution::Zipfian)
    }

    /// The workload named by its letter (`a`–`f`, either case).
    pub fn named(letter: &str) -> Result<Self, KvBenchError> {
        match letter.to_ascii_lowercase().as_str() {
            "a" => Ok(Self::a()),
            "b" => Ok(Self::b()),
            "c" => Ok(Self::c()),
            "d" => Ok(Self::d()),
            "e" => Ok(Self::e()),
            "f" => Ok(Self::f()),
            _ => Err(KvBenchError::InvalidConfig {
                field: "workload",
                value: letter.to_string(),
                reason: "must be one of a, b, c, d, e, f",
            }),
        }
    }
}

/// Everything a YCSB run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct YcsbConfig {
    /// The operation mix.
    pub workload: CoreWorkload,
    /// `recordcount`: records inserted by the load phase.
    pub record_count: i64,
    /// `operationcount`: operations of the run phase.
    pub operation_count: i64,
    /// `fieldcount` (10).
    pub field_count: u32,
    /// `fieldlength` (100, constant).
    pub field_length_bytes: u32,
    /// `insertorder` (hashed).
    pub insert_order: InsertOrder,
    /// `zeropadding` (1).
    pub zero_padding: u32,
    /// Seed of the run's one random stream.
    pub seed: u64,
    /// Keep an in-memory model and verify every read and scan against it.
    pub check: bool,
}

impl YcsbConfig {
    /// `workload` with YCSB's defaults and the shipped 1000 records / 1000 operations.
    pub fn new(workload: CoreWorkload, seed: u64) -> Self {
        Self {
            workload,
            record_count: 1000,
            operation_count: 1000,
            field_count: 10,
            field_length_bytes: 100,
            insert_order: InsertOrder::Hashed,
            zero_padding: 1,
            seed,
            check: false,
        }
    }

    /// Checks every field, naming the first bad one.
    pub fn validate(&self) -> Result<(), KvBenchError> {
        let invalid = |field, value: String, reason| {
            Err(KvBenchError::InvalidConfig {
                field,
                value,
                reason,
            })
        };
        let w = &self.workload;
        if self.record_count < 1 || self.record_count > i64::from(i32::MAX) / 2 {
            return invalid(
                "record_count",
                self.record_count.to_string(),
                "must be in 1..=1073741823",
            );
        }
        if w.request_distribution == RequestDistribution::Latest && self.record_count < 2 {
            return invalid(
                "record_count",
                self.record_count.to_string(),
                "latest needs at least 2 records",
            );
        }
        if self.operation_count < 0 || self.operation_count > i64::from(i32::MAX) / 2 {
            return invalid(
                "operation_count",
                self.operation_count.to_string(),
                "must be in 0..=1073741823",
            );
        }
        if self.field_count < 1 || self.field_count > 1000 {
            return invalid(
                "field_count",
                self.field_count.to_string(),
                "must be in 1..=1000",
            );
        }
        if self.field_length_bytes > 1 << 20 {
            return invalid(
                "field_length_bytes",
                self.field_length_bytes.to_string(),
                "must be at most 1 MiB",
            );
        }
        if self.zero_padding > 64 {
            return invalid(
                "zero_padding",
                self.zero_padding.to_string(),
                "must be at most 64",
            );
        }
        let proportions = [
            ("read_proportion", w.read_proportion),
            ("update_proportion", w.update_proportion),
            ("insert_proportion", w.insert_proportion),
            ("scan_proportion", w.scan_proportion),
            (
                "read_modify_write_proportion",
                w.read_modify_write_proportion,
            ),
        ];
        for (field, p) in proportions {
            if !(p.is_finite() && p >= 0.0) {
                return invalid(field, p.to_string(), "must be a finite non-negative number");
            }
        }
        if proportions.iter().all(|(_, p)| *p == 0.0) && self.operation_count > 0 {
            return invalid(
                "read_proportion",
                "0".into(),
                "some proportion must be positive",
            );
        }
        if w.min_scan_length < 1 || w.max_scan_length < w.min_scan_length {
            return invalid(
                "max_scan_length",
                format!("{}..={}", w.min_scan_length, w.max_scan_length),
                "scan lengths must satisfy 1 <= min <= max",
            );
        }
        Ok(())
    }
}
