//! The SIMD baseline in functional fidelity: the host reads each instance's input file from
//! the SSD (real bytes, preconditioned), copies them over PCIe into DDR3L pass by pass, the
//! kernels compute on them, results go back and are written to the SSD, and every instance's
//! outputs, read back from the SSD, match the reference — also when DDR3L is too small and
//! the instance runs in many passes (some streaming a unit larger than DDR3L). Timing is
//! identical to a timing run; wrong data (a flipped input byte, a lost unit) fail
//! verification with an error naming kernel, array and index.

mod common;

use nearflash_accel::{
    run_simd, run_simd_checked, run_simd_functional, AccelConfig, AccelError, Fault, FunctionalRun,
    HostConfig, NvmeConfig, SimdSpec, FUNCTIONAL_MAX_BYTES_DEFAULT,
};
use nearflash_flash::FlashConfig;
use nearflash_ftl::FtlConfig;
use nearflash_kernels::{Dataset, KernelError, KERNELS};

struct Setup {
    accel: AccelConfig,
    host: HostConfig,
    flash: FlashConfig,
    ftl: FtlConfig,
    nvme: NvmeConfig,
}

fn setup() -> Setup {
    let (accel, host, flash, ftl) = common::simd();
    Setup {
        accel,
        host,
        flash,
        ftl,
        nvme: NvmeConfig::default(),
    }
}

impl Setup {
    fn spec(&self, dataset: Dataset) -> SimdSpec<'_> {
        SimdSpec {
            accel: &self.accel,
            host: &self.host,
            ssd_nvme: &self.nvme,
            ssd_flash: &self.flash,
            ssd_ftl: &self.ftl,
            dataset,
            seed: 3,
        }
    }

    /// DDR3L holding `data_bytes` beside the kernel description.
    fn with_ddr_data_bytes(mut self, data_bytes: u64) -> Setup {
        self.accel.ddr_bytes = self.accel.kernel_description_bytes + data_bytes;
        self
    }

    fn functional(&self, workload: &str) -> Result<FunctionalRun, AccelError> {
        run_simd_functional(
            &self.spec(Dataset::Mini),
            workload,
            FUNCTIONAL_MAX_BYTES_DEFAULT,
        )
    }
}

fn assert_verifies(s: &Setup, workload: &str) -> FunctionalRun {
    let r = s
        .functional(workload)
        .unwrap_or_else(|e| panic!("SIMD {workload}: {e}"));
    assert_eq!(r.checks.len(), r.report.instances.len());
    assert!(r.checks.iter().all(|c| c.result.is_ok()));
    r
}

/// Every kernel of Table 2 and §5.6, each instance in one pass (DDR3L holds it), and a mix.
#[test]
fn every_simd_instance_verifies_in_functional_fidelity_at_mini() {
    let s = setup();
    for name in KERNELS {
        let r = assert_verifies(&s, name);
        assert!(r.report.instances.iter().all(|i| i.chunks == 1), "{name}");
    }
    assert_eq!(assert_verifies(&s, "mx4").checks.len(), 24);
}

/// The chunking question: with DDR3L too small for an instance, every kernel runs in many
/// passes (later microblocks read what earlier passes wrote anywhere in an array, from the
/// host's copy) and still matches its reference. 4 KiB beside the kernel description: some
/// passes group screens, some units (atax's `y = Aᵀ·tmp` over all of `A`) stream through
/// DDR3L in parts.
#[test]
fn every_kernel_verifies_when_ddr3l_cuts_it_into_passes() {
    for data_bytes in [4 << 10] {
        let s = setup().with_ddr_data_bytes(data_bytes);
        for name in KERNELS {
            let r = assert_verifies(&s, name);
            assert!(
                r.report.instances.iter().all(|i| i.chunks > 1),
                "{name} at {data_bytes} bytes of DDR3L: {:?}",
                r.report.instances[0].chunks
            );
        }
    }
}

/// Moving real bytes changes nothing in time: the functional run's report — events, trace
/// hash, makespan, every phase — is the timing run's, in one pass and in many.
#[test]
fn functional_and_timing_simd_runs_have_the_same_trace() {
    for (s, workload) in [
        (setup(), "bfs"),
        (setup(), "mx2"),
        (setup().with_ddr_data_bytes(8 << 10), "atax"),
        (setup().with_ddr_data_bytes(8 << 10), "adi"),
        (setup().with_ddr_data_bytes(32 << 10), "wordcount"),
    ] {
        let t = run_simd(&s.spec(Dataset::Mini), workload).unwrap();
        let f = s.functional(workload).unwrap();
        assert_eq!(f.report.trace_hash, t.trace_hash, "{workload}");
        assert_eq!(f.report.sim_time_ns, t.sim_time_ns, "{workload}");
        assert_eq!(f.report, t, "{workload}");
    }
}

/// A silently corrupted byte of the third atax instance's input file on the SSD (`A[0][0]`'s
/// sign and exponent) makes its `y` wrong: one instance fails, named with array and index.
#[test]
fn a_flipped_input_byte_fails_simd_verification() {
    let s = setup();
    let fault = Fault::FlipInputByte {
        instance: 2,
        section: 0,
        byte: 7,
    };
    let (report, checks) = run_simd_checked(
        &s.spec(Dataset::Mini),
        "atax",
        FUNCTIONAL_MAX_BYTES_DEFAULT,
        Some(fault),
    )
    .unwrap();
    let failed: Vec<usize> = (checks.iter().filter(|c| c.result.is_err()))
        .map(|c| c.instance)
        .collect();
    assert_eq!(failed, vec![2]);
    let e = nearflash_accel::verified(report, checks).unwrap_err();
    let AccelError::Verification { first, .. } = &e else {
        panic!("{e}");
    };
    assert!(matches!(first, KernelError::Mismatch { array, .. } if array == "y"));
    assert!(
        e.to_string().contains("atax") && e.to_string().contains("y["),
        "{e}"
    );
}

/// In a run cut into passes, one screen of gemm's product is lost (it never runs): the
/// instance's `C` is wrong where that screen writes, and only that instance fails.
#[test]
fn a_lost_unit_fails_verification_in_a_run_cut_into_passes() {
    let s = setup().with_ddr_data_bytes(4 << 10);
    let fault = Fault::DropWrite {
        instance: 1,
        microblock: 0,
        screen: 0,
    };
    let (report, checks) = run_simd_checked(
        &s.spec(Dataset::Mini),
        "gemm",
        FUNCTIONAL_MAX_BYTES_DEFAULT,
        Some(fault),
    )
    .unwrap();
    assert!(report.instances.iter().all(|i| i.chunks > 1));
    let failed: Vec<usize> = (checks.iter().filter(|c| c.result.is_err()))
        .map(|c| c.instance)
        .collect();
    assert_eq!(failed, vec![1]);
    let e = checks[1].result.clone().unwrap_err().to_string();
    assert!(e.contains("gemm") && e.contains("C["), "{e}");
}

#[test]
fn functional_simd_runs_that_do_not_fit_memory_are_refused_before_running() {
    let s = setup();
    let e = run_simd_functional(&s.spec(Dataset::Mini), "2dconv", 1 << 20).unwrap_err();
    assert!(
        matches!(e, AccelError::FunctionalTooLarge { max_mib: 1, .. }),
        "{e}"
    );
}
