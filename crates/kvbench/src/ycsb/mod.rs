//! YCSB's core workloads over rusty-leveldb: the load phase (insert `record_count` records) and
//! the run phase (`operation_count` operations of the workload's mix), with YCSB's key naming,
//! generators and measurements, and an optional checker that keeps a model of every record.
//!
//! DB semantics follow YCSB's LevelDB/RocksDB bindings: a record is one value (see `record`);
//! `update` of one field reads the record, replaces the field and writes it back;
//! `read-modify-write` is a read followed by such an update; `scan` seeks to the start key and
//! reads up to `len` records. As YCSB's `DBWrapper` does, READ/UPDATE/INSERT/SCAN latencies are
//! measured per DB call (so workload F's READ figures include the reads inside
//! READ-MODIFY-WRITE), and READ-MODIFY-WRITE is measured around the pair.
//!
//! Check mode never changes the figures: mismatches are counted in `CheckReport` only.

pub mod generators;
pub mod record;
pub mod workload;

use crate::drive::{BenchClock, DbOp, OpHook};
use crate::error::KvBenchError;
use crate::histogram::{LatencyHistogram, LatencySummary};
use generators::{
    fnvhash64, AcknowledgedCounter, Discrete, ScrambledZipfian, SkewedLatest, UniformLong, YcsbRng,
};
use rand::{RngCore, SeedableRng};
use record::{decode_record, encode_record};
use rusty_leveldb::{LdbIterator, WriteBatch, DB};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use workload::{InsertOrder, RequestDistribution, YcsbConfig};

/// YCSB's operation types as its measurements name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum YcsbOp {
    /// READ.
    Read,
    /// UPDATE.
    Update,
    /// INSERT.
    Insert,
    /// SCAN.
    Scan,
    /// READ-MODIFY-WRITE.
    ReadModifyWrite,
}

impl YcsbOp {
    /// YCSB's name.
    pub fn name(self) -> &'static str {
        match self {
            YcsbOp::Read => "READ",
            YcsbOp::Update => "UPDATE",
            YcsbOp::Insert => "INSERT",
            YcsbOp::Scan => "SCAN",
            YcsbOp::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
    const ALL: [YcsbOp; 5] = [
        YcsbOp::Read,
        YcsbOp::Update,
        YcsbOp::Insert,
        YcsbOp::Scan,
        YcsbOp::ReadModifyWrite,
    ];
}

/// One generated operation, before it touches the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transaction {
    /// Read every field of `key`.
    Read {
        /// The key.
        key: Vec<u8>,
    },
    /// Replace field `field` of `key`.
    Update {
        /// The key.
        key: Vec<u8>,
        /// Field index.
        field: usize,
        /// New value.
        value: Vec<u8>,
    },
    /// Insert a new record.
    Insert {
        /// The key.
        key: Vec<u8>,
        /// All field values.
        fields: Vec<Vec<u8>>,
    },
    /// Read up to `len` records from `start`.
    Scan {
        /// The first key.
        start: Vec<u8>,
        /// Records to read.
        len: usize,
    },
    /// Read `key`, then replace field `field`.
    ReadModifyWrite {
        /// The key.
        key: Vec<u8>,
        /// Field index.
        field: usize,
        /// New value.
        value: Vec<u8>,
    },
}

/// Figures for one operation type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpReport {
    /// The operation type.
    pub op: YcsbOp,
    /// Operations measured.
    pub count: u64,
    /// Operations that found no record (YCSB's `NOT_FOUND`).
    pub not_found: u64,
    /// Latency percentiles.
    pub latency: LatencySummary,
}

/// What the checker saw; mismatches are never folded into the figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Reads compared with the model.
    pub reads_checked: u64,
    /// Scans compared with the model.
    pub scans_checked: u64,
    /// Reads or scans whose result differed from the model.
    pub mismatches: u64,
    /// A description of the first mismatch.
    pub first_mismatch: Option<String>,
}

