//! Workload sets of the FlashAbacus evaluation (seed 000 §5, Table 2).
//!
//! - **Homogeneous** (`atax`, `gemm`, …): 6 instances of one kernel (§5.1 "we generate 6
//!   instances from each kernel"), issued as one application — one user program launching
//!   six kernels — so InterSt, which maps an application to one worker, runs them all there.
//! - **Heterogeneous** `mx1`–`mx14`: 24 instances, 4 of each of 6 kernels (§5.1). Each kernel
//!   is one application of 4 kernels, numbered 0–5 in the mix's order, so InterSt maps the 6
//!   kernels onto the 6 workers ("SIMD can statically map 6 different kernels to 6 workers",
//!   §5.1). Instances are issued round robin over the kernels (k1 k2 … k6 k1 k2 …).
//!
//! The seed text lost which Table 2 dots belong to which mix; only each row's dot count
//! survives (ATAX 4, BICG 4, 2DCON 5, MVT 9, ADI 9, FDTD 8, GESUM 8, SYRK 5, 3MM 4, COVAR 5,
//! GEMM 8, 2MM 7, SYR2K 4, CORR 4: 84 = 14 × 6). `MIXES` was constructed by a seeded random
//! fill (each kernel, most-frequent first, into the least-filled mixes) accepted when all 14
//! mixes are distinct and every mix has a computing-intensive kernel (§5.2: "all
//! heterogeneous workloads have more computing parts"); then the four mixes with the most
//! kernels with serial microblocks were labelled MX4, 5, 8 and 14 (§5.2: "these workloads
//! contain multiple serial microblocks") and a mix of four data-intensive and two
//! computing-intensive kernels MX1 (§5.2 on Fig. 12b: "the first four data-intensive
//! kernels … the last two computation-intensive kernels"). Serial-microblock kernels per mix:
//! MX4 5, MX5 4, MX8 4, MX14 4; the others 0–4. `mixes_match_table_2_dot_counts` checks the
//! counts.

use crate::error::AccelError;
use nearflash_kernels::{canonical_name, KERNELS};

pub const MIXES: [(&str, [&str; 6]); 14] = [
    (
        "mx1",
        ["2dconv", "adi", "fdtd-2d", "gesummv", "syrk", "correlation"],
    ),
    ("mx2", ["2dconv", "mvt", "gesummv", "syrk", "gemm", "syr2k"]),
    (
        "mx3",
        ["mvt", "adi", "syrk", "covariance", "gemm", "correlation"],
    ),
    (
        "mx4",
        ["bicg", "adi", "fdtd-2d", "covariance", "gemm", "2mm"],
    ),
    ("mx5", ["bicg", "adi", "fdtd-2d", "gesummv", "2mm", "syr2k"]),
    ("mx6", ["bicg", "2dconv", "mvt", "adi", "3mm", "gemm"]),
    ("mx7", ["atax", "mvt", "adi", "gesummv", "syrk", "3mm"]),
    (
        "mx8",
        ["mvt", "fdtd-2d", "gesummv", "3mm", "covariance", "2mm"],
    ),
    (
        "mx9",
        ["mvt", "adi", "gesummv", "covariance", "2mm", "syr2k"],
    ),
    ("mx10", ["mvt", "fdtd-2d", "gesummv", "syrk", "3mm", "2mm"]),
    (
        "mx11",
        ["mvt", "fdtd-2d", "covariance", "gemm", "2mm", "syr2k"],
    ),
    (
        "mx12",
        ["atax", "mvt", "gesummv", "gemm", "2mm", "correlation"],
    ),
    ("mx13", ["atax", "bicg", "2dconv", "adi", "fdtd-2d", "gemm"]),
    (
        "mx14",
        ["atax", "2dconv", "adi", "fdtd-2d", "gemm", "correlation"],
    ),
];

/// Instances in a homogeneous workload (§5.1).
pub const HOMOGENEOUS_INSTANCES: usize = 6;
/// Instances of each kernel in a heterogeneous mix (§5.1: 24 = 4 × 6).
pub const MIX_INSTANCES_PER_KERNEL: usize = 4;

/// One kernel instance to run: canonical kernel name and application number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceSpec {
    pub kernel: &'static str,
    pub app: usize,
}

/// The instances of workload `name` (a kernel name or alias, or mx1..mx14), in issue order.
pub fn instances(name: &str) -> Result<Vec<InstanceSpec>, AccelError> {
    let lower = name.to_ascii_lowercase();
    if let Some((_, kernels)) = MIXES.iter().find(|(m, _)| *m == lower) {
        let mut v = Vec::with_capacity(kernels.len() * MIX_INSTANCES_PER_KERNEL);
        for _ in 0..MIX_INSTANCES_PER_KERNEL {
            for (app, k) in kernels.iter().enumerate() {
                let kernel = canonical_name(k).expect("MIXES holds canonical names");
                v.push(InstanceSpec { kernel, app });
            }
        }
        return Ok(v);
    }
    let kernel = canonical_name(name).ok_or_else(|| AccelError::UnknownWorkload {
        name: name.into(),
        kernels: KERNELS.join(", "),
    })?;
    Ok(vec![InstanceSpec { kernel, app: 0 }; HOMOGENEOUS_INSTANCES])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn mixes_match_table_2_dot_counts() {
        let want = [
            ("atax", 4),
            ("bicg", 4),
            ("2dconv", 5),
            ("mvt", 9),
            ("adi", 9),
            ("fdtd-2d", 8),
            ("gesummv", 8),
            ("syrk", 5),
            ("3mm", 4),
            ("covariance", 5),
            ("gemm", 8),
            ("2mm", 7),
            ("syr2k", 4),
            ("correlation", 4),
        ];
        let mut got: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, ks) in MIXES {
            let mut distinct = ks.to_vec();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), 6);
            for k in ks {
                *got.entry(k).or_default() += 1;
            }
        }
        for (k, n) in want {
            assert_eq!(got[k], n, "{k}");
        }
    }

    #[test]
    fn mixes_have_24_instances_in_6_apps_and_homogeneous_6_in_one() {
        let v = instances("MX3").unwrap();
        assert_eq!(v.len(), 24);
        assert_eq!(v.iter().filter(|i| i.app == 5).count(), 4);
        let h = instances("atax").unwrap();
        assert_eq!(h.len(), 6);
        assert!(h.iter().all(|i| i.app == 0 && i.kernel == "atax"));
    }

    #[test]
    fn unknown_workload_is_an_error_naming_it() {
        let e = instances("mx15").unwrap_err().to_string();
        assert!(e.contains("mx15") && e.contains("atax"), "{e}");
    }
}
