//! The trace formats: their names (`FORMAT:PATH`), their device selectors, and one line
//! parser each behind [`LineParser`]. A parser turns one line into a [`Parsed`] outcome with
//! an absolute timestamp in nanoseconds; everything after that — validation of sizes,
//! filtering counts, the reorder window, the time scale, limits — is shared
//! ([`crate::stream`]).

mod alibaba;
mod blkparse;
mod fiu;
mod iolog;
mod mqsim;
mod msr;
mod spc;
mod systor;
mod tencent;

use crate::{ReadOptions, TraceError, TraceOp};

/// A supported trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    Msr,
    Blkparse,
    Iolog,
    Systor,
    Alibaba,
    Tencent,
    Fiu,
    Spc,
    Mqsim,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 9] = [
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Iolog,
        TraceFormat::Systor,
        TraceFormat::Alibaba,
        TraceFormat::Tencent,
        TraceFormat::Fiu,
        TraceFormat::Spc,
        TraceFormat::Mqsim,
    ];

    /// The name in `FORMAT:PATH`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Iolog => "iolog",
            TraceFormat::Systor => "systor",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Tencent => "tencent",
            TraceFormat::Fiu => "fiu",
            TraceFormat::Spc => "spc",
            TraceFormat::Mqsim => "mqsim",
        }
    }

    pub fn from_name(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What the device selector ([`ReadOptions::select`]) picks in this format, if it has a
    /// device column: the column's name and the form of its values.
    pub fn selector(self) -> Option<(&'static str, Selector)> {
        match self {
            TraceFormat::Msr => Some(("disk", Selector::Number)),
            TraceFormat::Systor => Some(("LUN", Selector::Number)),
            TraceFormat::Alibaba => Some(("device", Selector::Number)),
            TraceFormat::Tencent => Some(("volume", Selector::Number)),
            TraceFormat::Spc => Some(("ASU", Selector::Number)),
            TraceFormat::Mqsim => Some(("device", Selector::Number)),
            TraceFormat::Blkparse | TraceFormat::Fiu => Some(("device", Selector::MajorMinor)),
            TraceFormat::Iolog => None,
        }
    }

    /// The parser of one line of this format, with its device selector parsed.
    pub(crate) fn parser(self, opts: &ReadOptions) -> Result<Box<dyn LineParser>, TraceError> {
        let select = match (&opts.select, self.selector()) {
            (None, _) => None,
            (Some(value), None) => {
                return Err(TraceError::NoSelector {
                    format: self.name(),
                    value: value.clone(),
                })
            }
            (Some(value), Some((_, kind))) => Some(kind.parse(self.name(), value)?),
        };
        let number = select.map(|d: Device| d.0);
        Ok(match self {
            TraceFormat::Msr => Box::new(msr::Msr::new(number)),
            TraceFormat::Blkparse => {
                Box::new(blkparse::Blkparse::new(select, opts.blkparse_action))
            }
            TraceFormat::Iolog => Box::new(iolog::Iolog::new(opts.iolog_redirect)),
            TraceFormat::Systor => Box::new(systor::Systor::new(number)),
            TraceFormat::Alibaba => Box::new(alibaba::Alibaba::new(number)),
            TraceFormat::Tencent => Box::new(tencent::Tencent::new(number)),
            TraceFormat::Fiu => Box::new(fiu::Fiu::new(select)),
            TraceFormat::Spc => Box::new(spc::Spc::new(number)),
            TraceFormat::Mqsim => Box::new(mqsim::Mqsim::new(number)),
        })
    }
}

impl std::fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The form of a format's device values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selector {
    /// A decimal number.
    Number,
    /// A Linux device number `MAJOR,MINOR` (as blkparse prints it).
    MajorMinor,
}

/// A parsed selector: a number, or `MAJOR << 32 | MINOR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Device(pub u64);

impl Selector {
    fn parse(self, format: &'static str, value: &str) -> Result<Device, TraceError> {
        let bad = |expected| TraceError::BadSelector {
            format,
            value: value.to_string(),
            expected,
        };
        match self {
            Selector::Number => value
                .trim()
                .parse()
                .map(Device)
                .map_err(|_| bad("a non-negative integer")),
            Selector::MajorMinor => {
                parse_major_minor(value.trim()).ok_or_else(|| bad("MAJOR,MINOR, e.g. 8,32"))
            }
        }
    }
}

/// `8,32` as a [`Device`].
pub(crate) fn parse_major_minor(text: &str) -> Option<Device> {
    let (major, minor) = text.split_once(',')?;
    let major: u32 = major.trim().parse().ok()?;
    let minor: u32 = minor.trim().parse().ok()?;
    Some(Device(u64::from(major) << 32 | u64::from(minor)))
}