/// One phase's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseReport {
    /// "load" or "run".
    pub phase: String,
    /// Operations performed.
    pub operations: u64,
    /// Time between the phase's first and last clock readings.
    pub elapsed_us: f64,
    /// Operations per second of clock time.
    pub throughput_ops_per_s: f64,
    /// Per operation type, for the types that occurred.
    pub per_op: Vec<OpReport>,
    /// The checker's counts, in check mode.
    pub check: Option<CheckReport>,
}

enum KeyChooser {
    Uniform(UniformLong),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
}

/// A YCSB client over one database: its generators, its random stream and (in check mode) the
/// model of every record written.
pub struct Ycsb {
    config: YcsbConfig,
    field_names: Vec<String>,
    rng: YcsbRng,
    load_next: i64,
    inserts: AcknowledgedCounter,
    key_chooser: KeyChooser,
    field_chooser: UniformLong,
    scan_length: UniformLong,
    operations: Discrete<YcsbOp>,
    model: Option<BTreeMap<Vec<u8>, Vec<Vec<u8>>>>,
    check: CheckReport,
    loaded: bool,
    ran: bool,
}

/// `CoreWorkload.buildKeyName`: "user" + zero-padded decimal of the (hashed) key number.
pub fn build_key_name(key_number: i64, zero_padding: u32, order: InsertOrder) -> String {
    let n = match order {
        InsertOrder::Hashed => fnvhash64(key_number),
        InsertOrder::Ordered => key_number,
    };
    let digits = n.to_string();
    let fill = (zero_padding as usize).saturating_sub(digits.len());
    format!("user{}{digits}", "0".repeat(fill))
}

/// Per-phase measurement state.
struct Meter {
    hist: Vec<LatencyHistogram>,
    not_found: [u64; 5],
    operations: u64,
}

impl Meter {
    fn new() -> Self {
        Self {
            hist: (0..5).map(|_| LatencyHistogram::default()).collect(),
            not_found: [0; 5],
            operations: 0,
        }
    }
    fn record(&mut self, op: YcsbOp, latency_us: f64) {
        self.hist[op as usize].record((latency_us * 1000.0).round().max(0.0) as u64);
    }
    fn report(self, phase: &str, elapsed_us: f64, check: Option<CheckReport>) -> PhaseReport {
        let per_op = YcsbOp::ALL
            .iter()
            .filter(|op| self.hist[**op as usize].count() > 0)
            .map(|&op| OpReport {
                op,
                count: self.hist[op as usize].count(),
                not_found: self.not_found[op as usize],
                latency: LatencySummary::of(&self.hist[op as usize]),
            })
            .collect();
        PhaseReport {
            phase: phase.to_string(),
            operations: self.operations,
            elapsed_us,
            throughput_ops_per_s: if elapsed_us > 0.0 {
                self.operations as f64 / (elapsed_us * 1e-6)
            } else {
                0.0
            },
            per_op,
            check,
        }
    }
}

/// The context an operation runs in.
struct Ctx<'a> {
    db: &'a mut DB,
    clock: &'a dyn BenchClock,
    hook: &'a mut dyn OpHook,
    meter: Meter,
}

