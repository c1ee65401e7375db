//! The multi-app execution chain (seed 000 §4.2, Fig. 8): for every admitted kernel, in
//! admission order, its microblocks in order with the screens of the current one — which are
//! issued, which are done. It enforces the one dependency rule of FlashAbacus: no screen of
//! microblock m+1 of a kernel is issued before every screen of microblock m has finished.
//! Kernels are independent of each other ("the data dependency only exists among the
//! microblocks within an application's kernel"). A serial microblock is one unit of work.
//! Schedulers only read the chain and call `issue`; engines call `admit` and `complete`.

/// One unit of work: screen `screen` of microblock `mb` of kernel `kernel` (screen 0 of a
/// serial microblock).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unit {
    pub kernel: usize,
    pub mb: usize,
    pub screen: u32,
}

/// A kernel as the chain sees it: its application and the unit count of each microblock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub app: usize,
    pub units_per_mb: Vec<u32>,
}

#[derive(Clone, Debug)]
struct Track {
    shape: Shape,
    mb: usize,
    issued: u32,
    done: u32,
    admitted: bool,
    finished: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Chain {
    tracks: Vec<Track>,
    /// Admitted, unfinished kernels in admission order.
    active: Vec<usize>,
}

impl Chain {
    /// A chain over `shapes` (kernel ids are their indices); none is admitted yet.
    pub fn new(shapes: Vec<Shape>) -> Chain {
        let tracks = shapes
            .into_iter()
            .map(|shape| {
                assert!(
                    !shape.units_per_mb.is_empty() && shape.units_per_mb.iter().all(|&u| u > 0),
                    "kernels are validated to have microblocks with at least one screen"
                );
                Track {
                    shape,
                    mb: 0,
                    issued: 0,
                    done: 0,
                    admitted: false,
                    finished: false,
                }
            })
            .collect();
        Chain {
            tracks,
            active: Vec::new(),
        }
    }

    pub fn kernel_count(&self) -> usize {
        self.tracks.len()
    }

    pub fn app(&self, kernel: usize) -> usize {
        self.tracks[kernel].shape.app
    }

    /// The kernel's data sections are mapped: it may run.
    pub fn admit(&mut self, kernel: usize) {
        let t = &mut self.tracks[kernel];
        assert!(!t.admitted, "kernel {kernel} admitted twice");
        t.admitted = true;
        self.active.push(kernel);
    }

    /// Admitted, unfinished kernels in admission order.
    pub fn active(&self) -> &[usize] {
        &self.active
    }

    pub fn is_finished(&self, kernel: usize) -> bool {
        self.tracks[kernel].finished
    }

    pub fn all_finished(&self) -> bool {
        self.tracks.iter().all(|t| t.finished)
    }

    /// The next unit of the kernel's current microblock, if one may be issued now.
    pub fn ready(&self, kernel: usize) -> Option<Unit> {
        let t = &self.tracks[kernel];
        (t.admitted && !t.finished && t.issued < t.shape.units_per_mb[t.mb]).then_some(Unit {
            kernel,
            mb: t.mb,
            screen: t.issued,
        })
    }

    /// Marks the next ready unit of `kernel` as issued and returns it.
    pub fn issue(&mut self, kernel: usize) -> Unit {
        let u = self
            .ready(kernel)
            .expect("schedulers issue only ready units");
        self.tracks[kernel].issued += 1;
        u
    }

    /// A unit finished. Returns true when it finished its kernel.
    pub fn complete(&mut self, u: Unit) -> bool {
        let t = &mut self.tracks[u.kernel];
        assert!(
            t.admitted && !t.finished && u.mb == t.mb && t.done < t.issued,
            "completion of a unit that was not running: {u:?}"
        );
        t.done += 1;
        if t.done < t.shape.units_per_mb[t.mb] {
            return false;
        }
        t.mb += 1;
        t.issued = 0;
        t.done = 0;
        if t.mb < t.shape.units_per_mb.len() {
            return false;
        }
        t.finished = true;
        self.active.retain(|&k| k != u.kernel);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_microblock_waits_for_every_screen_of_the_previous() {
        let mut c = Chain::new(vec![Shape {
            app: 0,
            units_per_mb: vec![2, 1],
        }]);
        assert_eq!(c.ready(0), None, "not admitted");
        c.admit(0);
        let a = c.issue(0);
        let b = c.issue(0);
        assert_eq!(c.ready(0), None, "m0 fully issued, m1 not ready");
        assert!(!c.complete(a));
        assert_eq!(c.ready(0), None, "m0 still has a screen running");
        assert!(!c.complete(b));
        let m1 = c.issue(0);
        assert_eq!(m1.mb, 1);
        assert!(c.complete(m1));
        assert!(c.all_finished());
        assert!(c.active().is_empty());
    }
}
