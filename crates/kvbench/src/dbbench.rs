//! A port of LevelDB's `benchmarks/db_bench.cc` over rusty-leveldb: the benchmark names, their
//! order, keys (`%016d`), values (the 1 MiB compressible pool), per-benchmark key seeds, fresh
//! databases where db_bench destroys them, and the report line exactly as db_bench prints it.
//! Time comes from the caller's `BenchClock`; every operation goes through the caller's `OpHook`.
//!
//! Differences forced by rusty-leveldb:
//! - no `SeekToLast`: `readreverse` positions on the last key with `Seek`s (`seek_to_last`),
//!   counted in `BenchResult::emulation_seeks`;
//! - no "no filter" option exported: `bloom_bits < 0` installs a filter policy that matches
//!   everything and stores one-byte filters (a tiny filter block per table, which upstream
//!   would not write);
//! - `DB::get` folds read errors into "not found".
//!
//! Refused with `UnsupportedBenchmark`: `zstdcomp`/`zstduncomp` (no zstd in rusty-leveldb),
//! `readwhilewriting` (needs a second thread), `stats`/`sstables`/`heapprofile` (no properties).

use crate::drive::{BenchClock, DbOp, OpHook};
use crate::error::KvBenchError;
use crate::random::LevelDbRandom;
use crate::valuegen::RandomGenerator;
use rusty_leveldb::compressor::{CompressorId, NoneCompressor, SnappyCompressor};
use rusty_leveldb::{FilterPolicy, LdbIterator, Options, WriteBatch, DB};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Key length without prefix (`%016d`).
pub const KEY_LEN_BYTES: usize = 16;
/// `Options().block_size` in LevelDB, the input size of the compression benchmarks.
const COMPRESSION_BLOCK_BYTES: usize = 4096;
/// The `crc32c` benchmark's block and total.
const CRC_BLOCK_BYTES: usize = 4096;
const CRC_TOTAL_BYTES: u64 = 500 * 1_048_576;
/// The compression benchmarks' total input.
const COMPRESSION_TOTAL_BYTES: u64 = 1024 * 1_048_576;

/// The default benchmark list of LevelDB's db_bench as of 2020-01 (the version Hayagui forked):
/// HEAD appends `zstdcomp,zstduncomp`, which rusty-leveldb cannot run.
pub const DEFAULT_BENCHMARKS: &[&str] = &[
    "fillseq",
    "fillsync",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readrandom",
    "readseq",
    "readreverse",
    "compact",
    "readrandom",
    "readseq",
    "readreverse",
    "fill100K",
    "crc32c",
    "snappycomp",
    "snappyuncomp",
];

/// How a benchmark's thread seeds its `Random`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SeedScheme {
    /// Before leveldb commit 8cce47e (2021-01): `1000 + tid`, so every single-threaded
    /// benchmark starts from seed 1000 (fillrandom and overwrite write the same keys).
    ThreadIndex,
    /// Since 8cce47e: `1000 + (threads started so far in the run, this one included)`, so the
    /// first benchmark uses 1001, the second 1002, …
    Cumulative,
}

/// db_bench's flags that this port honours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbBenchConfig {
    /// Benchmark names in order (`--benchmarks`); empty names are skipped as upstream does.
    pub benchmarks: Vec<String>,
    /// `--num`: keys in the database.
    pub num: i64,
    /// `--reads`: read operations; `None` means `num`.
    pub reads: Option<i64>,
    /// `--value_size`.
    pub value_size_bytes: i64,
    /// `--compression_ratio`: what the value fragments compress to.
    pub compression_ratio: f64,
    /// `--compression`: Snappy for tables.
    pub compression: bool,
    /// `--bloom_bits`: negative means no filter policy.
    pub bloom_bits: i64,
    /// `--use_existing_db`: do not destroy the database; fresh-db benchmarks are skipped.
    pub use_existing_db: bool,
    /// Length of one compressible fragment of the value pool: 100 upstream, 128 in Hayagui's fork.
    pub fragment_len_bytes: i64,
    /// Whether `fillsync` writes `num / 1000` entries (upstream) or `num` (Hayagui's fork).
    pub fillsync_divides_num: bool,
    /// How benchmark threads are seeded.
    pub seed_scheme: SeedScheme,
}

impl DbBenchConfig {
    /// Upstream db_bench at HEAD with the 2020 default list: N = 10⁶, 100-byte values.
    pub fn upstream() -> Self {
        Self {
            benchmarks: DEFAULT_BENCHMARKS.iter().map(|s| s.to_string()).collect(),
            num: 1_000_000,
            reads: None,
            value_size_bytes: 100,
            compression_ratio: 0.5,
            compression: true,
            bloom_bits: -1,
            use_existing_db: false,
            fragment_len_bytes: 100,
            fillsync_divides_num: true,
            seed_scheme: SeedScheme::Cumulative,
        }
    }