impl Ycsb {
    /// Validates `config` and builds the generators in CoreWorkload's order (the zipfian and
    /// latest choosers draw from the stream while being built, as YCSB's constructors do).
    pub fn new(config: YcsbConfig) -> Result<Self, KvBenchError> {
        config.validate()?;
        let mut rng = YcsbRng::seed_from_u64(config.seed);
        let w = &config.workload;
        let record_count = config.record_count;
        let inserts = AcknowledgedCounter::new(record_count);
        let key_chooser = match w.request_distribution {
            RequestDistribution::Uniform => {
                KeyChooser::Uniform(UniformLong::new(0, record_count - 1))
            }
            RequestDistribution::Zipfian => {
                // `(int) (opcount * insertproportion * 2.0)`, 2 being YCSB's fudge factor.
                let expected_new_keys =
                    (config.operation_count as f64 * w.insert_proportion * 2.0) as i64;
                KeyChooser::Zipfian(ScrambledZipfian::new(
                    0,
                    record_count + expected_new_keys,
                    &mut rng,
                ))
            }
            RequestDistribution::Latest => {
                KeyChooser::Latest(SkewedLatest::new(&inserts, &mut rng))
            }
        };
        let mix = [
            (w.read_proportion, YcsbOp::Read),
            (w.update_proportion, YcsbOp::Update),
            (w.insert_proportion, YcsbOp::Insert),
            (w.scan_proportion, YcsbOp::Scan),
            (w.read_modify_write_proportion, YcsbOp::ReadModifyWrite),
        ];
        let mix: Vec<_> = mix.into_iter().filter(|(p, _)| *p > 0.0).collect();
        let operations = Discrete::new(if mix.is_empty() {
            vec![(1.0, YcsbOp::Read)] // operation_count is 0 (validated)
        } else {
            mix
        });
        Ok(Self {
            field_names: (0..config.field_count)
                .map(|i| format!("field{i}"))
                .collect(),
            field_chooser: UniformLong::new(0, i64::from(config.field_count) - 1),
            scan_length: UniformLong::new(w.min_scan_length, w.max_scan_length),
            model: config.check.then(BTreeMap::new),
            check: CheckReport::default(),
            rng,
            load_next: 0,
            inserts,
            key_chooser,
            operations,
            config,
            loaded: false,
            ran: false,
        })
    }

    /// The field names, field0..field{n−1}.
    pub fn field_names(&self) -> &[String] {
        &self.field_names
    }

    fn key(&self, key_number: i64) -> Vec<u8> {
        build_key_name(
            key_number,
            self.config.zero_padding,
            self.config.insert_order,
        )
        .into_bytes()
    }

    /// A field value: printable ASCII (' '..='~'), eight characters per 64-bit draw.
    fn value(&mut self) -> Vec<u8> {
        let len = self.config.field_length_bytes as usize;
        let mut v = Vec::with_capacity(len + 8);
        while v.len() < len {
            let bits = self.rng.next_u64();
            v.extend(bits.to_le_bytes().iter().map(|b| b' ' + b % 95));
        }
        v.truncate(len);
        v
    }

    fn values(&mut self) -> Vec<Vec<u8>> {
        (0..self.config.field_count).map(|_| self.value()).collect()
    }

    /// `nextKeynum`: draw until the key number has been inserted and acknowledged.
    fn next_key_number(&mut self) -> i64 {
        loop {
            let k = match &mut self.key_chooser {
                KeyChooser::Uniform(g) => g.next_value(&mut self.rng),
                KeyChooser::Zipfian(g) => g.next_value(&mut self.rng),
                KeyChooser::Latest(g) => g.next_value(&self.inserts, &mut self.rng),
            };
            // Java's `.intValue()`; key numbers stay below 2³¹ (validated counts).
            let k = i64::from(k as i32);
            if k <= self.inserts.last_value() {
                return k;
            }
        }
    }

    /// The next run-phase operation (`doTransaction`'s choices). Inserts are acknowledged as
    /// they are generated, which for one client equals acknowledging when they complete.
    pub fn next_transaction(&mut self) -> Transaction {
        match self.operations.next_value(&mut self.rng) {
            YcsbOp::Read => {
                let k = self.next_key_number();
                Transaction::Read { key: self.key(k) }
            }
            op @ (YcsbOp::Update | YcsbOp::ReadModifyWrite) => {
                let k = self.next_key_number();
                let key = self.key(k);
                let field = self.field_chooser.next_value(&mut self.rng) as usize;
                let value = self.value();
                if op == YcsbOp::Update {
                    Transaction::Update { key, field, value }
                } else {
                    Transaction::ReadModifyWrite { key, field, value }
                }
            }
            YcsbOp::Insert => {
                let k = self.inserts.next_value();
                let key = self.key(k);
                let fields = self.values();
                self.inserts.acknowledge(k);
                Transaction::Insert { key, fields }
            }
            YcsbOp::Scan => {
                let k = self.next_key_number();
                let len = self.scan_length.next_value(&mut self.rng) as usize;
                Transaction::Scan {
                    start: self.key(k),
                    len,
                }
            }
        }
    }

