//! Small text helpers shared by the roles: cutting long text to a budget with a
//! visible marker, so a model (or a person) always knows something was left out.

/// The body of the first fenced block (```` ``` ````) in `text`, after the
/// opening fence's line, and whether a closing fence ends it (a reply cut
/// off by its token limit leaves it open: the body then runs to the end).
pub fn first_fenced_block(text: &str) -> Option<(&str, bool)> {
    let (_, after) = text.split_once("```")?;
    let body = after.split_once('\n').map_or("", |(_, body)| body);
    Some(match body.split_once("```") {
        Some((inner, _)) => (inner, true),
        None => (body, false),
    })
}

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

/// Whether `text` (spacing at its ends aside) is one value written with a
/// digit and the marks numbers, versions, dates and times are written with
/// (`4.12.2`, `2024-W16`, `12:30`, `1,250`): a value read or worked out,
/// which a model that writes it having read and computed nothing made up.
/// The agent step's doubt of its answer and the check of a run's file
/// ([`crate::recompute`]) hold a value to the same rule.
pub fn value_with_digits(text: &str) -> bool {
    let value = text.trim();
    value.chars().any(|c| c.is_ascii_digit())
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '/' | '+' | '_' | ','))
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

/// The length of the block that `text` ends by repeating, when its tail is
/// one block written over and over (at least 8 times, and 200 bytes): a
/// small model caught in a loop (`| words(a.txt) | words(a.txt) | …`) writes
/// on until its token limit, minutes on a CPU, and the reply is lost anyway.
pub fn repeating_tail(text: &[u8]) -> Option<usize> {
    const COPIES: usize = 8;
    const SPAN: usize = 200;
    const LONGEST_BLOCK: usize = 256;
    (1..=LONGEST_BLOCK).find(|&block| {
        let span = (block * COPIES).max(SPAN.div_ceil(block) * block);
        span <= text.len() && {
            let tail = &text[text.len() - span..];
            tail[block..].iter().zip(tail).all(|(later, earlier)| later == earlier)
        }
    })
}

/// `text` cut after the first copy of the block it ends by repeating
/// ([`repeating_tail`]), and that block as its last copy reads; `None` when
/// it does not end in a loop.
pub fn cut_at_loop(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let block = repeating_tail(bytes)?;
    // Where the repeats begin: the first byte from which the text is periodic.
    let mut start = bytes.len() - block;
    while start > 0 && bytes[start - 1] == bytes[start - 1 + block] {
        start -= 1;
    }
    let mut end = start + block;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    // The block as the text ends it (its phase at `start` is arbitrary).
    let mut from = bytes.len() - block;
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    Some((&text[..end], &text[from..]))
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

/// The lines `after` took out of `before` (`- …`) and put in (`+ …`), in
/// file order, by their longest common run of lines; at most `most` of
/// them (a note says how many more). Shown to a check of an edit: a small
/// judge shown two copies of a file passed a `versionCode 41` edited into
/// `2 41`, which a changed line says at once.
pub fn changed_lines(before: &str, after: &str, most: usize) -> Vec<String> {
    let (mut a, mut b): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    // Lines the same at both ends are no change; what is left of a large
    // file is compared whole when that is cheap, and shown out and in when not.
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (a, b) = (a[head..a.len() - tail].to_vec(), b[head..b.len() - tail].to_vec());
    if a.len() * b.len() > MOST_COMPARED_PAIRS {
        let mut changed: Vec<String> = a.iter().map(|l| format!("- {l}")).collect();
        changed.extend(b.iter().map(|l| format!("+ {l}")));
        return at_most(changed, most);
    }
    // common[i][j]: the longest common run of a[i..] and b[j..].
    let mut common = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = match a[i] == b[j] {
                true => common[i + 1][j + 1] + 1,
                false => common[i + 1][j].max(common[i][j + 1]),
            };
        }
    }
    let (mut i, mut j, mut changed) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || common[i + 1][j] >= common[i][j + 1]) {
            changed.push(format!("- {}", a[i]));
            i += 1;
        } else {
            changed.push(format!("+ {}", b[j]));
            j += 1;
        }
    }
    at_most(changed, most)
}

/// Pairs of lines [`changed_lines`] compares at most (a table of this many
/// counts): two files of 500 differing lines each.
const MOST_COMPARED_PAIRS: usize = 250_000;

/// The first `most` of `changed`, and how many more there are.
fn at_most(mut changed: Vec<String>, most: usize) -> Vec<String> {
    if changed.len() > most {
        let more = changed.len() - most;
        changed.truncate(most);
        changed.push(format!("({more} more changed lines)"));
    }
    changed
}

/// Whether `part` stands in `text` as a whole: not inside a longer word or
/// number (`3` is in "count: 3", not in "port 3000").
pub fn contains_whole(text: &str, part: &str) -> bool {
    let inner = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    text.match_indices(part).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + part.len()..].chars().next();
        let glued_before = inner(before) && part.starts_with(char::is_alphanumeric);
        let glued_after = inner(after) && part.ends_with(char::is_alphanumeric);
        !glued_before && !glued_after
    })
}

/// Whether `part` stands in `text` with no character `in_word` says is a
/// word's on either side of it: `paid` stands in "paid, unpaid" and not
/// in "unpaid" alone.
pub fn stands_alone(text: &str, part: &str, in_word: impl Fn(char) -> bool) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| !in_word(c));
    text.match_indices(part)
        .any(|(at, _)| edge(text[..at].chars().next_back()) && edge(text[at + part.len()..].chars().next()))
}

