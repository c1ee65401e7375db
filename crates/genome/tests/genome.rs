//! The six-phase pipeline over in-memory storage, checked against the brute-force matcher and
//! the generator's ground truth; the index format's checks; a property test of index matching
//! against brute force.

use nearflash_genome::dataset::reverse_complement;
use nearflash_genome::{
    generate, match_read, match_read_brute_force, run_pipeline, DatasetSizes, FastaRecord,
    GenomeConfig, GenomeError, KmerIndex, MatchParams, MemIo, NoObserver, Phase, ReadOrigin,
    Reference,
};
use proptest::prelude::*;

fn tiny_io(seed: u64) -> (MemIo, nearflash_genome::Dataset) {
    let d = generate(&DatasetSizes::tiny(), seed);
    let mut io = MemIo::new();
    io.insert("/ref.fa", d.reference_fasta.clone());
    io.insert("/target.fa", d.target_fasta.clone());
    (io, d)
}

fn tiny_config(chunk: u32) -> GenomeConfig {
    GenomeConfig {
        chunk_size_bytes: chunk,
        fasta_buffer_bytes: chunk,
        k: 10,
        ..GenomeConfig::new("/ref.fa", "/target.fa", "/ref.idx")
    }
}

#[test]
fn tiny_pipeline_agrees_with_brute_force_and_the_ground_truth() {
    let (mut io, d) = tiny_io(1);
    let cfg = tiny_config(4096);
    let report = run_pipeline(&mut io, &cfg, &mut NoObserver).unwrap();
    let phases: Vec<Phase> = report.phases.iter().map(|(p, _)| *p).collect();
    assert_eq!(phases, Phase::ALL);

    let reference = Reference::new(parse(io.get("/ref.fa").unwrap()));
    let reads = parse(io.get("/target.fa").unwrap());
    assert_eq!(reads.len(), d.truth.len());
    let threshold = cfg.params.max_mismatches(100);
    for ((read, hit), origin) in reads.iter().zip(&report.hits).zip(&d.truth) {
        assert_eq!(
            *hit,
            match_read_brute_force(&reference, &cfg.params, &read.seq),
            "{}",
            read.id
        );
        match *origin {
            ReadOrigin::Random => assert!(hit.is_none(), "random read {} mapped", read.id),
            ReadOrigin::Reference {
                record,
                offset,
                reverse,
                substitutions,
            } if substitutions <= threshold => {
                let hit = hit.unwrap_or_else(|| panic!("{} unmapped", read.id));
                assert_eq!(
                    hit.position,
                    reference.record_starts[record as usize] + offset
                );
                assert_eq!(hit.reverse, reverse);
                assert_eq!(hit.mismatches, substitutions);
            }
            ReadOrigin::Reference { .. } => {}
        }
    }
    assert!(report.mapped as f64 > 0.8 * reads.len() as f64);
}

fn parse(bytes: &[u8]) -> Vec<FastaRecord> {
    let mut p = nearflash_genome::FastaParser::new();
    p.push(bytes).unwrap();
    p.finish().unwrap().0
}

#[test]
fn chunk_size_changes_io_calls_but_not_the_matching() {
    let run = |chunk| {
        let (mut io, _) = tiny_io(2);
        run_pipeline(&mut io, &tiny_config(chunk), &mut NoObserver).unwrap()
    };
    let small = run(1000);
    let large = run(1 << 20);
    assert_eq!(small.hits, large.hits);
    assert_eq!(small.checksum, large.checksum);
    let load_target = |r: &nearflash_genome::GenomeReport| r.phases[4].1;
    assert_eq!(
        load_target(&small).bytes_read,
        load_target(&large).bytes_read
    );
    assert!(load_target(&small).io_calls > 10 * load_target(&large).io_calls);
    assert_eq!(load_target(&small).bases_parsed, 200 * 100);
}

#[test]
fn the_fasta_stream_buffer_sets_the_fasta_phases_calls_and_leaves_the_index_calls_alone() {
    let run = |buffer| {
        let (mut io, _) = tiny_io(2);
        let cfg = GenomeConfig {
            fasta_buffer_bytes: buffer,
            ..tiny_config(1 << 20)
        };
        run_pipeline(&mut io, &cfg, &mut NoObserver).unwrap()
    };
    let (small, large) = (run(4096), run(1 << 20));
    assert_eq!(small.hits, large.hits);
    let calls = |r: &nearflash_genome::GenomeReport, i: usize| r.phases[i].1.io_calls;
    // Load reference (0) and load target (4): one call per refill, plus the call that
    // finds the end of the file.
    for i in [0, 4] {
        let bytes = small.phases[i].1.bytes_read;
        assert_eq!(calls(&small, i), bytes.div_ceil(4096) + 1, "phase {i}");
        assert_eq!(calls(&large, i), bytes.div_ceil(1 << 20) + 1, "phase {i}");
    }
    // Save (2) and load (3) of the index do not go through the stream buffer.
    for i in [2, 3] {
        assert_eq!(calls(&small, i), calls(&large, i), "phase {i}");
    }
}

