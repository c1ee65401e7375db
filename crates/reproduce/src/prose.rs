//! Numbers as claim notes print them in prose: small counts in words ("six workers"), lists
//! joined with "and". Notes are formatted from measured and config values through these, so
//! no number is typed into prose.

/// A count in words up to twelve, in digits above.
pub fn count_word(n: usize) -> String {
    const WORDS: [&str; 13] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |w| (*w).to_string())
}

/// "a, b and c".
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_words_up_to_twelve() {
        assert_eq!(count_word(1), "one");
        assert_eq!(count_word(6), "six");
        assert_eq!(count_word(12), "twelve");
        assert_eq!(count_word(24), "24");
    }

    #[test]
    fn lists_join_with_and() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(and_list(&v(&["0", "20", "40"])), "0, 20 and 40");
        assert_eq!(and_list(&v(&["0"])), "0");
        assert_eq!(and_list(&[]), "");
    }
}