/// A line of Python split at its quotes: the text outside them, and each
/// string it quotes (`'` or `"`, one left open at the line's end included).
/// One walker, so the checks that read a program's strings and the ones
/// that read it without them agree on where a string is.
pub fn quotes_apart(line: &str) -> (String, Vec<String>) {
    let mut outside = String::new();
    let mut strings = Vec::new();
    let mut open: Option<(char, String)> = None;
    for c in line.chars() {
        open = match open {
            None if c == '\'' || c == '"' => Some((c, String::new())),
            None => {
                outside.push(c);
                None
            }
            Some((quote, inside)) if c == quote => {
                strings.push(inside);
                None
            }
            Some((quote, mut inside)) => {
                inside.push(c);
                Some((quote, inside))
            }
        };
    }
    strings.extend(open.map(|(_, inside)| inside));
    (outside, strings)
}

/// `text` trimmed, after a space when short, on the lines below when long.
pub fn below_if_long(text: &str) -> String {
    let text = text.trim();
    match text.contains('\n') || text.len() > 80 {
        true => format!("\n{text}"),
        false => format!(" {text}"),
    }
}

/// `text` without its citations of steps (`[s1]`, `[s1, s2]`, `[s2.1]`,
/// as an answer cites the results it used), and the ids they cite, in order.
pub fn citations(text: &str) -> (String, Vec<String>) {
    let mut rest = String::new();
    let mut ids = Vec::new();
    for (n, piece) in text.split('[').enumerate() {
        let cited = piece.split_once(']').filter(|(inside, _)| n > 0 && is_citation(inside));
        match cited {
            Some((inside, after)) => {
                ids.extend(inside.split(',').map(|id| id.trim().to_string()));
                rest.push_str(after);
            }
            None if n > 0 => {
                rest.push('[');
                rest.push_str(piece);
            }
            None => rest.push_str(piece),
        }
    }
    (rest, ids)
}

/// Whether `text` (between brackets) is ids of steps: `s1`, `s1, s2`, `s2.1`.
fn is_citation(text: &str) -> bool {
    text.split(',').map(str::trim).all(|id| {
        id.strip_prefix('s')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_written_over_and_over_is_found_and_text_that_only_repeats_a_little_is_not() {
        let looping = format!("{{\"expression\": \"count(a.txt){}", " | words(a.txt)".repeat(20));
        assert_eq!(repeating_tail(looping.as_bytes()), Some(" | words(a.txt)".len()));
        assert_eq!(repeating_tail(" ".repeat(300).as_bytes()), Some(1));
        // Seven copies of a long block, or a multiplication table, are no loop.
        let seven = format!("start {}", "a block of text that repeats. ".repeat(7));
        assert_eq!(repeating_tail(seven.as_bytes()), None);
        let table: String = (1..=40).map(|i| format!("7 x {i} = {}\n", 7 * i)).collect();
        assert_eq!(repeating_tail(table.as_bytes()), None);
        assert_eq!(repeating_tail(b""), None);
        let (kept, block) = cut_at_loop(&looping).unwrap();
        // The loop is found from where it begins, `(a.txt) | words`.
        assert_eq!(kept, "{\"expression\": \"count(a.txt) | words");
        assert_eq!(block, " | words(a.txt)");
        assert_eq!(cut_at_loop("no loop here"), None);
    }

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

    #[test]
    fn the_lines_an_edit_took_out_and_put_in_are_its_changes() {
        let before = "android {\n    versionCode 41\n    versionName \"2.3.4\"\n}\n";
        let after = "android {\n    2 41\n    versionName \"2.3.4\"\n}\n";
        assert_eq!(changed_lines(before, after, 10), ["-     versionCode 41", "+     2 41"]);
        assert!(changed_lines(before, before, 10).is_empty());
        let grown = format!("{before}a\nb\nc\n");
        assert_eq!(
            changed_lines(before, &grown, 2),
            ["+ a", "+ b", "(1 more changed lines)"]
        );
    }

    #[test]
    fn a_found_value_stands_whole_in_what_was_shown() {
        assert!(contains_whole("{\"port\": 8080}", "8080"));
        assert!(contains_whole("count: 3", "3"));
        assert!(!contains_whole("port 3000", "3"));
        assert!(!contains_whole("category", "cat"));
        assert!(contains_whole("a 10.0.0.5 b", "10.0.0.5"));
        assert!(contains_whole(
            "x: Fortune favours the bold.",
            "Fortune favours the bold."
        ));
    }

    #[test]
    fn citations_are_taken_out_with_their_ids() {
        let (rest, ids) = citations("The city is [s1]. Sum [s2, s3.1] of [note].");
        assert_eq!(rest, "The city is . Sum  of [note].");
        assert_eq!(ids, ["s1", "s2", "s3.1"]);
    }

    #[test]
    fn a_lines_strings_are_split_from_the_text_around_them() {
        let (outside, strings) = quotes_apart(r#"open('a.toml', "w") + 'left"#);
        assert_eq!(outside, "open(, ) + ");
        assert_eq!(strings, ["a.toml", "w", "left"]);
        assert_eq!(quotes_apart("x = 1"), ("x = 1".to_string(), Vec::<String>::new()));
    }
}