#[test]
fn the_same_seed_generates_the_same_dataset() {
    let a = generate(&DatasetSizes::tiny(), 9);
    let b = generate(&DatasetSizes::tiny(), 9);
    let c = generate(&DatasetSizes::tiny(), 10);
    assert_eq!(a.reference_fasta, b.reference_fasta);
    assert_eq!(a.target_fasta, b.target_fasta);
    assert_eq!(a.truth, b.truth);
    assert_ne!(a.target_fasta, c.target_fasta);
    let mouse = DatasetSizes::full("mouse").unwrap().scaled(1000);
    assert_eq!(mouse.reference_len_bases, 52_000);
    assert_eq!(mouse.target_len_bases(), 2_700_000);
    assert!(DatasetSizes::full("zebrafish").is_none());
}

#[test]
fn truncated_foreign_or_corrupt_indexes_are_typed_errors() {
    let reference = Reference::new(parse(&generate(&DatasetSizes::tiny(), 3).reference_fasta));
    let (index, _) = KmerIndex::build(&reference, 6).unwrap();
    let mut bytes = Vec::new();
    index.serialize(&mut bytes);
    assert_eq!(KmerIndex::deserialize(&bytes).unwrap(), index);
    assert_eq!(bytes.len() as u64, index.serialized_len_bytes());
    for cut in [0, 7, 20, 31, 32, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            KmerIndex::deserialize(&bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    assert!(matches!(
        KmerIndex::deserialize(&bytes[..bytes.len() - 1]),
        Err(GenomeError::IndexLength { .. })
    ));
    assert_eq!(
        KmerIndex::deserialize(b"GIF89a.........................."),
        Err(GenomeError::IndexBadMagic)
    );
    let mut v2 = bytes.clone();
    v2[8] = 2;
    assert_eq!(
        KmerIndex::deserialize(&v2),
        Err(GenomeError::IndexVersion { version: 2 })
    );
    let mut bad_pos = bytes.clone();
    let last = bad_pos.len() - 4;
    bad_pos[last..].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        KmerIndex::deserialize(&bad_pos),
        Err(GenomeError::IndexInconsistent { .. })
    ));
    let mut longer = bytes;
    longer.push(0);
    assert!(matches!(
        KmerIndex::deserialize(&longer),
        Err(GenomeError::IndexLength { .. })
    ));
}

#[test]
fn foreign_index_bytes_zero_chunks_and_bad_target_fasta_are_typed_errors() {
    let (mut io, _) = tiny_io(4);
    let cfg = tiny_config(4096);
    let bytes = io.get("/ref.fa").unwrap().to_vec();
    assert_eq!(
        KmerIndex::deserialize(&bytes),
        Err(GenomeError::IndexBadMagic)
    );
    let mut bad = cfg.clone();
    bad.chunk_size_bytes = 0;
    assert!(matches!(
        run_pipeline(&mut io, &bad, &mut NoObserver),
        Err(GenomeError::InvalidParameter {
            field: "chunk_size_bytes",
            ..
        })
    ));
    let mut bad = cfg.clone();
    bad.fasta_buffer_bytes = 0;
    assert!(matches!(
        run_pipeline(&mut io, &bad, &mut NoObserver),
        Err(GenomeError::InvalidParameter {
            field: "fasta_buffer_bytes",
            ..
        })
    ));
    io.insert("/target.fa", b">r1\nAC GT\n".to_vec());
    assert_eq!(
        run_pipeline(&mut io, &cfg, &mut NoObserver).unwrap_err(),
        GenomeError::Fasta {
            line: 2,
            reason: "not a sequence letter"
        }
    );
}

fn dna(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"ACGTACGTACGTACGTN".to_vec()), len)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// With no seed capped and ⌊R/k⌋ − max mismatches ≥ min votes, seed-and-vote is exact.
    #[test]
    fn index_matching_equals_brute_force_on_small_inputs(
        chr1 in dna(50..300),
        chr2 in dna(0..200),
        k in 3u32..=6,
        samples in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), prop::collection::vec(any::<prop::sample::Index>(), 0..3), 40usize..60), 1..8),
        random_read in dna(40..60),
    ) {
        let reference = Reference::new(vec![
            FastaRecord { id: "a".into(), seq: chr1 },
            FastaRecord { id: "b".into(), seq: chr2 },
        ]);
        let (index, _) = KmerIndex::build(&reference, k).unwrap();
        let params = MatchParams { seed_occurrence_cap: u32::MAX, min_votes: 2, max_mismatch_fraction: 0.05 };
        let mut reads = vec![random_read];
        for (at, reverse, subs, len) in samples {
            let len = len.min(reference.seq.len());
            let start = at.index(reference.seq.len() - len + 1);
            let mut read = reference.seq[start..start + len].to_vec();
            for s in subs {
                let i = s.index(len);
                read[i] = if read[i] == b'A' { b'C' } else { b'A' };
            }
            if reverse {
                read = reverse_complement(&read);
            }
            reads.push(read);
        }
        let mut counts = Default::default();
        for read in &reads {
            prop_assume!(read.len() / k as usize >= params.max_mismatches(read.len()) as usize + 2);
            prop_assert_eq!(
                match_read(&reference, &index, &params, read, &mut counts),
                match_read_brute_force(&reference, &params, read)
            );
        }
    }
}