    /// Hayagui's fork (leveldb of 2020-01 plus commit 2e9e121): `fillsync` writes N synchronous
    /// puts, fragments are 128 bytes, threads are seeded `1000 + tid`.
    pub fn hayagui() -> Self {
        Self {
            fragment_len_bytes: 128,
            fillsync_divides_num: false,
            seed_scheme: SeedScheme::ThreadIndex,
            ..Self::upstream()
        }
    }

    /// Checks every value and every benchmark name before anything runs.
    pub fn validate(&self) -> Result<Vec<Benchmark>, KvBenchError> {
        let invalid = |field, value: String, reason| KvBenchError::InvalidConfig {
            field,
            value,
            reason,
        };
        if self.num < 1 || self.num > i64::from(i32::MAX) {
            return Err(invalid(
                "num",
                self.num.to_string(),
                "must be in 1..=2147483647",
            ));
        }
        if let Some(reads) = self.reads {
            if reads < 1 || reads > i64::from(i32::MAX) {
                return Err(invalid(
                    "reads",
                    reads.to_string(),
                    "must be in 1..=2147483647",
                ));
            }
        }
        let pool = crate::valuegen::POOL_SIZE_BYTES as i64;
        if self.value_size_bytes < 1 || self.value_size_bytes >= pool {
            return Err(invalid(
                "value_size_bytes",
                self.value_size_bytes.to_string(),
                "must be positive and below the 1 MiB value pool",
            ));
        }
        if !(self.compression_ratio > 0.0 && self.compression_ratio <= 1.0) {
            return Err(invalid(
                "compression_ratio",
                self.compression_ratio.to_string(),
                "must be in (0, 1]",
            ));
        }
        if self.fragment_len_bytes < 1 || self.fragment_len_bytes > 65_536 {
            return Err(invalid(
                "fragment_len_bytes",
                self.fragment_len_bytes.to_string(),
                "must be in 1..=65536",
            ));
        }
        if self.bloom_bits > 64 {
            return Err(invalid(
                "bloom_bits",
                self.bloom_bits.to_string(),
                "must be at most 64",
            ));
        }
        self.benchmarks
            .iter()
            .filter(|name| !name.is_empty())
            .map(|name| Benchmark::parse(name))
            .collect()
    }

    fn reads(&self) -> i64 {
        self.reads.unwrap_or(self.num)
    }
}

/// A benchmark db_bench knows and this port runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Benchmark {
    /// Fresh DB; N puts in key order.
    FillSeq,
    /// Fresh DB; N puts in key order, 1000 per batch.
    FillBatch,
    /// Fresh DB; N puts at random keys.
    FillRandom,
    /// N puts at random keys into the existing DB.
    Overwrite,
    /// Fresh DB; N/1000 (Hayagui: N) synchronous puts at random keys.
    FillSync,
    /// Fresh DB; N/1000 puts of 100,000-byte values at random keys.
    Fill100K,
    /// Iterate forward over up to `reads` entries.
    ReadSeq,
    /// Iterate backward over up to `reads` entries.
    ReadReverse,
    /// `reads` gets at random keys.
    ReadRandom,
    /// `reads` gets of 15-byte keys that do not exist.
    ReadMissing,
    /// `reads` gets in the first 1 % of the key range.
    ReadHot,
    /// `reads / 1000` gets at random keys.
    ReadRandomSmall,
    /// `reads` seeks at random keys, one new iterator each.
    SeekRandom,
    /// `reads` seeks advancing by Uniform(100), one iterator.
    SeekOrdered,
    /// N deletes in key order.
    DeleteSeq,
    /// N deletes at random keys.
    DeleteRandom,
    /// Compact the whole key range.
    Compact,
    /// Close and reopen the DB max(N / 10000, 1) times.
    Open,
    /// CRC32C of 4 KiB blocks, 500 MiB in all.
    Crc32c,
    /// Snappy compression of a 4 KiB value-pool block, 1 GiB in all.
    SnappyComp,
    /// Snappy decompression of that block, 1 GiB in all.
    SnappyUncomp,
}

