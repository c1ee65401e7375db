//! The I/O rusty-leveldb issues through the Env must be a function of the operation stream.
//! HAYAGUI.md §3.1 warns that `db_iter.rs::random_period()` draws OS-seeded randomness for
//! iterator read sampling, which can mark files for seek compaction at run-dependent points.
//! This test hashes every Env call (path, offset, length, flushes, deletes, renames) over
//! iterator-heavy runs and compares runs. `MemEnv` lists children from a `HashMap`, whose order
//! varies per process and run, so the tracing Env sorts listings (a simulator's Env must too).

use nearflash_kvbench::{
    run_db_bench, CoreWorkload, CounterClock, DbBenchConfig, NoHook, Ycsb, YcsbConfig,
};
use rusty_leveldb::env::{Env, FileLock, Logger, RandomAccess};
use rusty_leveldb::{MemEnv, Options, Result};
use std::cell::RefCell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

type Trace = Rc<RefCell<(u64, u64)>>; // (hash, events)

fn mix(t: &Trace, words: &[u64], path: &Path) {
    let mut t = t.borrow_mut();
    for b in path
        .to_string_lossy()
        .bytes()
        .map(u64::from)
        .chain(words.iter().copied())
    {
        t.0 = (t.0 ^ b).wrapping_mul(0x0000_0100_0000_01b3);
    }
    t.1 += 1;
}

struct TraceEnv {
    inner: MemEnv,
    trace: Trace,
}

struct TraceRead<R> {
    inner: R,
    trace: Trace,
    path: PathBuf,
}

impl Read for TraceRead<Box<dyn Read>> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        mix(&self.trace, &[1, buf.len() as u64, n as u64], &self.path);
        Ok(n)
    }
}

impl RandomAccess for TraceRead<Box<dyn RandomAccess>> {
    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<usize> {
        let n = self.inner.read_at(off, dst)?;
        mix(
            &self.trace,
            &[2, off as u64, dst.len() as u64, n as u64],
            &self.path,
        );
        Ok(n)
    }
}

impl Write for TraceRead<Box<dyn Write>> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        mix(&self.trace, &[3, n as u64], &self.path);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        mix(&self.trace, &[4], &self.path);
        self.inner.flush()
    }
}

impl TraceEnv {
    fn wrap<R>(&self, inner: R, p: &Path) -> TraceRead<R> {
        TraceRead {
            inner,
            trace: self.trace.clone(),
            path: p.to_path_buf(),
        }
    }
}

impl Env for TraceEnv {
    fn open_sequential_file(&self, p: &Path) -> Result<Box<dyn Read>> {
        Ok(Box::new(self.wrap(self.inner.open_sequential_file(p)?, p)))
    }
    fn open_random_access_file(&self, p: &Path) -> Result<Box<dyn RandomAccess>> {
        Ok(Box::new(
            self.wrap(self.inner.open_random_access_file(p)?, p),
        ))
    }
    fn open_writable_file(&self, p: &Path) -> Result<Box<dyn Write>> {
        mix(&self.trace, &[5], p);
        Ok(Box::new(self.wrap(self.inner.open_writable_file(p)?, p)))
    }
    fn open_appendable_file(&self, p: &Path) -> Result<Box<dyn Write>> {
        mix(&self.trace, &[6], p);
        Ok(Box::new(self.wrap(self.inner.open_appendable_file(p)?, p)))
    }
    fn exists(&self, p: &Path) -> Result<bool> {
        self.inner.exists(p)
    }
    fn children(&self, p: &Path) -> Result<Vec<PathBuf>> {
        let mut c = self.inner.children(p)?;
        c.sort();
        Ok(c)
    }
    fn size_of(&self, p: &Path) -> Result<usize> {
        self.inner.size_of(p)
    }
    fn delete(&self, p: &Path) -> Result<()> {
        mix(&self.trace, &[7], p);
        self.inner.delete(p)
    }
    fn mkdir(&self, p: &Path) -> Result<()> {
        self.inner.mkdir(p)
    }
    fn rmdir(&self, p: &Path) -> Result<()> {
        self.inner.rmdir(p)
    }
    fn rename(&self, a: &Path, b: &Path) -> Result<()> {
        mix(&self.trace, &[8], a);
        mix(&self.trace, &[8], b);
        self.inner.rename(a, b)
    }
    fn lock(&self, p: &Path) -> Result<FileLock> {
        self.inner.lock(p)
    }
    fn unlock(&self, l: FileLock) -> Result<()> {
        self.inner.unlock(l)
    }
    fn new_logger(&self, p: &Path) -> Result<Logger> {
        self.inner.new_logger(p)
    }
    fn micros(&self) -> u64 {
        0
    }
    fn sleep_for(&self, _micros: u32) {}
}

fn traced_options() -> (Options, Trace) {
    let trace: Trace = Rc::new(RefCell::new((0xcbf2_9ce4_8422_2325, 0)));
    let env = TraceEnv {
        inner: MemEnv::new(),
        trace: trace.clone(),
    };
    let options = Options {
        env: Rc::new(Box::new(env)),
        ..Options::default()
    };
    (options, trace)
}

#[test]
fn db_bench_iterator_heavy_runs_issue_identical_io() {
    let cfg = DbBenchConfig {
        benchmarks: [
            "fillrandom",
            "overwrite",
            "readseq",
            "readreverse",
            "readrandom",
            "readseq",
            "overwrite",
            "readseq",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        num: 30_000,
        ..DbBenchConfig::upstream()
    };
    let once = || {
        let (options, trace) = traced_options();
        let clock = CounterClock::new(1.0);
        let report = run_db_bench(&cfg, options, Path::new("/db"), &clock, &mut NoHook).unwrap();
        let t = *trace.borrow();
        (report, t)
    };
    let first = once();
    for _ in 0..2 {
        assert_eq!(once(), first);
    }
    assert!(first.1 .1 > 1000, "the trace saw the I/O: {:?}", first.1);
}

#[test]
fn ycsb_e_runs_issue_identical_io() {
    let once = || {
        let (options, trace) = traced_options();
        let mut db = rusty_leveldb::DB::open("/e", options).unwrap();
        let clock = CounterClock::new(1.0);
        let cfg = YcsbConfig {
            record_count: 10_000,
            operation_count: 3000,
            ..YcsbConfig::new(CoreWorkload::e(), 5)
        };
        let mut y = Ycsb::new(cfg).unwrap();
        let load = y.load(&mut db, &clock, &mut NoHook).unwrap();
        let run = y.run(&mut db, &clock, &mut NoHook).unwrap();
        drop(db);
        let t = *trace.borrow();
        (load, run, t)
    };
    let first = once();
    for _ in 0..2 {
        assert_eq!(once(), first);
    }
}
