//! Small text helpers shared by the roles: cutting long text to a budget with a
//! visible marker, so a model (or a person) always knows something was left out.

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// At most `max` characters of `s`, with `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to about `budget` characters, keeping the head and the tail, with a
/// marker in the middle saying how much was left out.
pub fn cut_to_budget(s: &str, budget: usize) -> String {
    let total = s.chars().count();
    if total <= budget {
        return s.to_string();
    }
    let head = budget * 2 / 3;
    let tail = budget - head;
    let head_text: String = s.chars().take(head).collect();
    let tail_text: String = s.chars().skip(total - tail).collect();
    format!(
        "{head_text}\n[... {} of {total} characters cut here to fit the budget ...]\n{tail_text}",
        total - head - tail
    )
}

/// The first line of `s`, cut to `max` characters: a one-line summary.
pub fn one_line(s: &str, max: usize) -> String {
    let first = s.trim().lines().next().unwrap_or("");
    let more = s.trim().lines().nth(1).is_some();
    let line = truncate_chars(first, max);
    if more && !line.ends_with('…') {
        format!("{line} …")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_head_tail_and_marks() {
        let s: String = (0..1000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let cut = cut_to_budget(&s, 90);
        assert!(cut.starts_with(&s[..60]));
        assert!(cut.ends_with(&s[970..]));
        assert!(cut.contains("910 of 1000 characters cut"));
        assert_eq!(cut_to_budget("short", 90), "short");
    }

    #[test]
    fn one_line_summary() {
        assert_eq!(one_line("hello\nworld", 20), "hello …");
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
    }
}