impl Benchmark {
    /// Every supported benchmark with its db_bench name.
    pub const ALL: [(Benchmark, &'static str); 21] = [
        (Benchmark::FillSeq, "fillseq"),
        (Benchmark::FillBatch, "fillbatch"),
        (Benchmark::FillRandom, "fillrandom"),
        (Benchmark::Overwrite, "overwrite"),
        (Benchmark::FillSync, "fillsync"),
        (Benchmark::Fill100K, "fill100K"),
        (Benchmark::ReadSeq, "readseq"),
        (Benchmark::ReadReverse, "readreverse"),
        (Benchmark::ReadRandom, "readrandom"),
        (Benchmark::ReadMissing, "readmissing"),
        (Benchmark::ReadHot, "readhot"),
        (Benchmark::ReadRandomSmall, "readrandomsmall"),
        (Benchmark::SeekRandom, "seekrandom"),
        (Benchmark::SeekOrdered, "seekordered"),
        (Benchmark::DeleteSeq, "deleteseq"),
        (Benchmark::DeleteRandom, "deleterandom"),
        (Benchmark::Compact, "compact"),
        (Benchmark::Open, "open"),
        (Benchmark::Crc32c, "crc32c"),
        (Benchmark::SnappyComp, "snappycomp"),
        (Benchmark::SnappyUncomp, "snappyuncomp"),
    ];

    /// Parses a db_bench name (case-sensitive, as upstream).
    pub fn parse(name: &str) -> Result<Self, KvBenchError> {
        if let Some((b, _)) = Self::ALL.iter().find(|(_, n)| *n == name) {
            return Ok(*b);
        }
        let reason = match name {
            "zstdcomp" | "zstduncomp" => "rusty-leveldb has no zstd compressor",
            "readwhilewriting" => {
                "it needs a concurrent writer thread; rusty-leveldb is single-threaded"
            }
            "stats" | "sstables" => "rusty-leveldb exposes no DB properties",
            "heapprofile" => "no heap profiler",
            _ => {
                return Err(KvBenchError::UnknownBenchmark {
                    name: name.to_string(),
                })
            }
        };
        Err(KvBenchError::UnsupportedBenchmark {
            name: name.to_string(),
            reason,
        })
    }

    /// The db_bench name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(b, _)| *b == self)
            .map(|(_, n)| *n)
            .expect("every variant is listed in ALL")
    }

    /// Whether db_bench destroys and reopens the database first.
    pub fn fresh_db(self) -> bool {
        matches!(
            self,
            Benchmark::FillSeq
                | Benchmark::FillBatch
                | Benchmark::FillRandom
                | Benchmark::FillSync
                | Benchmark::Fill100K
        )
    }
}

/// One benchmark's outcome, as db_bench's `Stats::Report` computes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// The db_bench name.
    pub name: String,
    /// Skipped because `use_existing_db` forbids a fresh database.
    pub skipped: bool,
    /// Operations counted (db_bench reports at least 1).
    pub ops: u64,
    /// Bytes counted for MB/s (0: no rate printed).
    pub bytes: u64,
    /// Elapsed time between the benchmark's start and stop readings.
    pub elapsed_us: f64,
    /// `elapsed / ops`.
    pub micros_per_op: f64,
    /// `bytes / 2²⁰ / seconds`, when bytes were counted.
    pub mb_per_s: Option<f64>,
    /// The message db_bench appends, e.g. `(632120 of 1000000 found)`.
    pub message: String,
    /// Keys found, for the read and seek benchmarks that count them.
    pub found: Option<u64>,
    /// Seeks spent emulating `SeekToLast` (readreverse only).
    pub emulation_seeks: u64,
    /// The seed of the benchmark's `Random`.
    pub seed: u32,
    /// The line db_bench prints.
    pub line: String,
}

/// A whole run: header lines and one result per benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbBenchReport {
    /// `PrintHeader`'s lines (without the environment lines).
    pub header: Vec<String>,
    /// Results in run order.
    pub results: Vec<BenchResult>,
}

impl DbBenchReport {
    /// The report as db_bench prints it to stdout.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for line in self
            .header
            .iter()
            .chain(self.results.iter().map(|r| &r.line))
        {
            s.push_str(line);
            s.push('\n');
        }
        s
    }
}

/// A filter policy that matches everything (db_bench's "no filter"). Its filters are one byte:
/// rusty-leveldb's filter block reader asserts that a filter is non-empty.
struct NoFilter;

impl FilterPolicy for NoFilter {
    fn name(&self) -> &'static str {
        "nearflash.NoFilter"
    }
    fn create_filter(&self, _keys: &[u8], _key_offsets: &[usize]) -> Vec<u8> {
        vec![0]
    }
    fn key_may_match(&self, _key: &[u8], _filter: &[u8]) -> bool {
        true
    }
}

/// `%016d` of `k` into `buf` (cleared first).
pub fn format_key(k: i64, buf: &mut Vec<u8>) {
    buf.clear();
    write!(buf, "{k:016}").expect("writing to a Vec cannot fail");
}

