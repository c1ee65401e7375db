//! Hayagui's claims: the paper's four published ranges (file-operation latency, db_bench
//! latency, YCSB throughput, genome time), each as its low and high end against our smallest
//! and largest difference, and the baseline genome's load-target share per data set, each
//! noted from the measured runs.

use super::spread::{db_spread, fileops_spread, genome_spread, genome_total, ycsb_spread, Spread};
use super::{paper_phase_s, Measured, GENOME_DATASETS};
use nearflash_genome::Phase;
use nearflash_hayagui::files::PathStats;
use nearflash_hayagui::genome::{GenomeRun, PhaseTime};
use nearflash_hayagui::Access;
use nearflash_report::{Claim, Reference, NO_CHANGE_PCT};

/// What one workload's two runs did with their file calls: the direct path's chunk misses
/// and SSD commands against the redirected path's calls and what they cost, all measured.
fn ycsb_why(m: &Measured, workload: &str) -> String {
    let w = workload.to_lowercase();
    let find = |a: Access| m.ycsb.iter().find(|r| r.access == a && r.workload == w);
    let (Some(d), Some(r)) = (find(Access::Direct), find(Access::Redirected)) else {
        return String::new();
    };
    match (&d.path, &r.path) {
        (PathStats::Direct(a), PathStats::Redirected(b)) => format!(
            "Load and run: direct {} AccelFS chunk misses, {} SSD reads and {} writes; \
             redirected {} calls, {:.3} s of redirection and {:.3} s of VEOS copies, served by \
             the host's {} MiB page cache.",
            a.chunk_misses,
            a.read_commands,
            a.write_commands,
            b.calls,
            b.call_overhead_ns as f64 / 1e9,
            b.copy_ns as f64 / 1e9,
            m.cfg.host_fs.page_cache_bytes >> 20
        ),
        _ => String::new(),
    }
}

/// `phase`'s share of `run`'s total time, percent.
fn phase_share(run: &nearflash_hayagui::genome::GenomeRun, phase: nearflash_genome::Phase) -> f64 {
    let p: u64 = run
        .phases
        .iter()
        .filter(|p| p.phase == phase)
        .map(|p| p.ns)
        .sum();
    p as f64 / run.total_ns.max(1) as f64 * 100.0
}

/// The claims: the paper's four published ranges (each as its low and high end), then the
/// baseline genome's load-target share per data set.
pub(super) fn claims(m: &Measured) -> Vec<Claim> {
    let mut v = Vec::new();
    push_range(
        &mut v,
        &PaperRange {
            id: "fileops_latency_reduction",
            what: "File-operation latency (read, write, write+sync; 4 KiB – 8 MiB), direct vs \
                   redirected",
            unit_word: "mean µs per call",
            low_pct: 20.0,
            high_pct: 99.0,
        },
        &fileops_spread(m),
        &|label| fileops_why(m, label),
    );
    let db = db_spread(m);
    push_range(
        &mut v,
        &PaperRange {
            id: "db_bench_latency_reduction",
            what: "LevelDB db_bench latency (µs/op), direct vs redirected",
            unit_word: "µs/op",
            low_pct: 33.0,
            high_pct: 81.0,
        },
        &db,
        &|name| db_bench_why(m, &db, name),
    );
    push_range(
        &mut v,
        &PaperRange {
            id: "ycsb_throughput_gain",
            what: "YCSB A–F throughput (ops/s), direct over redirected",
            unit_word: "ops/s",
            low_pct: 12.0,
            high_pct: 89.0,
        },
        &ycsb_spread(m),
        &|w| ycsb_note(m, w),
    );
    push_range(
        &mut v,
        &PaperRange {
            id: "genome_time_reduction",
            what: "Genome matching total time, direct vs redirected",
            unit_word: "s",
            low_pct: 33.0,
            high_pct: 46.0,
        },
        &genome_spread(m),
        &|_| genome_note(m),
    );
    for (ds, row) in GENOME_DATASETS {
        let Some(r) = genome_total(m, ds, Access::Redirected) else {
            continue;
        };
        v.push(load_target_share_claim(m, ds, &row, r));
    }
    v
}

/// One of the paper's published ranges of a direct-against-redirected difference.
struct PaperRange {
    /// The claims' id stem (`_min` and `_max` follow it).
    id: &'static str,
    /// What is compared.
    what: &'static str,
    /// The unit of the compared values, as the note names it.
    unit_word: &'static str,
    /// The range's low end, percent.
    low_pct: f64,
    /// The range's high end, percent.
    high_pct: f64,
}