    /// The load phase: insert records 0..record_count in order (`doInsert`). Call once, before
    /// `run`.
    pub fn load(
        &mut self,
        db: &mut DB,
        clock: &dyn BenchClock,
        hook: &mut dyn OpHook,
    ) -> Result<PhaseReport, KvBenchError> {
        assert!(!self.loaded, "load runs once");
        self.loaded = true;
        let mut ctx = Ctx {
            db,
            clock,
            hook,
            meter: Meter::new(),
        };
        let start_us = clock.now_us();
        while self.load_next < self.config.record_count {
            let key = self.key(self.load_next);
            let fields = self.values();
            self.load_next += 1;
            self.insert(&mut ctx, key, fields)?;
            ctx.meter.operations += 1;
        }
        let elapsed_us = clock.now_us() - start_us;
        let check = self.model.as_ref().map(|_| self.check.clone());
        Ok(ctx.meter.report("load", elapsed_us, check))
    }

    /// The run phase: `operation_count` transactions. Call once, after `load` (or over a
    /// database a previous `load` with the same configuration filled — without the model).
    pub fn run(
        &mut self,
        db: &mut DB,
        clock: &dyn BenchClock,
        hook: &mut dyn OpHook,
    ) -> Result<PhaseReport, KvBenchError> {
        assert!(!self.ran, "run runs once");
        self.ran = true;
        let mut ctx = Ctx {
            db,
            clock,
            hook,
            meter: Meter::new(),
        };
        let start_us = clock.now_us();
        for _ in 0..self.config.operation_count {
            let t = self.next_transaction();
            self.execute(&mut ctx, t)?;
            ctx.meter.operations += 1;
        }
        let elapsed_us = clock.now_us() - start_us;
        let check = self.model.as_ref().map(|_| self.check.clone());
        Ok(ctx.meter.report("run", elapsed_us, check))
    }

    /// The checker's counts so far (all zero outside check mode).
    pub fn check_report(&self) -> &CheckReport {
        &self.check
    }

    fn execute(&mut self, ctx: &mut Ctx<'_>, t: Transaction) -> Result<(), KvBenchError> {
        match t {
            Transaction::Read { key } => {
                self.read(ctx, &key)?;
            }
            Transaction::Update { key, field, value } => self.update(ctx, &key, field, value)?,
            Transaction::Insert { key, fields } => self.insert(ctx, key, fields)?,
            Transaction::Scan { start, len } => self.scan(ctx, &start, len)?,
            Transaction::ReadModifyWrite { key, field, value } => {
                let start_us = ctx.clock.now_us();
                self.read(ctx, &key)?;
                self.update(ctx, &key, field, value)?;
                let end_us = ctx.clock.now_us();
                ctx.meter.record(YcsbOp::ReadModifyWrite, end_us - start_us);
            }
        }
        Ok(())
    }

    fn mismatch(&mut self, what: String) {
        self.check.mismatches += 1;
        if self.check.first_mismatch.is_none() {
            self.check.first_mismatch = Some(what);
        }
    }

    fn get(ctx: &mut Ctx<'_>, key: &[u8]) -> Option<Vec<u8>> {
        ctx.hook.before(DbOp::Get);
        let v = ctx.db.get(key).map(|b| b.to_vec());
        ctx.hook.after(
            DbOp::Get,
            v.as_ref().map_or(0, |v| (key.len() + v.len()) as u64),
        );
        v
    }

    fn put(ctx: &mut Ctx<'_>, key: &[u8], value: &[u8]) -> Result<(), KvBenchError> {
        let op = DbOp::Write {
            entries: 1,
            sync: false,
        };
        let mut batch = WriteBatch::default();
        batch.put(key, value);
        ctx.hook.before(op);
        ctx.db
            .write(batch, false)
            .map_err(KvBenchError::db("put"))?;
        ctx.hook.after(op, (key.len() + value.len()) as u64);
        Ok(())
    }

