//! Facts about this process for the speed report (outside the model: the driver's business).

/// Peak resident set size in MB (VmHWM from /proc/self/status); 0 where unavailable.
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn peak_rss_is_positive_on_linux() {
        assert!(super::peak_rss_mb() > 0.0);
    }
}