/// Pushes the two claims of a range: its low end against our smallest difference and its
/// high end against our largest, each noted with `why` of the row (nothing when no pair was
/// measured).
fn push_range(v: &mut Vec<Claim>, range: &PaperRange, s: &Spread, why: &dyn Fn(&str) -> String) {
    if s.rows.is_empty() {
        return;
    }
    let (lo, hi) = (range.low_pct, range.high_pct);
    let (mn, mx) = (s.min(), s.max());
    for (suffix, paper, row, bound) in [("min", lo, mn, "low"), ("max", hi, mx, "high")] {
        v.push(Claim {
            id: format!("{}_{suffix}", range.id),
            description: format!(
                "{}: the {bound} end of the paper's range ({lo:.0}–{hi:.0}%)",
                range.what
            ),
            paper,
            ours: row.3,
            unit: "%".into(),
            note: format!(
                "{} {}: direct {:.4} against redirected {:.4} ({} pairs measured). {}",
                row.0,
                range.unit_word,
                row.1,
                row.2,
                s.rows.len(),
                why(&row.0)
            ),
            reference: Reference::PaperFigure,
            baseline: NO_CHANGE_PCT,
        });
    }
}

/// The note of one file-operation pair (`label`: op and size): the calls, the NVMe commands
/// and flushes each path made, and what a redirected call costs.
fn fileops_why(m: &Measured, label: &str) -> String {
    let cfg = &m.cfg;
    let call_us = cfg.redirect.call_overhead_ns as f64 / 1e3;
    let ssd_of = |a: Access| {
        m.fileops
            .iter()
            .find(|r| {
                r.access == a && format!("{} {} KiB", r.op.name(), r.size_bytes >> 10) == label
            })
            .map_or((0, 0, 0), |r| (r.count, r.nvme_commands, r.ssd_flushes))
    };
    let (calls, dc, df) = ssd_of(Access::Direct);
    let (_, rc, rf) = ssd_of(Access::Redirected);
    format!(
        "{calls} calls: direct {dc} NVMe commands and {df} flushes, redirected {rc} and \
         {rf}, each redirected call paying {call_us:.1} µs and VEOS's copy ({:.0}–{:.0} \
         MB/s host→VE, {:.0}–{:.0} VE→host).",
        cfg.redirect.veos.to_ve_mb_s[0],
        cfg.redirect.veos.to_ve_mb_s[1],
        cfg.redirect.veos.to_host_mb_s[0],
        cfg.redirect.veos.to_host_mb_s[1],
    )
}

/// The note of one db_bench benchmark (`name`): whether it reached the files at all, and
/// the whole run's NVMe commands and flushes on each path.
fn db_bench_why(m: &Measured, db: &Spread, name: &str) -> String {
    let io = |a: Access| {
        m.db.iter()
            .find(|run| run.access == a)
            .map_or((0, 0), |run| (run.nvme_commands, run.ssd_flushes))
    };
    let ((dc, df), (rc, rf)) = (io(Access::Direct), io(Access::Redirected));
    let why = match db.rows.iter().find(|r| r.0 == name) {
        Some(r) if r.3.abs() < 0.5 => format!(
            "{name} made no file call on either path: its reads stayed in LevelDB's \
             memtable and block cache. "
        ),
        _ => String::new(),
    };
    format!(
        "N = {} 100-byte values (Hayagui's fork: fillsync = N synchronous puts). \
         {why}The whole run: direct {dc} NVMe commands and {df} flushes, redirected \
         {rc} and {rf}.",
        m.sizes.db_num
    )
}

/// The baseline's load-target share beside the paper's, its note written from the run's
/// counts: how loading the target spent its time, and how the other phases compare with the
/// paper's per unit of work (per reference base indexed, per read matched), which is where
/// a share differs when the loading agrees.
fn load_target_share_claim(m: &Measured, ds: &str, row: &[f64; 6], r: &GenomeRun) -> Claim {
    let secs = |p: Phase| phase_of(r, p).map_or(0.0, |t| t.ns as f64 / 1e9);
    let paper_total: f64 = row.iter().sum();
    let paper_load = paper_phase_s(row, Phase::LoadTarget);
    let ours_total = r.total_ns as f64 / 1e9;
    let ours_load = secs(Phase::LoadTarget);
    let scale = match m.sizes.genome_scale {
        1 => "at the derived full sizes".to_string(),
        n => format!("at 1/{n} of the derived sizes"),
    };
    let mut note = format!(
        "Data {scale}. The paper's table: {paper_load} of {paper_total:.3} s loading the \
         target. Ours: {ours_load:.3} of {ours_total:.3} s."
    );
    if let Some(load) = phase_of(r, Phase::LoadTarget) {
        note.push_str(&load_target_note(m, load));
    }
    note.push_str(&other_phases_note(ds, row, r));
    Claim {
        id: format!("genome_{ds}_load_target_share_redirected"),
        description: format!("Baseline genome run ({ds}): loading the target's share of the total"),
        paper: paper_load / paper_total * 100.0,
        ours: phase_share(r, Phase::LoadTarget),
        unit: "%".into(),
        note,
        reference: Reference::PaperFigure,
        // A share of the run's time: a level, with no direction.
        baseline: None,
    }
}

