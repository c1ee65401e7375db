//! Per-screen data footprints: extents stay inside their sections, screens of one
//! microblock never write bytes another screen of it reads or writes (bfs's benign race
//! excepted), and every element a screen actually changes lies inside its write extents.

use nearflash_kernels::*;
use std::ops::Range;

fn plan() -> ScreenPlan {
    ScreenPlan::new(4)
}

fn overlaps(a: &Extent, b: &Extent) -> bool {
    if a.section != b.section {
        return false;
    }
    let bi: Vec<Range<u64>> = b.intervals().filter(|r| !r.is_empty()).collect();
    a.intervals()
        .filter(|r| !r.is_empty())
        .any(|x| bi.iter().any(|y| x.start < y.end && y.start < x.end))
}

#[test]
fn extents_lie_inside_their_sections() {
    for name in KERNELS {
        let k = build(name, Dataset::Mini, plan()).unwrap();
        let d = k.desc();
        for (mb, m) in d.microblocks.iter().enumerate() {
            let n = match m.kind {
                MicroblockKind::Serial => 1,
                MicroblockKind::Screens(n) => n,
            };
            for s in 0..n {
                let fp = footprint(k.as_ref(), mb, s).unwrap();
                assert!(!fp.is_empty(), "{name} mb {mb} screen {s}");
                for e in fp {
                    assert!(
                        e.end_bytes() <= d.sections[e.section].bytes,
                        "{name} mb {mb} screen {s}: {e:?} beyond {}",
                        d.sections[e.section].name
                    );
                }
            }
        }
    }
}