/// db_bench's `Stats`: start/stop readings, operations, bytes, message.
struct Stats {
    start_us: f64,
    finish_us: f64,
    done: u64,
    bytes: u64,
    message: String,
}

impl Stats {
    fn start(clock: &dyn BenchClock) -> Self {
        let now = clock.now_us();
        Self {
            start_us: now,
            finish_us: now,
            done: 0,
            bytes: 0,
            message: String::new(),
        }
    }

    fn add_message(&mut self, msg: &str) {
        if msg.is_empty() {
            return;
        }
        if !self.message.is_empty() {
            self.message.push(' ');
        }
        self.message.push_str(msg);
    }

    fn report(mut self, name: &str, seed: u32, found: Option<u64>, seeks: u64) -> BenchResult {
        assert!(self.finish_us >= self.start_us, "the clock went back");
        self.done = self.done.max(1);
        let elapsed_us = self.finish_us - self.start_us;
        let seconds = elapsed_us * 1e-6;
        let micros_per_op = seconds * 1e6 / self.done as f64;
        let mb_per_s = (self.bytes > 0).then(|| (self.bytes as f64 / 1_048_576.0) / seconds);
        let mut extra = mb_per_s
            .map(|r| format!("{r:6.1} MB/s"))
            .unwrap_or_default();
        if !self.message.is_empty() {
            if !extra.is_empty() {
                extra.push(' ');
            }
            extra.push_str(&self.message);
        }
        let line = format!(
            "{name:<12} : {micros_per_op:11.3} micros/op;{}{extra}",
            if extra.is_empty() { "" } else { " " }
        );
        BenchResult {
            name: name.to_string(),
            skipped: false,
            ops: self.done,
            bytes: self.bytes,
            elapsed_us,
            micros_per_op,
            mb_per_s,
            message: self.message,
            found,
            emulation_seeks: seeks,
            seed,
            line,
        }
    }
}

/// What one benchmark run needs: its parameters after db_bench's per-benchmark overrides.
struct Params {
    num: i64,
    reads: i64,
    value_size: usize,
    entries_per_batch: i64,
    sync: bool,
}

/// The db_bench driver over one database directory.
pub struct DbBench<'a> {
    config: DbBenchConfig,
    options: Options,
    path: PathBuf,
    clock: &'a dyn BenchClock,
    hook: &'a mut dyn OpHook,
    db: Option<DB>,
    threads_started: u32,
}

/// Runs `config` over a database at `db_path` opened with `options` (whose `env` is the
/// caller's), reading time from `clock` and calling `hook` around every operation.
pub fn run_db_bench(
    config: &DbBenchConfig,
    options: Options,
    db_path: &Path,
    clock: &dyn BenchClock,
    hook: &mut dyn OpHook,
) -> Result<DbBenchReport, KvBenchError> {
    let mut bench = DbBench::new(config.clone(), options, db_path, clock, hook)?;
    bench.run()
}

impl<'a> DbBench<'a> {
    /// Validates the configuration and prepares the options as db_bench's `Open` does
    /// (compression, filter policy, `reuse_logs = false`, `create_if_missing`). Nothing is
    /// opened yet.
    pub fn new(
        config: DbBenchConfig,
        mut options: Options,
        db_path: &Path,
        clock: &'a dyn BenchClock,
        hook: &'a mut dyn OpHook,
    ) -> Result<Self, KvBenchError> {
        config.validate()?;
        options.create_if_missing = !config.use_existing_db;
        options.reuse_logs = false;
        options.compressor = if config.compression {
            SnappyCompressor::ID
        } else {
            NoneCompressor::ID
        };
        options.filter_policy = if config.bloom_bits >= 0 {
            Rc::new(Box::new(rusty_leveldb::BloomPolicy::new(
                config.bloom_bits as u32,
            )))
        } else {
            Rc::new(Box::new(NoFilter))
        };
        Ok(Self {
            config,
            options,
            path: db_path.to_path_buf(),
            clock,
            hook,
            db: None,
            threads_started: 0,
        })
    }

    /// The header db_bench prints before the results.
    pub fn header(&self) -> Vec<String> {
        let c = &self.config;
        let key = KEY_LEN_BYTES as f64;
        let value = c.value_size_bytes as f64;
        vec![
            format!("Keys:       {KEY_LEN_BYTES} bytes each"),
            format!(
                "Values:     {} bytes each ({} bytes after compression)",
                c.value_size_bytes,
                (value * c.compression_ratio + 0.5) as i64
            ),
            format!("Entries:    {}", c.num),
            format!(
                "RawSize:    {:.1} MB (estimated)",
                (key + value) * c.num as f64 / 1_048_576.0
            ),
            format!(
                "FileSize:   {:.1} MB (estimated)",
                (key + value * c.compression_ratio) * c.num as f64 / 1_048_576.0
            ),
            "------------------------------------------------".to_string(),
        ]
    }