/// The timing of phase `p` of run `r`, if it ran.
fn phase_of(r: &GenomeRun, p: Phase) -> Option<&PhaseTime> {
    r.phases.iter().find(|t| t.phase == p)
}

/// How loading the target spent its time (`load`): the stream buffer's refills, each a
/// redirected call split into redirection, VEOS copy and the host's share, and the parsing.
fn load_target_note(m: &Measured, load: &PhaseTime) -> String {
    let cfg = &m.cfg;
    let calls = load.counts.io_calls.max(1);
    let io_ns = load.ns - load.compute_ns;
    let copy_ns = cfg
        .redirect
        .rates()
        .copy_ns(true, u64::from(cfg.genome.fasta_buffer_bytes));
    let overhead_ns = cfg.redirect.call_overhead_ns;
    let host_ns = (io_ns as f64 / calls as f64) - (overhead_ns + copy_ns) as f64;
    format!(
        " Loading it reads {:.1} MB in {} refills of the {} KiB stream buffer, each a \
         redirected call: {:.3} s in calls ({:.1} µs each: {:.1} redirection, {:.1} VEOS \
         copy, {:.1} host file system and SSD) and {:.3} s parsing on the VE's scalar core.",
        load.counts.bytes_read as f64 / 1e6,
        load.counts.io_calls,
        cfg.genome.fasta_buffer_bytes >> 10,
        io_ns as f64 / 1e9,
        io_ns as f64 / calls as f64 / 1e3,
        overhead_ns as f64 / 1e3,
        copy_ns as f64 / 1e3,
        host_ns / 1e3,
        load.compute_ns as f64 / 1e9,
    )
}

/// The phases other than loading the target, ours against the paper's table (`row`) of
/// data set `ds`, per unit of work: per reference base indexed and per read matched.
fn other_phases_note(ds: &str, row: &[f64; 6], r: &GenomeRun) -> String {
    let phase = |p: Phase| phase_of(r, p);
    let secs = |p: Phase| phase(p).map_or(0.0, |t| t.ns as f64 / 1e9);
    let paper_total: f64 = row.iter().sum();
    let paper_load = paper_phase_s(row, Phase::LoadTarget);
    let ours_total = r.total_ns as f64 / 1e9;
    let ours_other = ours_total - secs(Phase::LoadTarget);
    let full = nearflash_genome::DatasetSizes::full(ds).expect("a built-in data set");
    let reference_bases = phase(Phase::LoadReference).map_or(0, |t| t.counts.bases_parsed);
    let per = |s: f64, n: u64| s * 1e9 / n.max(1) as f64;
    format!(
        " The other phases: the paper's {:.3} s ({:.1} %), ours {ours_other:.3} s ({:.1} %): \
         indexing {:.1} ns a reference base against the paper's {:.0} (its {} s over the \
         {:.2} Mbp its load-reference time implies), matching {:.1} ns a read against its {:.0}.",
        paper_total - paper_load,
        (paper_total - paper_load) / paper_total * 100.0,
        ours_other / ours_total.max(f64::MIN_POSITIVE) * 100.0,
        per(secs(Phase::IndexReference), reference_bases),
        per(
            paper_phase_s(row, Phase::IndexReference),
            full.reference_len_bases
        ),
        paper_phase_s(row, Phase::IndexReference),
        full.reference_len_bases as f64 / 1e6,
        per(secs(Phase::Matching), r.reads),
        per(paper_phase_s(row, Phase::Matching), full.read_count),
    )
}

/// The note of one YCSB workload's pair: the data and operations, and what its file calls
/// did on each path.
fn ycsb_note(m: &Measured, workload: &str) -> String {
    format!(
        "{} records of 10 × 100 B, as many operations, every read and scan checked. {}",
        m.sizes.ycsb_records,
        ycsb_why(m, workload)
    )
}

/// The note of the genome pairs: the data sets' scale and how the application reads its
/// files.
fn genome_note(m: &Measured) -> String {
    let cfg = &m.cfg;
    format!(
        "Data sets at 1/{} of the sizes derived from the paper's (the k = 12 \
         index's 4^12-entry offset table does not scale down, so saving and loading the \
         index weigh more than in the paper); FASTA files read through a {} KiB stream \
         buffer (one read call per refill), the index in calls of {} KiB.",
        m.sizes.genome_scale,
        cfg.genome.fasta_buffer_bytes >> 10,
        cfg.genome.chunk_bytes >> 10
    )
}
