//! fio's value syntax: sizes with suffixes (`4k`, `1MiB`, `0x1000`, base 1024 by default as
//! fio's `kb_base=1024`), percentages, times with units (`10ms`; each option's default unit
//! when none is given), booleans, ranges (`4k-16k`), block-size splits (`4k/50:64k/50`) and
//! per-direction lists (`bs=4k,8k`: reads, writes, trims). Errors are reasons; the caller
//! adds the option and line.

/// Sizes as fio reads them: `kb_base` is 1024 (fio's default) or 1000.
pub fn size(text: &str, kb_base: u64) -> Result<u64, String> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).map_err(|_| format!("'{text}' is not a size"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{text}' is not a size"));
    }
    let mult = size_multiplier(suffix.trim(), kb_base)
        .ok_or_else(|| format!("'{text}': unknown size suffix '{suffix}'"))?;
    let v = if num.contains('.') {
        let f: f64 = num.parse().map_err(|_| format!("'{text}' is not a size"))?;
        (f * mult as f64).round()
    } else {
        let n: u64 = num.parse().map_err(|_| format!("'{text}' is not a size"))?;
        return n
            .checked_mul(mult)
            .ok_or_else(|| format!("'{text}' overflows 64 bits"));
    };
    if v >= u64::MAX as f64 {
        return Err(format!("'{text}' overflows 64 bits"));
    }
    Ok(v as u64)
}

/// fio's suffixes: with `kb_base=1024`, k/K/KB/KiB are all 1024; with `kb_base=1000`, KB and
/// K are 1000 and only KiB is 1024 (fio HOWTO, "kb_base").
fn size_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let lower = suffix.to_ascii_lowercase();
    let (letter, binary) = match lower.as_str() {
        "" | "b" => return Some(1),
        s if s.ends_with("ib") && s.len() == 3 => (s.as_bytes()[0], true),
        s if s.ends_with('b') && s.len() == 2 => (s.as_bytes()[0], false),
        s if s.len() == 1 => (s.as_bytes()[0], false),
        _ => return None,
    };
    let power = match letter {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        b'p' => 5,
        _ => return None,
    };
    let base: u64 = if binary { 1024 } else { kb_base };
    Some(base.pow(power))
}

/// A size or a share of the device (`size=50%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeOrShare {
    Bytes(u64),
    Percent(f64),
}

pub fn size_or_share(text: &str, kb_base: u64) -> Result<SizeOrShare, String> {
    match text.trim().strip_suffix('%') {
        Some(p) => {
            let v: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("'{text}' is not a percentage"))?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(format!("'{text}': a percentage must be within (0, 100]"));
            }
            Ok(SizeOrShare::Percent(v))
        }
        None => size(text, kb_base).map(SizeOrShare::Bytes),
    }
}

/// The unit a time option takes when its value has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Us,
    Ms,
    S,
}

/// A time in ns: `10`, `10s`, `250ms`, `100us`, `2m`, `1h`, `1d`; `default` when unitless
/// (fio: seconds for runtime, ramp_time and startdelay; µs for thinktime).
pub fn time_ns(text: &str, default: TimeUnit) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let ns_per: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" => match default {
            TimeUnit::Us => 1e3,
            TimeUnit::Ms => 1e6,
            TimeUnit::S => 1e9,
        },
        "ns" | "nsec" => 1.0,
        "us" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        _ => return Err(format!("'{text}': unknown time unit '{unit}'")),
    };
    let v: f64 = num.parse().map_err(|_| format!("'{text}' is not a time"))?;
    let ns = v * ns_per;
    // 2^62 ns is 146 years: far past any run and clear of the clock's range.
    if !(0.0..4.6e18).contains(&ns) {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(ns.round() as u64)
}

pub fn boolean(text: Option<&str>) -> Result<bool, String> {
    match text.map(|t| t.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(other) => Err(format!("'{other}' is not a boolean (0 or 1)")),
    }
}

pub fn integer(text: &str) -> Result<u64, String> {
    let t = text.trim();
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    }
    .map_err(|_| format!("'{text}' is not a non-negative integer"))
}

/// fio's per-direction lists (reads, writes, trims): a single value applies to all three;
/// `a,b` gives reads a and writes and trims b (a value not followed by a comma applies to
/// the types after it); an empty field keeps the default. `parse` reads one field.
pub fn per_direction<T: Clone>(
    text: &str,
    default: [T; 3],
    mut parse: impl FnMut(&str) -> Result<T, String>,
) -> Result<[T; 3], String> {
    let fields: Vec<&str> = text.split(',').collect();
    if fields.len() > 3 {
        return Err(format!(
            "'{text}': at most three values (reads, writes, trims)"
        ));
    }
    let mut out = default;
    let mut last: Option<T> = None;
    for (i, slot) in out.iter_mut().enumerate() {
        match fields.get(i) {
            Some(f) if !f.trim().is_empty() => {
                let v = parse(f.trim())?;
                *slot = v.clone();
                last = Some(v);
            }
            Some(_) => last = None,
            None => {
                if let Some(v) = &last {
                    *slot = v.clone();
                }
            }
        }
    }
    Ok(out)
}