    /// Runs every benchmark in order; the database stays open until `self` drops.
    pub fn run(&mut self) -> Result<DbBenchReport, KvBenchError> {
        let benchmarks = self.config.validate()?;
        let header = self.header();
        if !self.config.use_existing_db {
            self.destroy()?;
        }
        self.open()?;
        let mut results = Vec::with_capacity(benchmarks.len());
        for b in benchmarks {
            results.push(self.run_one(b)?);
        }
        Ok(DbBenchReport { header, results })
    }

    fn run_one(&mut self, b: Benchmark) -> Result<BenchResult, KvBenchError> {
        let c = self.config.clone();
        let mut p = Params {
            num: c.num,
            reads: c.reads(),
            value_size: c.value_size_bytes as usize,
            entries_per_batch: 1,
            sync: false,
        };
        match b {
            Benchmark::Open => p.num = (p.num / 10_000).max(1),
            Benchmark::FillBatch => p.entries_per_batch = 1000,
            Benchmark::FillSync => {
                if c.fillsync_divides_num {
                    p.num /= 1000;
                }
                p.sync = true;
            }
            Benchmark::Fill100K => {
                p.num /= 1000;
                p.value_size = 100 * 1000;
            }
            Benchmark::ReadRandomSmall => p.reads /= 1000,
            _ => {}
        }
        if b.fresh_db() {
            if c.use_existing_db {
                return Ok(skipped(b.name()));
            }
            self.close();
            self.destroy()?;
            self.open()?;
        }
        self.threads_started += 1;
        let seed = match c.seed_scheme {
            SeedScheme::ThreadIndex => 1000,
            SeedScheme::Cumulative => 1000 + self.threads_started,
        };
        let mut rand = LevelDbRandom::new(seed);
        let mut stats = Stats::start(self.clock);
        let mut found = None;
        let mut seeks = 0;
        match b {
            Benchmark::FillSeq | Benchmark::FillBatch => {
                self.do_write(&p, true, &mut rand, &mut stats)?
            }
            Benchmark::FillRandom
            | Benchmark::Overwrite
            | Benchmark::FillSync
            | Benchmark::Fill100K => self.do_write(&p, false, &mut rand, &mut stats)?,
            Benchmark::ReadSeq => self.read_sequential(&p, &mut stats)?,
            Benchmark::ReadReverse => seeks = self.read_reverse(&p, &mut stats)?,
            Benchmark::ReadRandom | Benchmark::ReadRandomSmall => {
                found = Some(self.read_random(&p, &mut rand, &mut stats));
            }
            Benchmark::ReadMissing => self.read_missing(&p, &mut rand, &mut stats),
            Benchmark::ReadHot => self.read_hot(&p, &mut rand, &mut stats),
            Benchmark::SeekRandom => found = Some(self.seek_random(&p, &mut rand, &mut stats)?),
            Benchmark::SeekOrdered => found = Some(self.seek_ordered(&p, &mut rand, &mut stats)?),
            Benchmark::DeleteSeq => self.do_delete(&p, true, &mut rand, &mut stats)?,
            Benchmark::DeleteRandom => self.do_delete(&p, false, &mut rand, &mut stats)?,
            Benchmark::Compact => self.compact()?,
            Benchmark::Open => self.open_bench(&p, &mut stats)?,
            Benchmark::Crc32c => self.crc32c(&mut stats),
            Benchmark::SnappyComp => self.snappy_comp(&mut stats),
            Benchmark::SnappyUncomp => self.snappy_uncomp(&mut stats),
        }
        stats.finish_us = self.clock.now_us();
        Ok(stats.report(b.name(), seed, found, seeks))
    }

    fn db(&mut self) -> &mut DB {
        self.db
            .as_mut()
            .expect("the database is open while benchmarks run")
    }

    fn open(&mut self) -> Result<(), KvBenchError> {
        assert!(self.db.is_none(), "open() on an open database");
        self.hook.before(DbOp::Open);
        let db = DB::open(&self.path, self.options.clone()).map_err(KvBenchError::db("open"))?;
        self.hook.after(DbOp::Open, 0);
        self.db = Some(db);
        Ok(())
    }

    fn close(&mut self) {
        // rusty-leveldb's Drop flushes the log and releases the lock.
        self.db = None;
    }

