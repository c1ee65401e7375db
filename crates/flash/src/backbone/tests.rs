//! Backbone timing and fault tests on a tiny geometry.

use super::*;
use crate::store::{MemoryStore, NoStore};
use nearflash_sim::{EventQueue, Model, Sim};

fn cfg() -> FlashConfig {
    FlashConfig {
        channels: 2,
        packages_per_channel: 1,
        dies_per_package: 2,
        planes_per_die: 2,
        blocks_per_plane: 4,
        pages_per_block: 8,
        page_size_bytes: 64,
        oob_size_bytes: 64,
        read_latency_us: 50.0,
        program_latency_us: 500.0,
        erase_latency_us: 3000.0,
        read_latency_by_page_type_us: None,
        program_latency_by_page_type_us: None,
        channel_rate_mb_s: 128.0, // 128 bytes per microsecond: one page + spare per us
        command_overhead_ns: 0,
        endurance_pe_cycles: 2,
        program_fail_probability: 0.0,
        erase_fail_probability: 0.0,
        media: Default::default(),
        one_shot_pages: 1,
    }
}

fn op(kind: OpKind, die: u32, page: u32, mask: u8, tag: u64) -> FlashOp {
    FlashOp {
        kind,
        die: DieId(die),
        page,
        pages: 1,
        plane_mask: mask,
        plane_blocks: [1; PLANES_MAX],
        tag,
        data: Vec::new(),
        oob: Vec::new(),
        slc: false,
    }
}

/// The backbone alone on the one loop, keeping each completion with the time it came.
struct Rig<'a> {
    bb: &'a mut Backbone,
    done: Vec<(SimTime, FlashCompletion)>,
}

impl Model for Rig<'_> {
    type Event = FlashEvent;

    fn handle(&mut self, ev: FlashEvent, q: &mut EventQueue<FlashEvent>, rng: &mut SimRng) {
        let mut done = Vec::new();
        self.bb.handle(ev, q, rng, &mut done);
        let now = q.now();
        self.done.extend(done.into_iter().map(|c| (now, c)));
    }
}

/// Steps the loop until no event is pending; the completions with their times, in order.
fn drain(bb: &mut Backbone, sim: &mut Sim<FlashEvent>) -> Vec<(SimTime, FlashCompletion)> {
    let mut rig = Rig {
        bb,
        done: Vec::new(),
    };
    while sim.step(&mut rig) {}
    rig.done
}

/// Runs the backbone until idle; returns (tag, completion time) in completion order.
fn run(bb: &mut Backbone, sim: &mut Sim<FlashEvent>) -> Vec<(u64, u64, OpStatus)> {
    drain(bb, sim)
        .into_iter()
        .map(|(t, c)| (c.op.tag, t.as_ns(), c.status))
        .collect()
}

#[test]
fn single_read_takes_tr_plus_transfer() {
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(op(OpKind::Read, 0, 0, 0b01, 7), sim.queue());
    assert_eq!(run(&mut bb, &mut sim), vec![(7, 51_000, OpStatus::Ok)]);
    assert_eq!(bb.stats().page_reads, 1);
}

#[test]
fn slc_mode_ops_take_the_slc_latencies_and_native_ops_do_not() {
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    bb.set_slc_mode_latencies(SimDuration::from_us(20), SimDuration::from_us(150));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    // Die 0: an SLC-mode program (1 us transfer + 150 us), then an SLC-mode read of it
    // (20 us + 1 us transfer). Die 2 (other channel): a native read (50 + 1 us).
    let mut p = op(OpKind::Program, 0, 0, 0b01, 1);
    p.slc = true;
    bb.submit(p, sim.queue());
    let mut r = op(OpKind::Read, 0, 0, 0b01, 2);
    r.slc = true;
    bb.submit(r, sim.queue());
    bb.submit(op(OpKind::Read, 2, 0, 0b01, 3), sim.queue());
    assert_eq!(
        run(&mut bb, &mut sim),
        vec![
            (3, 51_000, OpStatus::Ok),
            (1, 151_000, OpStatus::Ok),
            (2, 172_000, OpStatus::Ok),
        ]
    );
}

