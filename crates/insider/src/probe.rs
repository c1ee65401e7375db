//! A counter read at chosen times: a stream's input bytes consumed, sampled after every chunk
//! its slot processes, interpolated linearly between samples at the times an experiment asks
//! about. The values are worked out as the samples arrive, so the probe's memory is its query
//! times', however long the run (the samples themselves are not kept).

use nearflash_sim::SimTime;

#[derive(Clone, Debug)]
pub struct CounterProbe {
    origin: SimTime,
    /// Query times, ms since `origin`: ascending, no two equal.
    at_ms: Vec<f64>,
    /// The counter at `at_ms[i]`, once a sample at or after it has arrived.
    values: Vec<Option<f64>>,
    /// The first query not answered yet.
    next: usize,
    /// The last sample: ms since `origin`, value.
    last: Option<(f64, f64)>,
}

impl CounterProbe {
    /// A probe answering at `at_ms` (ms since `origin`; any order, repeats allowed).
    pub fn new(origin: SimTime, mut at_ms: Vec<f64>) -> Self {
        at_ms.sort_by(f64::total_cmp);
        at_ms.dedup_by(|a, b| a.total_cmp(b).is_eq());
        assert!(
            at_ms.iter().all(|x| x.is_finite()),
            "query times are finite"
        );
        CounterProbe {
            origin,
            values: vec![None; at_ms.len()],
            at_ms,
            next: 0,
            last: None,
        }
    }

    fn ms(&self, t: SimTime) -> f64 {
        t.since(self.origin).as_ns() as f64 / 1e6
    }

    /// The counter read `value` at `t` (samples come in time order).
    pub fn sample(&mut self, t: SimTime, value: u64) {
        let (tm, v) = (self.ms(t), value as f64);
        assert!(
            self.last.is_none_or(|(l, _)| l <= tm),
            "samples come in time order"
        );
        while let Some(&x) = self.at_ms.get(self.next) {
            if tm < x {
                break;
            }
            // Before the first sample the counter reads 0; after it, linear between the
            // samples on either side of the query time.
            self.values[self.next] = Some(match self.last {
                None => 0.0,
                Some((l, lv)) => lv + (v - lv) * (x - l) / (tm - l).max(1e-12),
            });
            self.next += 1;
        }
        self.last = Some((tm, v));
    }

    /// The counter at query time `x` (one given to [`CounterProbe::new`]): interpolated, or
    /// the last sample's value when none has come at or after `x` (0 with no sample at all).
    pub fn value_at(&self, x: f64) -> f64 {
        let i = self
            .at_ms
            .binary_search_by(|q| q.total_cmp(&x))
            .unwrap_or_else(|_| panic!("{x} ms is one of the probe's query times"));
        self.values[i].unwrap_or_else(|| self.last.map_or(0.0, |(_, v)| v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearflash_sim::SimDuration;
    use proptest::prelude::*;

    /// The reference: every sample kept, the query answered by a scan.
    fn scan(samples: &[(f64, f64)], x: f64) -> f64 {
        let mut last = (f64::NEG_INFINITY, 0.0);
        for &(tm, v) in samples {
            if tm >= x {
                if last.0 == f64::NEG_INFINITY {
                    return 0.0;
                }
                return last.1 + (v - last.1) * (x - last.0) / (tm - last.0).max(1e-12);
            }
            last = (tm, v);
        }
        last.1
    }

    proptest! {
        /// Story: the fairness experiment kept every chunk's sample and scanned them per
        /// query; the probe keeps none and answers every query the same, bit for bit.
        #[test]
        fn the_probe_answers_what_a_scan_of_every_sample_would(
            steps in proptest::collection::vec((0u64..3_000_000, 0u64..1 << 20), 0..200),
            queries in proptest::collection::vec(0u32..400, 1..40),
        ) {
            let origin = SimTime::ZERO + SimDuration::from_ns(5_000);
            let at: Vec<f64> = queries.iter().map(|&q| f64::from(q) * 0.25).collect();
            let mut probe = CounterProbe::new(origin, at.clone());
            let (mut t, mut value) = (origin, 0u64);
            let mut kept = Vec::new();
            for (dt, bytes) in steps {
                t += SimDuration::from_ns(dt);
                value += bytes;
                probe.sample(t, value);
                kept.push((t.since(origin).as_ns() as f64 / 1e6, value as f64));
            }
            for x in at {
                prop_assert_eq!(probe.value_at(x).to_bits(), scan(&kept, x).to_bits());
            }
        }
    }

    #[test]
    #[should_panic(expected = "query times")]
    fn asking_at_a_time_not_given_is_a_bug() {
        CounterProbe::new(SimTime::ZERO, vec![1.0]).value_at(2.0);
    }
}