    /// READ: get and decode all fields; check against the model.
    fn read(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: &[u8],
    ) -> Result<Option<Vec<Vec<u8>>>, KvBenchError> {
        let start_us = ctx.clock.now_us();
        let raw = Self::get(ctx, key);
        let fields = match &raw {
            Some(bytes) => Some(decode_record(key, &self.field_names, bytes)?),
            None => None,
        };
        let end_us = ctx.clock.now_us();
        ctx.meter.record(YcsbOp::Read, end_us - start_us);
        if fields.is_none() {
            ctx.meter.not_found[YcsbOp::Read as usize] += 1;
        }
        if let Some(model) = &self.model {
            self.check.reads_checked += 1;
            if model.get(key) != fields.as_ref() {
                let k = String::from_utf8_lossy(key).into_owned();
                self.mismatch(format!(
                    "read {k}: found {} but the model differs",
                    fields.is_some()
                ));
            }
        }
        Ok(fields)
    }

    /// UPDATE of one field: read the record, replace the field, write it back.
    fn update(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: &[u8],
        field: usize,
        value: Vec<u8>,
    ) -> Result<(), KvBenchError> {
        let start_us = ctx.clock.now_us();
        let found = match Self::get(ctx, key) {
            Some(bytes) => {
                let mut fields = decode_record(key, &self.field_names, &bytes)?;
                fields[field] = value;
                let mut buf = Vec::new();
                encode_record(&self.field_names, &fields, &mut buf);
                Self::put(ctx, key, &buf)?;
                if let Some(model) = &mut self.model {
                    model.insert(key.to_vec(), fields);
                }
                true
            }
            None => false,
        };
        let end_us = ctx.clock.now_us();
        ctx.meter.record(YcsbOp::Update, end_us - start_us);
        if !found {
            ctx.meter.not_found[YcsbOp::Update as usize] += 1;
        }
        Ok(())
    }

    fn insert(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: Vec<u8>,
        fields: Vec<Vec<u8>>,
    ) -> Result<(), KvBenchError> {
        let mut buf = Vec::new();
        encode_record(&self.field_names, &fields, &mut buf);
        let start_us = ctx.clock.now_us();
        Self::put(ctx, &key, &buf)?;
        let end_us = ctx.clock.now_us();
        ctx.meter.record(YcsbOp::Insert, end_us - start_us);
        if let Some(model) = &mut self.model {
            model.insert(key, fields);
        }
        Ok(())
    }

    /// SCAN: seek to `start` and read up to `len` records.
    fn scan(&mut self, ctx: &mut Ctx<'_>, start: &[u8], len: usize) -> Result<(), KvBenchError> {
        let start_us = ctx.clock.now_us();
        ctx.hook.before(DbOp::NewIterator);
        let mut it = ctx
            .db
            .new_iter()
            .map_err(KvBenchError::db("new iterator"))?;
        ctx.hook.after(DbOp::NewIterator, 0);
        ctx.hook.before(DbOp::Seek);
        it.seek(start);
        ctx.hook.after(DbOp::Seek, entry_len(&it));
        let mut got: Vec<(Vec<u8>, Vec<Vec<u8>>)> = Vec::with_capacity(len.min(1024));
        while got.len() < len {
            let Some((k, v)) = it.current() else { break };
            let fields = decode_record(&k, &self.field_names, &v)?;
            got.push((k.to_vec(), fields));
            if got.len() < len {
                ctx.hook.before(DbOp::Next);
                it.advance();
                ctx.hook.after(DbOp::Next, entry_len(&it));
            }
        }
        drop(it);
        let end_us = ctx.clock.now_us();
        ctx.meter.record(YcsbOp::Scan, end_us - start_us);
        if got.is_empty() {
            ctx.meter.not_found[YcsbOp::Scan as usize] += 1;
        }
        if let Some(model) = &self.model {
            self.check.scans_checked += 1;
            let same = model
                .range(start.to_vec()..)
                .take(len)
                .eq(got.iter().map(|(k, f)| (k, f)));
            if !same {
                let k = String::from_utf8_lossy(start).into_owned();
                self.mismatch(format!(
                    "scan from {k} of {len}: {} records differ from the model",
                    got.len()
                ));
            }
        }
        Ok(())
    }
}

fn entry_len(it: &rusty_leveldb::DBIterator) -> u64 {
    it.current().map_or(0, |(k, v)| (k.len() + v.len()) as u64)
}