#[test]
fn multi_plane_read_shares_tr_and_carries_both_pages() {
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(op(OpKind::Read, 0, 0, 0b11, 7), sim.queue());
    assert_eq!(run(&mut bb, &mut sim), vec![(7, 52_000, OpStatus::Ok)]);
    assert_eq!(bb.stats().page_reads, 2);
}

#[test]
fn reads_on_one_die_serialize_and_dies_on_one_channel_share_the_bus() {
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    // Dies 0 and 1 share channel 0; die 2 is on channel 1.
    bb.submit(op(OpKind::Read, 0, 0, 1, 1), sim.queue());
    bb.submit(op(OpKind::Read, 0, 1, 1, 2), sim.queue());
    bb.submit(op(OpKind::Read, 1, 0, 1, 3), sim.queue());
    bb.submit(op(OpKind::Read, 2, 0, 1, 4), sim.queue());
    let got = run(&mut bb, &mut sim);
    // Die 0 and die 1 finish tR at 50 us together: the bus serves die 0 first (51), then die 1
    // (52). Die 0's second read starts at 51 and finishes at 102. Die 2 has its own bus.
    assert_eq!(
        got,
        vec![
            (1, 51_000, OpStatus::Ok),
            (4, 51_000, OpStatus::Ok),
            (3, 52_000, OpStatus::Ok),
            (2, 102_000, OpStatus::Ok),
        ]
    );
    let busy = bb.die_busy_ns(SimTime(102_000));
    assert_eq!(busy[0], 102_000);
    assert_eq!(
        busy[1], 52_000,
        "die 1 holds its register until the bus drains it"
    );
    assert_eq!(bb.channel_busy_ns(SimTime(102_000))[0], 3_000);
}