#[test]
fn screens_of_a_microblock_do_not_conflict() {
    for name in KERNELS {
        if *name == "bfs" {
            continue; // Rodinia's expand writes cost/updating of any node (benign race).
        }
        let k = build(name, Dataset::Mini, plan()).unwrap();
        for (mb, m) in k.desc().microblocks.iter().enumerate() {
            let MicroblockKind::Screens(n) = m.kind else {
                continue;
            };
            let fps: Vec<Vec<Extent>> = (0..n)
                .map(|s| footprint(k.as_ref(), mb, s).unwrap())
                .collect();
            for a in 0..n as usize {
                for b in 0..n as usize {
                    if a == b {
                        continue;
                    }
                    for wa in fps[a].iter().filter(|e| e.writes()) {
                        for eb in &fps[b] {
                            assert!(
                                !overlaps(wa, eb),
                                "{name} mb {mb}: screen {a} writes {wa:?}, screen {b} touches {eb:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn every_changed_element_is_inside_a_write_extent() {
    for name in KERNELS {
        let k = build(name, Dataset::Mini, plan()).unwrap();
        let d = k.desc();
        let mut st = k.init();
        for (mb, m) in d.microblocks.iter().enumerate() {
            let units: Vec<u32> = match m.kind {
                MicroblockKind::Serial => vec![0],
                MicroblockKind::Screens(n) => (0..n).collect(),
            };
            for s in units {
                let before = st.clone();
                match m.kind {
                    MicroblockKind::Serial => run_serial(k.as_ref(), mb, &mut st).unwrap(),
                    MicroblockKind::Screens(_) => run_screen(k.as_ref(), mb, s, &mut st).unwrap(),
                }
                let fp = footprint(k.as_ref(), mb, s).unwrap();
                for (a0, a1) in before.arrays().iter().zip(st.arrays()) {
                    let Some(sec) = d.sections.iter().position(|x| x.name == a0.name) else {
                        continue;
                    };
                    let len = a1.data.len() as u64;
                    if len == 0
                        || a0.data.len() != a1.data.len()
                        || !d.sections[sec].bytes.is_multiple_of(len)
                    {
                        continue;
                    }
                    let eb = d.sections[sec].bytes / len;
                    for i in 0..a1.data.len() {
                        let (x, y) = (a0.data.get_f64(i), a1.data.get_f64(i));
                        if x.to_bits() == y.to_bits() {
                            continue;
                        }
                        let at = i as u64 * eb;
                        let covered = fp
                            .iter()
                            .filter(|e| e.section == sec && e.writes())
                            .any(|e| e.intervals().any(|r| r.start <= at && at + eb <= r.end));
                        assert!(
                            covered,
                            "{name} mb {mb} screen {s}: {}[{i}] changed outside the footprint",
                            a0.name
                        );
                    }
                }
            }
        }
    }
}

/// Overwrite every element of a section-backed array that no read extent of the unit
/// covers; integers get a large value, floats NaN.
fn poison_unread(d: &KernelDesc, fp: &[Extent], st: &State) -> State {
    let mut out = State::new();
    for a in st.arrays() {
        let mut data = a.data.clone();
        let sec = d.sections.iter().position(|x| x.name == a.name);
        let len = data.len() as u64;
        if let Some(sec) = sec.filter(|&s| len > 0 && d.sections[s].bytes.is_multiple_of(len)) {
            let eb = d.sections[sec].bytes / len;
            let read = |i: usize| {
                let at = i as u64 * eb;
                fp.iter()
                    .filter(|e| e.section == sec && e.reads())
                    .any(|e| e.intervals().any(|r| r.start <= at && at + eb <= r.end))
            };
            match &mut data {
                Data::F64(v) => v
                    .iter_mut()
                    .enumerate()
                    .filter(|(i, _)| !read(*i))
                    .for_each(|(_, x)| *x = f64::NAN),
                Data::F32(v) => v
                    .iter_mut()
                    .enumerate()
                    .filter(|(i, _)| !read(*i))
                    .for_each(|(_, x)| *x = f32::NAN),
                Data::I32(v) => v
                    .iter_mut()
                    .enumerate()
                    .filter(|(i, _)| !read(*i))
                    .for_each(|(_, x)| *x = 1 << 24),
                Data::I64(_) => {}
                Data::U8(v) => v
                    .iter_mut()
                    .enumerate()
                    .filter(|(i, _)| !read(*i))
                    .for_each(|(_, x)| *x = b'7'),
            }
        }
        out.push(&a.name, &a.dims, data);
    }
    out
}

#[test]
fn screens_read_nothing_outside_their_read_extents() {
    for name in KERNELS {
        let k = build(name, Dataset::Mini, plan()).unwrap();
        let d = k.desc();
        let mut st = k.init();
        for (mb, m) in d.microblocks.iter().enumerate() {
            let units: Vec<u32> = match m.kind {
                MicroblockKind::Serial => vec![0],
                MicroblockKind::Screens(n) => (0..n).collect(),
            };
            let mut next = st.clone();
            for s in units {
                let fp = footprint(k.as_ref(), mb, s).unwrap();
                let mut clean = st.clone();
                let poisoned = poison_unread(d, &fp, &st);
                let mut dirty = poisoned.clone();
                let run = |x: &mut State| match m.kind {
                    MicroblockKind::Serial => run_serial(k.as_ref(), mb, x).unwrap(),
                    MicroblockKind::Screens(_) => run_screen(k.as_ref(), mb, s, x).unwrap(),
                };
                run(&mut clean);
                run(&mut dirty);
                for (sec_i, sec) in d.sections.iter().enumerate() {
                    let (Some(c), Some(p)) = (clean.get(sec.name), dirty.get(sec.name)) else {
                        continue;
                    };
                    let (c0, p0) = (st.get(sec.name).unwrap(), poisoned.get(sec.name).unwrap());
                    // variable-length outputs (wordcount's words) are not element-addressable.
                    let len = c.data.len();
                    if len == 0
                        || [c0.data.len(), p.data.len(), p0.data.len()] != [len; 3]
                        || !sec.bytes.is_multiple_of(len as u64)
                    {
                        continue;
                    }
                    let eb = sec.bytes / len as u64;
                    for e in fp.iter().filter(|e| e.section == sec_i && e.writes()) {
                        for r in e.intervals() {
                            for i in (r.start / eb)..(r.end / eb) {
                                let i = i as usize;
                                // only elements this unit wrote in either run (write
                                // extents may over-approximate).
                                let wrote = c.data.get_f64(i).to_bits()
                                    != c0.data.get_f64(i).to_bits()
                                    || p.data.get_f64(i).to_bits() != p0.data.get_f64(i).to_bits();
                                if !wrote {
                                    continue;
                                }
                                assert_eq!(
                                    c.data.get_f64(i).to_bits(),
                                    p.data.get_f64(i).to_bits(),
                                    "{name} mb {mb} screen {s}: {}[{i}] depends on data outside the read extents",
                                    sec.name
                                );
                            }
                        }
                    }
                }
                // advance the real state by this unit
                match m.kind {
                    MicroblockKind::Serial => run_serial(k.as_ref(), mb, &mut next).unwrap(),
                    MicroblockKind::Screens(_) => run_screen(k.as_ref(), mb, s, &mut next).unwrap(),
                }
            }
            st = next;
        }
    }
}

/// An `Output` section is not written to flash before the run (only inputs are), so a
/// kernel must not depend on its initial content: with every output array zeroed, the run
/// still matches the reference. (pathfinder's `rows2` starts with wall row 0 and is
/// therefore in-out.)
#[test]
fn output_sections_need_no_initial_content() {
    for name in KERNELS {
        let k = build(name, Dataset::Mini, plan()).unwrap();
        let d = k.desc();
        let input = k.init();
        let zeroed = input.zeroed();
        let mut st = input.clone();
        for sec in d.sections.iter().filter(|s| s.access == Access::Output) {
            let a = st.position(sec.name).unwrap();
            *st.data_mut(a) = zeroed.array(a).data.clone();
        }
        run_all(k.as_ref(), &mut st).unwrap();
        verify(d, &st, &k.reference(&input)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