/// blkparse events to replay (`"D"` or `"C"` in a job's options).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
pub enum BlkparseAction {
    /// `D`: issued to the driver — the arrival times the device saw (the default).
    #[serde(rename = "D", alias = "d")]
    Issue,
    /// `C`: completed.
    #[serde(rename = "C", alias = "c")]
    Complete,
}

impl BlkparseAction {
    pub fn code(self) -> &'static str {
        match self {
            BlkparseAction::Issue => "D",
            BlkparseAction::Complete => "C",
        }
    }
}

/// `FORMAT:PATH` from the command line or a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSpec {
    pub format: TraceFormat,
    pub path: String,
}

impl TraceSpec {
    /// Splits at the first `:`; the part before it must name a format.
    pub fn parse(spec: &str) -> Result<TraceSpec, TraceError> {
        let (name, path) = spec
            .split_once(':')
            .ok_or_else(|| TraceError::UnknownFormat(spec.to_string()))?;
        let format = TraceFormat::from_name(name)
            .ok_or_else(|| TraceError::UnknownFormat(name.to_string()))?;
        Ok(TraceSpec {
            format,
            path: path.to_string(),
        })
    }
}

/// One data line: an absolute timestamp and the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub timestamp_ns: u128,
    pub op: TraceOp,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    /// The request's stream ([`crate::TraceRequest::stream`]); [`keep`] sets the device
    /// column's.
    pub stream: u64,
}

/// What one line held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// Blank, a comment, a header, a summary, or an event of a kind not replayed.
    Nothing,
    /// A request of another device than the one selected.
    Filtered,
    /// An entry nearflash does not replay, counted under this name (`flush`, `untyped`...).
    Ignored(&'static str),
    Request(Record),
}

/// A line parser of one format.
pub(crate) trait LineParser {
    /// Parses line `line` (1-based; without its line ending).
    fn parse(&mut self, line: u64, text: &str) -> Result<Parsed, TraceError>;

    /// How the selected device is named in "no requests for ..." (e.g. "disk 7").
    fn selected(&self) -> Option<String>;
}

/// Whether a trimmed line carries no data: blank or a `#` comment.
pub(crate) fn is_blank_or_comment(text: &str) -> bool {
    text.is_empty() || text.starts_with('#')
}

/// The first comma-separated field of a CSV header line equals `name` (case-insensitive).
pub(crate) fn is_csv_header(text: &str, name: &str) -> bool {
    text.split(',')
        .next()
        .is_some_and(|first| first.trim().eq_ignore_ascii_case(name))
}

/// Drops the record if a device was selected and this is another one.
/// A kept record's stream is its device column's value.
pub(crate) fn keep(select: Option<u64>, device: u64, record: Record) -> Parsed {
    if select.is_some_and(|s| s != device) {
        Parsed::Filtered
    } else {
        Parsed::Request(Record {
            stream: device,
            ..record
        })
    }
}

#[cfg(test)]
mod stream_tests {
    use crate::testing::parse_full;
    use crate::{ReadOptions, TraceFormat};

    fn streams(format: TraceFormat, text: &str) -> Vec<u64> {
        parse_full(format, text, &ReadOptions::default())
            .unwrap()
            .requests
            .iter()
            .map(|r| r.stream)
            .collect()
    }

    /// Each format's stream: the process where the trace records one (FIU, blkparse), else
    /// the device column; fio iologs have one stream.
    #[test]
    fn a_requests_stream_is_its_process_or_its_device_column() {
        let fiu = "1000 4890 nfsd 8 8 W 6 0 aa\n2000 17 mail d 16 8 R 6 0 bb\n";
        assert_eq!(streams(TraceFormat::Fiu, fiu), [4890, 17]);
        let blk = "8,32 7 6 0.000006775 2923 D W 272208 + 8 [a]\n\
                   8,32 7 7 0.000007000 11 D R 8 + 8 [b]\n";
        assert_eq!(streams(TraceFormat::Blkparse, blk), [2923, 11]);
        let msr = "128166372003061629,hm,3,Write,4096,4096,10\n\
                   128166372003061630,hm,1,Read,0,4096,10\n";
        assert_eq!(streams(TraceFormat::Msr, msr), [3, 1]);
        let tencent = "1538323200,8,8,1,1063\n1538323201,16,8,0,7\n";
        assert_eq!(streams(TraceFormat::Tencent, tencent), [1063, 7]);
        let iolog = "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 0 4096\n";
        assert_eq!(streams(TraceFormat::Iolog, iolog), [0]);
    }
}
