//! Application results, as the host holds them after the remainder, and exact comparison.

use crate::VerifyError;

/// Per-row statistics (statistics app).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowStat {
    pub min: u32,
    pub max: u32,
    pub sum: u64,
    /// ⌊sum ÷ values per row⌋, as INSIDER's host computes the average.
    pub mean_floor: u64,
}

/// One SQL group: `round, AVG(score)` with the count behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupAvg {
    pub round: Vec<u8>,
    pub count: u64,
    pub avg_score: f64,
}

/// A result.
#[derive(Clone, Debug, PartialEq)]
pub enum AppOutput {
    /// Bytes: pass-through data, integration's matched records, RLE's decoded file.
    Bytes(Vec<u8>),
    /// grep: per line, the column of the first match or −1.
    FirstMatch(Vec<i64>),
    /// KNN: per query, the predicted class.
    Labels(Vec<u32>),
    /// statistics: per row.
    RowStats(Vec<RowStat>),
    /// SQL: per group, ordered by round name.
    Groups(Vec<GroupAvg>),
    /// Relief: the feature weights of pass 1 and the selected data of pass 2.
    Relief {
        weights: Vec<i32>,
        selected: Vec<u8>,
    },
}

impl AppOutput {
    pub fn kind(&self) -> &'static str {
        match self {
            AppOutput::Bytes(_) => "bytes",
            AppOutput::FirstMatch(_) => "first-match",
            AppOutput::Labels(_) => "labels",
            AppOutput::RowStats(_) => "row-stats",
            AppOutput::Groups(_) => "groups",
            AppOutput::Relief { .. } => "relief",
        }
    }
}

/// Exact comparison, naming the first difference.
pub fn verify_exact(
    app: &'static str,
    got: &AppOutput,
    want: &AppOutput,
) -> Result<(), VerifyError> {
    match (got, want) {
        (AppOutput::Bytes(g), AppOutput::Bytes(w)) => same(app, "bytes", g, w),
        (AppOutput::FirstMatch(g), AppOutput::FirstMatch(w)) => same(app, "lines", g, w),
        (AppOutput::Labels(g), AppOutput::Labels(w)) => same(app, "labels", g, w),
        (AppOutput::RowStats(g), AppOutput::RowStats(w)) => same(app, "rows", g, w),
        (AppOutput::Groups(g), AppOutput::Groups(w)) => same(app, "groups", g, w),
        (
            AppOutput::Relief {
                weights: gw,
                selected: gs,
            },
            AppOutput::Relief {
                weights: ww,
                selected: ws,
            },
        ) => {
            same(app, "weights", gw, ww)?;
            same(app, "selected bytes", gs, ws)
        }
        _ => Err(VerifyError::Kind {
            app,
            got: got.kind(),
            want: want.kind(),
        }),
    }
}

/// Equal slices, or the first index that differs.
pub fn same<T: PartialEq + std::fmt::Debug>(
    app: &'static str,
    what: &'static str,
    got: &[T],
    want: &[T],
) -> Result<(), VerifyError> {
    if let Some(index) = got.iter().zip(want).position(|(g, w)| g != w) {
        return Err(VerifyError::Mismatch {
            app,
            what,
            index,
            detail: format!("got {:?}, want {:?}", got[index], want[index]),
        });
    }
    if got.len() != want.len() {
        return Err(VerifyError::Length {
            app,
            what,
            got: got.len(),
            want: want.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_and_length_and_kind_are_named() {
        let a = AppOutput::Labels(vec![1, 2, 3]);
        assert!(verify_exact("t", &a, &a.clone()).is_ok());
        let e = verify_exact("t", &a, &AppOutput::Labels(vec![1, 5, 3])).unwrap_err();
        assert!(matches!(e, VerifyError::Mismatch { index: 1, .. }));
        let e = verify_exact("t", &a, &AppOutput::Labels(vec![1, 2])).unwrap_err();
        assert!(matches!(
            e,
            VerifyError::Length {
                got: 3,
                want: 2,
                ..
            }
        ));
        let e = verify_exact("t", &a, &AppOutput::Bytes(vec![])).unwrap_err();
        assert!(matches!(e, VerifyError::Kind { .. }));
    }
}