    /// `DestroyDB`: delete every file of the database directory (sorted, so the order of
    /// deletions does not depend on the Env's listing order), then the directory; a missing
    /// directory is not an error.
    fn destroy(&mut self) -> Result<(), KvBenchError> {
        assert!(self.db.is_none(), "destroy() on an open database");
        self.hook.before(DbOp::Destroy);
        let env = self.options.env.clone();
        if env.exists(&self.path).unwrap_or(false) {
            let mut children = env
                .children(&self.path)
                .map_err(KvBenchError::db("destroy"))?;
            children.sort();
            for child in children {
                env.delete(&self.path.join(child))
                    .map_err(KvBenchError::db("destroy"))?;
            }
            // As upstream: ignore the error (the directory may hold other files).
            let _ = env.rmdir(&self.path);
        }
        self.hook.after(DbOp::Destroy, 0);
        Ok(())
    }

    fn do_write(
        &mut self,
        p: &Params,
        seq: bool,
        rand: &mut LevelDbRandom,
        stats: &mut Stats,
    ) -> Result<(), KvBenchError> {
        if p.num != self.config.num {
            stats.add_message(&format!("({} ops)", p.num));
        }
        let key_range = self.config.num as u32;
        let mut gen = RandomGenerator::new(
            self.config.compression_ratio,
            self.config.fragment_len_bytes as usize,
        );
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        let mut i = 0;
        while i < p.num {
            let mut batch = WriteBatch::default();
            let mut batch_bytes = 0;
            for j in 0..p.entries_per_batch {
                let k = if seq {
                    i + j
                } else {
                    i64::from(rand.uniform(key_range))
                };
                format_key(k, &mut key);
                batch.put(&key, gen.generate(p.value_size));
                batch_bytes += (p.value_size + key.len()) as u64;
                stats.done += 1;
            }
            let op = DbOp::Write {
                entries: batch.count(),
                sync: p.sync,
            };
            self.hook.before(op);
            self.db()
                .write(batch, p.sync)
                .map_err(KvBenchError::db("put"))?;
            self.hook.after(op, batch_bytes);
            stats.bytes += batch_bytes;
            i += p.entries_per_batch;
        }
        Ok(())
    }

    fn do_delete(
        &mut self,
        p: &Params,
        seq: bool,
        rand: &mut LevelDbRandom,
        stats: &mut Stats,
    ) -> Result<(), KvBenchError> {
        let key_range = self.config.num as u32;
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        let mut i = 0;
        while i < p.num {
            let mut batch = WriteBatch::default();
            for j in 0..p.entries_per_batch {
                let k = if seq {
                    i + j
                } else {
                    i64::from(rand.uniform(key_range))
                };
                format_key(k, &mut key);
                batch.delete(&key);
                stats.done += 1;
            }
            let op = DbOp::Delete {
                entries: batch.count(),
            };
            self.hook.before(op);
            self.db()
                .write(batch, p.sync)
                .map_err(KvBenchError::db("delete"))?;
            self.hook.after(op, 0);
            i += p.entries_per_batch;
        }
        Ok(())
    }

    fn new_iter(&mut self) -> Result<rusty_leveldb::DBIterator, KvBenchError> {
        self.hook.before(DbOp::NewIterator);
        let it = self
            .db()
            .new_iter()
            .map_err(KvBenchError::db("new iterator"))?;
        self.hook.after(DbOp::NewIterator, 0);
        Ok(it)
    }

    fn read_sequential(&mut self, p: &Params, stats: &mut Stats) -> Result<(), KvBenchError> {
        let mut it = self.new_iter()?;
        self.hook.before(DbOp::SeekToFirst);
        it.seek_to_first();
        self.hook.after(DbOp::SeekToFirst, entry_len(&it));
        let mut i = 0;
        let mut last_key: Option<Vec<u8>> = None;
        while i < p.reads && it.valid() {
            let (k, v) = it.current().expect("a valid iterator has a current entry");
            if let Some(prev) = &last_key {
                assert!(prev.as_slice() < &k[..], "readseq keys strictly increase");
            }
            last_key = Some(k.to_vec());
            stats.bytes += (k.len() + v.len()) as u64;
            stats.done += 1;
            i += 1;
            self.hook.before(DbOp::Next);
            it.advance();
            self.hook.after(DbOp::Next, entry_len(&it));
        }
        Ok(())
    }

