//! grep's independent reference: whole buffer, line by line, the first window equal to the
//! pattern (the INSIDER pure_cpu formulation, with −1 for no match).

pub fn first_matches(input: &[u8], pattern: &[u8]) -> Vec<i64> {
    input
        .split_inclusive(|&b| b == b'\n')
        .map(|line| {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            line.windows(pattern.len())
                .position(|w| w == pattern)
                .map_or(-1, |c| c as i64)
        })
        .collect()
}