/// `4k-16k` (or `4k:16k`): an inclusive range of sizes.
pub fn size_range(text: &str, kb_base: u64) -> Result<(u64, u64), String> {
    let (a, b) = text
        .split_once('-')
        .or_else(|| text.split_once(':'))
        .ok_or_else(|| format!("'{text}' is not a range (low-high)"))?;
    let (lo, hi) = (size(a, kb_base)?, size(b, kb_base)?);
    if lo > hi {
        return Err(format!("'{text}': the low end exceeds the high end"));
    }
    Ok((lo, hi))
}

/// `4k/50:64k/30:1m` — sizes with their percentages; entries without one share what the
/// others leave, equally (fio HOWTO, "bssplit").
pub fn block_split(text: &str, kb_base: u64) -> Result<Vec<(u64, u32)>, String> {
    let mut out = Vec::new();
    let mut open = Vec::new();
    for part in text.split(':').filter(|p| !p.trim().is_empty()) {
        let (bs, pct) = match part.split_once('/') {
            Some((b, p)) => (size(b, kb_base)?, Some(integer(p)?)),
            None => (size(part, kb_base)?, None),
        };
        match pct {
            Some(p) => out.push((bs, u32::try_from(p).unwrap_or(u32::MAX))),
            None => open.push(bs),
        }
    }
    let given: u64 = out.iter().map(|&(_, p)| u64::from(p)).sum();
    if given > 100 {
        return Err(format!("'{text}': percentages add up to {given}, over 100"));
    }
    if !open.is_empty() {
        let share = (100 - given as u32) / open.len() as u32;
        let mut left = 100 - given as u32 - share * open.len() as u32;
        for bs in open {
            let extra = u32::from(left > 0);
            left -= extra;
            out.push((bs, share + extra));
        }
    } else if given != 100 {
        return Err(format!("'{text}': percentages add up to {given}, not 100"));
    }
    if out.is_empty() {
        return Err(format!("'{text}' holds no block size"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_fio_suffixes_base_1024_unless_kb_base_says_1000() {
        for (t, v) in [
            ("4096", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4KB", 4096),
            ("4KiB", 4096),
            ("1m", 1 << 20),
            ("1MiB", 1 << 20),
            ("2g", 2 << 30),
            ("1t", 1 << 40),
            ("1.5k", 1536),
            ("0x1000", 4096),
            ("512b", 512),
        ] {
            assert_eq!(size(t, 1024), Ok(v), "{t}");
        }
        assert_eq!(size("4k", 1000), Ok(4000));
        assert_eq!(size("4KiB", 1000), Ok(4096));
        assert!(size("4q", 1024).unwrap_err().contains("suffix"));
        assert!(size("k", 1024).is_err());
        assert!(size("99999999999t", 1024).unwrap_err().contains("overflow"));
        assert_eq!(size_or_share("50%", 1024), Ok(SizeOrShare::Percent(50.0)));
        assert!(size_or_share("150%", 1024).is_err());
    }

    #[test]
    fn times_take_units_and_the_option_default_unit() {
        assert_eq!(time_ns("2", TimeUnit::S), Ok(2_000_000_000));
        assert_eq!(time_ns("2", TimeUnit::Us), Ok(2_000));
        assert_eq!(time_ns("250ms", TimeUnit::S), Ok(250_000_000));
        assert_eq!(time_ns("10us", TimeUnit::S), Ok(10_000));
        assert_eq!(time_ns("1m", TimeUnit::S), Ok(60_000_000_000));
        assert_eq!(time_ns("1h", TimeUnit::S), Ok(3_600_000_000_000));
        assert!(time_ns("5 fortnights", TimeUnit::S).is_err());
    }

    #[test]
    fn per_direction_values_follow_fios_comma_rule() {
        let p = |t: &str| per_direction(t, [0u64; 3], |f| size(f, 1024));
        assert_eq!(p("4k"), Ok([4096, 4096, 4096]));
        assert_eq!(p("4k,8k"), Ok([4096, 8192, 8192]));
        assert_eq!(p("4k,8k,"), Ok([4096, 8192, 0]));
        assert_eq!(p(",8k"), Ok([0, 8192, 8192]));
        assert_eq!(p("1k,2k,3k"), Ok([1024, 2048, 3072]));
        assert!(p("1k,2k,3k,4k").is_err());
    }

    #[test]
    fn ranges_and_splits() {
        assert_eq!(size_range("4k-16k", 1024), Ok((4096, 16384)));
        assert_eq!(size_range("4k:16k", 1024), Ok((4096, 16384)));
        assert!(size_range("16k-4k", 1024).is_err());
        assert_eq!(
            block_split("4k/50:64k/50", 1024),
            Ok(vec![(4096, 50), (65536, 50)])
        );
        assert_eq!(
            block_split("4k/40:8k:16k", 1024),
            Ok(vec![(4096, 40), (8192, 30), (16384, 30)])
        );
        assert!(block_split("4k/60:8k/60", 1024).is_err());
        assert!(block_split("4k/60", 1024).unwrap_err().contains("not 100"));
    }

    #[test]
    fn booleans() {
        assert_eq!(boolean(None), Ok(true));
        assert_eq!(boolean(Some("0")), Ok(false));
        assert!(boolean(Some("maybe")).is_err());
    }
}