    fn read_reverse(&mut self, p: &Params, stats: &mut Stats) -> Result<u64, KvBenchError> {
        let mut it = self.new_iter()?;
        let seeks = self.seek_to_last(&mut it);
        let mut i = 0;
        let mut last_key: Option<Vec<u8>> = None;
        while i < p.reads && it.valid() {
            let (k, v) = it.current().expect("a valid iterator has a current entry");
            if let Some(prev) = &last_key {
                assert!(
                    prev.as_slice() > &k[..],
                    "readreverse keys strictly decrease"
                );
            }
            last_key = Some(k.to_vec());
            stats.bytes += (k.len() + v.len()) as u64;
            stats.done += 1;
            i += 1;
            self.hook.before(DbOp::Prev);
            it.prev();
            self.hook.after(DbOp::Prev, entry_len(&it));
        }
        Ok(seeks)
    }

    /// rusty-leveldb's `DBIterator` has no `SeekToLast`. db_bench keys are `%016d` of
    /// integers, so: seek to the highest key db_bench writes for `num` (fillbatch rounds up to a
    /// whole batch); if nothing is there, binary-search the largest `k` with an entry at or
    /// after `format(k)`; then walk forward to the end and seek back to the last key seen.
    /// Returns the seeks spent (2 when the top key exists).
    fn seek_to_last(&mut self, it: &mut rusty_leveldb::DBIterator) -> u64 {
        let num = self.config.num;
        let top = (num + 999) / 1000 * 1000 - 1;
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        let mut seeks = 0;
        let mut seek = |this: &mut Self, it: &mut rusty_leveldb::DBIterator, k: &[u8]| {
            this.hook.before(DbOp::Seek);
            it.seek(k);
            this.hook.after(DbOp::Seek, entry_len(it));
            seeks += 1;
            it.valid()
        };
        format_key(top, &mut key);
        if !seek(self, it, &key) {
            // Largest k in [0, top) with an entry >= format(k); none when the DB is empty.
            let (mut lo, mut hi) = (0i64, top); // invariant: hi has no entry at or after it
            format_key(0, &mut key);
            if !seek(self, it, &key) {
                return seeks;
            }
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                format_key(mid, &mut key);
                if seek(self, it, &key) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            format_key(lo, &mut key);
            let found = seek(self, it, &key);
            assert!(found, "the binary search keeps an entry at or after lo");
        }
        let mut last = it.current().expect("valid").0.to_vec();
        loop {
            self.hook.before(DbOp::Next);
            let more = it.advance();
            self.hook.after(DbOp::Next, entry_len(it));
            if !more {
                break;
            }
            last = it.current().expect("valid after advance").0.to_vec();
        }
        let found = seek(self, it, &last);
        assert!(found, "seeking back to the last key finds it");
        seeks
    }

    fn get(&mut self, key: &[u8]) -> bool {
        self.hook.before(DbOp::Get);
        let value = self.db().get(key);
        let bytes = value.as_ref().map_or(0, |v| (key.len() + v.len()) as u64);
        self.hook.after(DbOp::Get, bytes);
        value.is_some()
    }

    fn read_random(&mut self, p: &Params, rand: &mut LevelDbRandom, stats: &mut Stats) -> u64 {
        let key_range = self.config.num as u32;
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        let mut found = 0;
        for _ in 0..p.reads {
            format_key(i64::from(rand.uniform(key_range)), &mut key);
            if self.get(&key) {
                found += 1;
            }
            stats.done += 1;
        }
        stats.add_message(&format!("({found} of {} found)", p.num));
        found
    }

    fn read_missing(&mut self, p: &Params, rand: &mut LevelDbRandom, stats: &mut Stats) {
        let key_range = self.config.num as u32;
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        for _ in 0..p.reads {
            format_key(i64::from(rand.uniform(key_range)), &mut key);
            key.pop();
            self.get(&key);
            stats.done += 1;
        }
    }

    fn read_hot(&mut self, p: &Params, rand: &mut LevelDbRandom, stats: &mut Stats) {
        let range = ((self.config.num + 99) / 100) as u32;
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        for _ in 0..p.reads {
            format_key(i64::from(rand.uniform(range)), &mut key);
            self.get(&key);
            stats.done += 1;
        }
    }

    fn seek_random(
        &mut self,
        p: &Params,
        rand: &mut LevelDbRandom,
        stats: &mut Stats,
    ) -> Result<u64, KvBenchError> {
        let key_range = self.config.num as u32;
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        let mut found = 0;
        for _ in 0..p.reads {
            let mut it = self.new_iter()?;
            format_key(i64::from(rand.uniform(key_range)), &mut key);
            self.hook.before(DbOp::Seek);
            it.seek(&key);
            self.hook.after(DbOp::Seek, entry_len(&it));
            if it.current().is_some_and(|(k, _)| k[..] == key[..]) {
                found += 1;
            }
            stats.done += 1;
        }
        stats.add_message(&format!("({found} of {} found)", p.num));
        Ok(found)
    }