#[test]
fn program_lands_in_store_after_transfer_and_tprog() {
    let mut bb = Backbone::new(&cfg(), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let mut o = op(OpKind::Program, 3, 0, 0b01, 9);
    o.data = vec![0xAB; 64];
    o.oob = vec![0xCD; 64];
    bb.submit(o, sim.queue());
    assert_eq!(run(&mut bb, &mut sim), vec![(9, 501_000, OpStatus::Ok)]);
    let mut r = op(OpKind::Read, 3, 0, 0b01, 10);
    r.plane_blocks = [1; PLANES_MAX];
    bb.submit(r, sim.queue());
    let done = drain(&mut bb, &mut sim);
    assert_eq!(done[0].1.op.data, vec![0xAB; 64]);
    assert_eq!(done[0].1.op.oob, vec![0xCD; 64]);
}

#[test]
#[should_panic(expected = "programmed in order")]
fn skipping_a_page_breaks_the_nand_rule() {
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(op(OpKind::Program, 0, 1, 1, 0), sim.queue());
}

#[test]
fn erase_beyond_endurance_turns_the_block_bad() {
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    for tag in 0..3 {
        bb.submit(op(OpKind::Erase, 0, 0, 1, tag), sim.queue());
    }
    let got = run(&mut bb, &mut sim);
    assert_eq!(got[0].2, OpStatus::Ok);
    assert_eq!(got[1].2, OpStatus::Ok);
    assert_eq!(got[2].2, OpStatus::Failed { plane_mask: 1 });
    assert_eq!(got[2].1, 9_000_000);
    let b = bb.geometry().block_id(DieId(0), 0, 1);
    assert!(bb.nand().is_bad(b));
    assert_eq!(bb.stats().erase_failures, 1);
}

#[test]
fn injected_program_failure_reports_the_plane_and_marks_it_bad() {
    let mut c = cfg();
    c.program_fail_probability = 1.0;
    let mut bb = Backbone::new(&c, Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(op(OpKind::Program, 0, 0, 0b10, 1), sim.queue());
    let got = run(&mut bb, &mut sim);
    assert_eq!(got[0].2, OpStatus::Failed { plane_mask: 0b10 });
    assert!(bb.nand().is_bad(bb.geometry().block_id(DieId(0), 1, 1)));
}

#[test]
fn power_cut_during_tprog_leaves_garbage_not_data() {
    let mut bb = Backbone::new(&cfg(), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(3);
    let mut o = op(OpKind::Program, 0, 0, 0b01, 9);
    o.data = vec![0xAB; 64];
    o.oob = vec![0xCD; 64];
    bb.submit(o, sim.queue());
    // First event: the bus transfer ends and tPROG begins.
    let mut rig = Rig {
        bb: &mut bb,
        done: Vec::new(),
    };
    assert!(sim.step(&mut rig));
    assert!(rig.done.is_empty());
    assert!(bb.executing(OpKind::Program));
    let report = bb.power_cut(sim.rng());
    assert_eq!(report.torn_program_pages, 1);
    let (mut d, mut oob) = (vec![0u8; 64], vec![0u8; 64]);
    let page = bb
        .geometry()
        .page_id(bb.geometry().block_id(DieId(0), 0, 1), 0);
    bb.store_mut().read(page, &mut d, &mut oob);
    assert_ne!(d, vec![0xAB; 64]);
    assert_eq!(bb.in_flight(), 0);
}

#[test]
fn saturated_channel_delivers_its_rate_and_never_more() {
    // Many single-plane reads over both dies of channel 0: tR (50 us) overlaps across dies, so
    // the 1 us-per-page bus would be the limit if dies were many; with 2 dies and 51 us per read
    // the die limit (2 pages per 51 us) binds. Measured time must match that limit exactly.
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let n = 100;
    for i in 0..n {
        bb.submit(op(OpKind::Read, i % 2, 0, 1, u64::from(i)), sim.queue());
    }
    let got = run(&mut bb, &mut sim);
    let end = got.iter().map(|g| g.1).max().unwrap();
    let die_limit_ns = u64::from(n / 2) * 51_000;
    assert!(end >= die_limit_ns, "faster than the die limit: {end}");
    assert!(end <= die_limit_ns + 1_000, "slower than expected: {end}");
}

#[test]
fn program_queued_behind_a_failing_program_to_the_same_block_fails_too() {
    let mut c = cfg();
    c.program_fail_probability = 1.0;
    let mut bb = Backbone::new(&c, Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    // Both are queued before the first fails; the second reaches a block that is now bad.
    bb.submit(op(OpKind::Program, 0, 0, 0b01, 1), sim.queue());
    bb.submit(op(OpKind::Program, 0, 1, 0b01, 2), sim.queue());
    let got = run(&mut bb, &mut sim);
    assert_eq!(got[0].2, OpStatus::Failed { plane_mask: 1 });
    assert_eq!(got[1].2, OpStatus::Failed { plane_mask: 1 });
    assert_eq!(bb.stats().program_failures, 2);
    // The refused program never reached the array: the block's write pointer did not move.
    assert_eq!(
        bb.nand().write_ptr(bb.geometry().block_id(DieId(0), 0, 1)),
        1
    );
}

#[test]
fn power_cut_during_data_transfer_leaves_the_page_erased_and_programmable() {
    let mut bb = Backbone::new(&cfg(), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let mut o = op(OpKind::Program, 0, 0, 0b01, 9);
    o.data = vec![0xAB; 64];
    o.oob = vec![0xCD; 64];
    bb.submit(o.clone(), sim.queue());
    assert!(bb.executing(OpKind::Program));
    let report = bb.power_cut(&mut SimRng::seed_from_u64(3));
    assert_eq!(report.dropped_programs, 1);
    assert_eq!(report.torn_program_pages, 0);
    let b = bb.geometry().block_id(DieId(0), 0, 1);
    assert_eq!(bb.nand().write_ptr(b), 0);
    // The same page can be programmed again without an erase.
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(o, sim.queue());
    let got = run(&mut bb, &mut sim);
    assert_eq!(got[0].2, OpStatus::Ok);
}

/// Media errors that make every programmed page need exactly two read-retry steps: one
/// codeword covers the page, λ = 0.5 × 131,792 bits ≈ 65,896 errors at the first read (the
/// ECC's t = 40 fails with certainty), ≈ 659 after one step (fails), ≈ 6.6 after two
/// (P(X > 40) < 1e-20: decodes).
fn two_retry_media(steps_max: u32) -> FlashConfig {
    let mut c = cfg();
    c.media = crate::MediaConfig {
        enabled: true,
        // The whole RBER is a retention shift (N^0 · t^0 = 1), which retries reduce.
        rber_floor: 0.0,
        rber_wear_coeff: 0.0,
        rber_retention_coeff: 0.5,
        rber_retention_pe_exponent: 0.0,
        rber_retention_exponent: 0.0,
        rber_disturb_coeff: 0.0,
        codeword_bytes: 16384,
        correctable_bits: 40,
        read_retry_steps_max: steps_max,
        read_retry_rber_factor: 0.01,
        retire_error_reads: 1,
        ..crate::MediaConfig::default()
    };
    c.validate().unwrap();
    c
}

/// Programs page 0 of block 1 on die 0, plane 0 with `0xAB`s; returns when it landed.
fn program_page(bb: &mut Backbone, sim: &mut Sim<FlashEvent>) -> u64 {
    let mut o = op(OpKind::Program, 0, 0, 0b01, 1);
    o.data = vec![0xAB; 64];
    o.oob = vec![0xCD; 64];
    bb.submit(o, sim.queue());
    run(bb, sim)[0].1
}

fn read_page(bb: &mut Backbone, sim: &mut Sim<FlashEvent>) -> (u64, FlashCompletion) {
    bb.submit(op(OpKind::Read, 0, 0, 0b01, 2), sim.queue());
    *sim.rng() = SimRng::seed_from_u64(5);
    let mut done = drain(bb, sim);
    assert_eq!(done.len(), 1);
    let (at, c) = done.pop().expect("one");
    (at.as_ns(), c)
}

#[test]
fn a_read_needing_two_retries_costs_three_times_tr_plus_transfer_on_an_idle_die() {
    let mut bb = Backbone::new(&two_retry_media(7), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let programmed = program_page(&mut bb, &mut sim);
    let (done_at, c) = read_page(&mut bb, &mut sim);
    // Hand computation: tR = 50 us, transfer of one page + spare = 128 B at 128 B/us = 1 us;
    // the first read and each of the 2 retries cost tR + transfer.
    assert_eq!(c.read_retries, 2);
    assert_eq!(done_at - programmed, 3 * (50_000 + 1_000));
    assert_eq!(c.status, OpStatus::Ok);
    assert_eq!(
        c.op.data,
        vec![0xAB; 64],
        "corrected data is the data written"
    );
    // The retries occupied the die and the bus as real operations.
    let now = SimTime(done_at);
    assert_eq!(bb.die_busy_ns(now)[0], 501_000 + 153_000);
    assert_eq!(bb.channel_busy_ns(now)[0], 1_000 + 3_000);
    let m = bb.media_stats().unwrap();
    assert_eq!(m.read_retries_by_step, vec![1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(
        bb.stats().page_reads,
        1,
        "retries are not extra host-visible reads"
    );
    assert_eq!(
        c.weak_planes, 0b01,
        "retire_error_reads = 1: the first helped read"
    );
}

#[test]
fn a_read_that_exhausts_its_retries_is_uncorrectable_and_its_data_is_not_trusted() {
    let mut bb = Backbone::new(&two_retry_media(1), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let programmed = program_page(&mut bb, &mut sim);
    let (done_at, c) = read_page(&mut bb, &mut sim);
    assert_eq!(c.status, OpStatus::Uncorrectable { plane_mask: 0b01 });
    assert_eq!(c.read_retries, 1);
    assert_eq!(done_at - programmed, 2 * 51_000);
    assert_ne!(
        c.op.data,
        vec![0xAB; 64],
        "a failed decode leaves wrong bits"
    );
    assert_eq!(bb.media_stats().unwrap().uncorrectable_page_reads, 1);
}

#[test]
fn erased_pages_are_not_decoded_and_media_off_draws_no_randomness() {
    let mut bb = Backbone::new(&two_retry_media(7), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let (done_at, c) = read_page(&mut bb, &mut sim);
    assert_eq!(
        (done_at, c.read_retries, c.status),
        (51_000, 0, OpStatus::Ok)
    );
    // Media off: identical timing and status to the model without media errors.
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    program_page(&mut bb, &mut sim);
    let (_, c) = read_page(&mut bb, &mut sim);
    assert_eq!((c.read_retries, c.status), (0, OpStatus::Ok));
    assert!(bb.media_stats().is_none());
}

#[test]
fn erase_resets_retention_and_read_disturb_but_wear_accumulates() {
    let mut c = cfg();
    c.endurance_pe_cycles = 100;
    c.media.enabled = true;
    c.media.initial_pe_cycles = 40;
    c.validate().unwrap();
    let mut bb = Backbone::new(&c, Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    assert_eq!(
        bb.nand().pe_cycles(bb.geometry().block_id(DieId(0), 0, 1)),
        40
    );
    bb.submit(op(OpKind::Erase, 0, 0, 0b01, 1), sim.queue());
    run(&mut bb, &mut sim);
    assert_eq!(
        bb.nand().pe_cycles(bb.geometry().block_id(DieId(0), 0, 1)),
        41
    );
}

/// Reads one programmed 4 KiB page (4 codewords) `reads` times on a device whose blocks start
/// with `pe_cycles` of wear and data one year old; returns the uncorrectable fraction and the
/// model's expectation for it.
fn end_of_life_reads(pe_cycles: u32, reads: u32) -> (f64, f64) {
    let mut c = cfg();
    c.page_size_bytes = 4096;
    c.channel_rate_mb_s = 400.0;
    c.endurance_pe_cycles = 100_000;
    c.media = crate::MediaConfig {
        enabled: true,
        initial_pe_cycles: pe_cycles,
        retention_offset_days: 365.0,
        // Read disturb off so that every read sees the same RBER.
        rber_disturb_coeff: 0.0,
        ..crate::MediaConfig::default()
    };
    c.validate().unwrap();
    let mut bb = Backbone::new(&c, Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(op(OpKind::Program, 0, 0, 0b01, 0), sim.queue());
    run(&mut bb, &mut sim);
    for i in 0..reads {
        bb.submit(op(OpKind::Read, 0, 0, 0b01, u64::from(i) + 1), sim.queue());
    }
    *sim.rng() = SimRng::seed_from_u64(u64::from(pe_cycles));
    let failed = drain(&mut bb, &mut sim)
        .iter()
        .filter(|(_, c)| matches!(c.status, OpStatus::Uncorrectable { .. }))
        .count() as u32;
    let m = &c.media;
    // Retention measured from the program (microseconds) adds nothing visible to a year.
    let q_cw = m.codeword_loss_probability(m.rber(pe_cycles, 365.0, 0));
    let expected = 1.0 - (1.0 - q_cw).powi(4);
    (f64::from(failed) / f64::from(reads), expected)
}

#[test]
fn past_rated_endurance_the_uncorrectable_rate_rises_as_the_model_says() {
    let reads = 2000;
    let mut last = -1.0;
    for pe in [3000, 5000, 5500, 6000, 6500] {
        let (rate, expected) = end_of_life_reads(pe, reads);
        let sigma = (expected * (1.0 - expected) / f64::from(reads)).sqrt();
        assert!(
            (rate - expected).abs() <= 5.0 * sigma + 1e-3,
            "P/E {pe}: measured {rate}, model {expected}"
        );
        assert!(rate >= last, "P/E {pe}: {rate} after {last}");
        last = rate;
    }
    // At the rated 3000 cycles nothing is lost (retries undo a year of retention); by 6500
    // nearly half the reads of a 4-codeword page are.
    assert_eq!(end_of_life_reads(3000, 500).0, 0.0);
    assert!(last > 0.4, "{last}");
}

#[test]
fn same_seed_same_media_counts_different_seed_different_draws() {
    let stats = |seed: u64| {
        let mut c = two_retry_media(7);
        c.media.rber_retention_coeff = 4.6 / c.media.codeword_bits() as f64;
        c.media.read_retry_rber_factor = 0.9;
        let mut bb = Backbone::new(&c, Box::new(NoStore));
        let mut sim: Sim<FlashEvent> = Sim::new(1);
        bb.submit(op(OpKind::Program, 0, 0, 0b01, 0), sim.queue());
        run(&mut bb, &mut sim);
        for i in 0..200 {
            bb.submit(op(OpKind::Read, 0, 0, 0b01, i + 1), sim.queue());
        }
        *sim.rng() = SimRng::seed_from_u64(seed);
        drain(&mut bb, &mut sim);
        bb.media_stats().unwrap().clone()
    };
    assert_eq!(stats(3), stats(3));
    assert_ne!(stats(3), stats(4));
    assert!(stats(3).bits_corrected > 0);
}

// One-shot programs (`flash.one_shot_pages`): a word line's pages in one operation.

/// `cfg()` with two-page word lines.
fn one_shot_cfg() -> FlashConfig {
    FlashConfig {
        one_shot_pages: 2,
        ..cfg()
    }
}

/// A one-shot program of pages `page..page + 2` on both planes of die 0, each page filled
/// with its own byte (`tag + page × 2 + plane`).
fn word_line(page: u32, tag: u64) -> FlashOp {
    let mut o = op(OpKind::Program, 0, page, 0b11, tag);
    o.pages = 2;
    for i in 0..4u8 {
        o.data.extend([tag as u8 + i; 64]);
        o.oob.extend([0x80 + tag as u8 + i; 64]);
    }
    o
}

#[test]
fn a_one_shot_program_carries_every_page_then_takes_one_tprog_and_lands_each_page() {
    let mut bb = Backbone::new(&one_shot_cfg(), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(word_line(0, 10), sim.queue());
    // Four pages (two rows × two planes) at one page + spare per us, then one tPROG.
    assert_eq!(
        run(&mut bb, &mut sim),
        vec![(10, 4_000 + 500_000, OpStatus::Ok)]
    );
    assert_eq!(bb.stats().page_programs, 4);
    assert_eq!(bb.stats().die_ops, 1);
    // Reads stay per page: page r of plane p holds byte 10 + r × 2 + p.
    for page in 0..2 {
        let mut r = op(OpKind::Read, 0, page, 0b11, 20);
        r.plane_blocks = [1; PLANES_MAX];
        bb.submit(r, sim.queue());
        let done = drain(&mut bb, &mut sim);
        let c = &done[0].1;
        for plane in 0..2usize {
            let b = 10 + page as u8 * 2 + plane as u8;
            assert_eq!(c.op.data[plane * 64..(plane + 1) * 64], [b; 64]);
            assert_eq!(c.op.oob[plane * 64..(plane + 1) * 64], [0x80 + b; 64]);
        }
    }
}

#[test]
fn one_shot_word_lines_take_one_tprog_where_single_pages_take_one_each() {
    // Four pages of one plane: two word lines against four single-page programs.
    let word_lines = {
        let mut bb = Backbone::new(&one_shot_cfg(), Box::new(NoStore));
        let mut sim: Sim<FlashEvent> = Sim::new(1);
        for page in [0, 2] {
            let mut o = op(OpKind::Program, 0, page, 0b01, 1);
            o.pages = 2;
            bb.submit(o, sim.queue());
        }
        run(&mut bb, &mut sim).last().unwrap().1
    };
    let pages = {
        let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
        let mut sim: Sim<FlashEvent> = Sim::new(1);
        for page in 0..4 {
            bb.submit(op(OpKind::Program, 0, page, 0b01, 1), sim.queue());
        }
        run(&mut bb, &mut sim).last().unwrap().1
    };
    assert_eq!(word_lines, 2 * (2_000 + 500_000));
    assert_eq!(pages, 4 * (1_000 + 500_000));
}

#[test]
fn single_page_programs_still_work_beside_word_lines_and_keep_the_order() {
    let mut bb = Backbone::new(&one_shot_cfg(), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(word_line(0, 10), sim.queue());
    // Pages 2 and 3 one at a time (e.g. a checkpoint's), then the next word line.
    for page in [2, 3] {
        let mut o = op(OpKind::Program, 0, page, 0b11, 1);
        o.data = vec![1; 128];
        o.oob = vec![1; 128];
        bb.submit(o, sim.queue());
    }
    bb.submit(word_line(4, 30), sim.queue());
    let got = run(&mut bb, &mut sim);
    assert!(got.iter().all(|g| g.2 == OpStatus::Ok), "{got:?}");
    let b = bb.geometry().block_id(DieId(0), 1, 1);
    assert_eq!(bb.nand().write_ptr(b), 6);
}

#[test]
#[should_panic(expected = "programmed in order")]
fn a_word_line_past_the_next_page_breaks_the_nand_rule() {
    let mut bb = Backbone::new(&one_shot_cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let mut o = op(OpKind::Program, 0, 2, 0b01, 1);
    o.pages = 2;
    bb.submit(o, sim.queue());
}

#[test]
#[should_panic(expected = "starts a word line")]
fn a_word_line_must_start_at_a_multiple_of_its_pages() {
    let mut bb = Backbone::new(&one_shot_cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(op(OpKind::Program, 0, 0, 0b01, 1), sim.queue());
    let mut o = op(OpKind::Program, 0, 1, 0b01, 2);
    o.pages = 2;
    bb.submit(o, sim.queue());
}

#[test]
#[should_panic(expected = "only a native program")]
fn slc_mode_programs_are_one_page_per_word_line() {
    let mut bb = Backbone::new(&one_shot_cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let mut o = op(OpKind::Program, 0, 0, 0b01, 1);
    o.pages = 2;
    o.slc = true;
    bb.submit(o, sim.queue());
}

#[test]
#[should_panic(expected = "only a native program")]
fn a_multi_page_op_needs_one_shot_programs_on() {
    let mut bb = Backbone::new(&cfg(), Box::new(NoStore));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    let mut o = op(OpKind::Program, 0, 0, 0b01, 1);
    o.pages = 2;
    bb.submit(o, sim.queue());
}

#[test]
fn a_failed_word_line_fails_its_plane_and_junks_every_page_of_it() {
    let mut c = one_shot_cfg();
    c.program_fail_probability = 1.0;
    let mut bb = Backbone::new(&c, Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(word_line(0, 10), sim.queue());
    let got = run(&mut bb, &mut sim);
    assert_eq!(got[0].2, OpStatus::Failed { plane_mask: 0b11 });
    assert_eq!(bb.stats().program_failures, 2);
    for plane in 0..2 {
        let b = bb.geometry().block_id(DieId(0), plane, 1);
        assert!(bb.nand().is_bad(b));
        for page in 0..2 {
            let (mut d, mut oob) = (vec![0u8; 64], vec![0u8; 64]);
            let id = bb.geometry().page_id(b, page);
            bb.store_mut().read(id, &mut d, &mut oob);
            assert_ne!(d, vec![10 + page as u8 * 2 + plane as u8; 64]);
        }
    }
}

#[test]
fn a_power_cut_tears_every_page_of_a_word_line_in_tprog() {
    let mut bb = Backbone::new(&one_shot_cfg(), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(3);
    bb.submit(word_line(0, 10), sim.queue());
    let mut rig = Rig {
        bb: &mut bb,
        done: Vec::new(),
    };
    assert!(sim.step(&mut rig)); // the transfer ends, tPROG begins
    let report = bb.power_cut(sim.rng());
    assert_eq!(report.torn_program_pages, 4);
}

#[test]
fn a_power_cut_during_a_word_lines_transfer_leaves_it_erased_and_programmable() {
    let mut bb = Backbone::new(&one_shot_cfg(), Box::new(MemoryStore::new(512, 64)));
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(word_line(0, 10), sim.queue());
    let report = bb.power_cut(&mut SimRng::seed_from_u64(3));
    assert_eq!(report.dropped_programs, 1);
    for plane in 0..2 {
        let b = bb.geometry().block_id(DieId(0), plane, 1);
        assert_eq!(bb.nand().write_ptr(b), 0);
    }
    let mut sim: Sim<FlashEvent> = Sim::new(1);
    bb.submit(word_line(0, 10), sim.queue());
    assert_eq!(run(&mut bb, &mut sim)[0].2, OpStatus::Ok);
}

#[test]
fn one_shot_pages_must_split_blocks_into_word_lines() {
    let field = |c: FlashConfig| match c.validate() {
        Err(crate::ConfigError::Invalid { field, .. }) => field,
        Ok(()) => "ok".into(),
    };
    assert_eq!(field(one_shot_cfg()), "ok");
    for k in [0, 3, 5] {
        let c = FlashConfig {
            one_shot_pages: k,
            ..cfg()
        };
        assert_eq!(field(c), "flash.one_shot_pages", "one_shot_pages = {k}");
    }
    let c = FlashConfig {
        program_latency_by_page_type_us: Some(vec![300.0, 500.0]),
        ..one_shot_cfg()
    };
    assert_eq!(field(c), "flash.one_shot_pages");
}