    fn seek_ordered(
        &mut self,
        p: &Params,
        rand: &mut LevelDbRandom,
        stats: &mut Stats,
    ) -> Result<u64, KvBenchError> {
        let num = self.config.num;
        let mut it = self.new_iter()?;
        let mut key = Vec::with_capacity(KEY_LEN_BYTES);
        let mut found = 0;
        let mut k = 0;
        for _ in 0..p.reads {
            k = (k + i64::from(rand.uniform(100))) % num;
            format_key(k, &mut key);
            self.hook.before(DbOp::Seek);
            it.seek(&key);
            self.hook.after(DbOp::Seek, entry_len(&it));
            if it.current().is_some_and(|(ck, _)| ck[..] == key[..]) {
                found += 1;
            }
            stats.done += 1;
        }
        stats.add_message(&format!("({found} of {} found)", p.num));
        Ok(found)
    }

    fn compact(&mut self) -> Result<(), KvBenchError> {
        self.hook.before(DbOp::CompactRange);
        // `CompactRange(nullptr, nullptr)`: the empty key is below every key and 0xff… above
        // every db_bench key.
        self.db()
            .compact_range(b"", &[0xff; 32])
            .map_err(KvBenchError::db("compact"))?;
        self.hook.after(DbOp::CompactRange, 0);
        Ok(())
    }

    fn open_bench(&mut self, p: &Params, stats: &mut Stats) -> Result<(), KvBenchError> {
        for _ in 0..p.num {
            self.close();
            self.open()?;
            stats.done += 1;
        }
        Ok(())
    }

    fn crc32c(&mut self, stats: &mut Stats) {
        let data = vec![b'x'; CRC_BLOCK_BYTES];
        let mut crc = 0;
        while stats.bytes < CRC_TOTAL_BYTES {
            self.hook.before(DbOp::Crc32c);
            crc = crc32c::crc32c(&data);
            self.hook.after(DbOp::Crc32c, CRC_BLOCK_BYTES as u64);
            stats.done += 1;
            stats.bytes += CRC_BLOCK_BYTES as u64;
        }
        // CRC32C of 4096 'x' is a constant; checking it keeps the loop honest.
        assert_eq!(crc, crc32c::crc32c(&data));
        stats.add_message("(4K per op)");
    }

    fn compression_input(&self) -> Vec<u8> {
        let mut gen = RandomGenerator::new(
            self.config.compression_ratio,
            self.config.fragment_len_bytes as usize,
        );
        gen.generate(COMPRESSION_BLOCK_BYTES).to_vec()
    }

    fn snappy_comp(&mut self, stats: &mut Stats) {
        let input = self.compression_input();
        let mut encoder = snap::raw::Encoder::new();
        let mut out = vec![0; snap::raw::max_compress_len(input.len())];
        let mut produced = 0u64;
        while stats.bytes < COMPRESSION_TOTAL_BYTES {
            self.hook.before(DbOp::SnappyCompress);
            let n = encoder
                .compress(&input, &mut out)
                .expect("the output buffer has max_compress_len bytes");
            self.hook.after(DbOp::SnappyCompress, input.len() as u64);
            produced += n as u64;
            stats.bytes += input.len() as u64;
            stats.done += 1;
        }
        stats.add_message(&format!(
            "(output: {:.1}%)",
            produced as f64 * 100.0 / stats.bytes as f64
        ));
    }

    fn snappy_uncomp(&mut self, stats: &mut Stats) {
        let input = self.compression_input();
        let compressed = snap::raw::Encoder::new()
            .compress_vec(&input)
            .expect("a 4 KiB block compresses");
        let mut decoder = snap::raw::Decoder::new();
        let mut out = vec![0; input.len()];
        while stats.bytes < COMPRESSION_TOTAL_BYTES {
            self.hook.before(DbOp::SnappyUncompress);
            let n = decoder
                .decompress(&compressed, &mut out)
                .expect("our own compressed block decompresses");
            self.hook.after(DbOp::SnappyUncompress, n as u64);
            assert_eq!(n, input.len());
            stats.bytes += input.len() as u64;
            stats.done += 1;
        }
    }
}

fn entry_len(it: &rusty_leveldb::DBIterator) -> u64 {
    it.current().map_or(0, |(k, v)| (k.len() + v.len()) as u64)
}

fn skipped(name: &str) -> BenchResult {
    BenchResult {
        name: name.to_string(),
        skipped: true,
        ops: 0,
        bytes: 0,
        elapsed_us: 0.0,
        micros_per_op: 0.0,
        mb_per_s: None,
        message: String::new(),
        found: None,
        emulation_seeks: 0,
        seed: 0,
        line: format!("{name:<12} : skipped (--use_existing_db is true)"),
    }
}
