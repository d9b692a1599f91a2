//! A value a program typed in rather than computed: what it wrote or
//! printed holds a number that stands as a literal in its own code and
//! that neither the task nor any file it could read holds.
//!
//! A small model asked for a program sometimes works the answer out in its
//! head and writes that: on held-out-20 the 1.5B model's programs for
//! "bump the minor version in manifest.json" (2.9.4) each held
//! `manifest['version'] = '2.9.5'`, two of them agreed, and the run said
//! `succeeded`. Programs that agree on a typed value share the model's
//! guess, not a derivation, so such a program's work is not counted
//! ([`crate::sandbox::Outcome::flaw`]) and a second derivation that typed
//! its value is no derivation ([`crate::recompute`]). A value the task
//! gives ("set the timeout to 30") or one read from a file is no guess,
//! and neither is a short number (`1`, `12`: too common in code to tell).

use regex::Regex;
use std::sync::OnceLock;

/// A number as it is written: digits, with dots between groups (`55.4`,
/// `2.9.5`, `2024`).
fn numbers() -> &'static Regex {
    static NUMBER: OnceLock<Regex> = OnceLock::new();
    NUMBER.get_or_init(|| Regex::new(r"\d+(?:\.\d+)*").expect("a valid pattern"))
}

/// The first number in `computed` (what a program wrote or printed) that
/// its `code` holds as a literal (outside comments) and none of `given`
/// (the task, the files the program could read) holds: one of a dot or of
/// three digits or more, and not zero (a start value, `total = 0.0`).
pub(crate) fn typed_value(code: &str, computed: &str, given: &[impl AsRef<str>]) -> Option<String> {
    let literals: Vec<&str> = literals(code).collect();
    let in_given = |number: &str| given.iter().any(|text| holds_number(text.as_ref(), number));
    numbers()
        .find_iter(computed)
        .map(|m| m.as_str())
        .filter(|number| number.contains('.') || number.len() >= 3)
        .filter(|number| number.chars().any(|c| c.is_ascii_digit() && c != '0'))
        .find(|number| literals.contains(number) && !in_given(number))
        .map(str::to_string)
}

/// The numbers `code` (Python) holds as literals, comments aside.
fn literals(code: &str) -> impl Iterator<Item = &str> {
    code.lines()
        .map(without_comment)
        .flat_map(|line| numbers().find_iter(line).map(|m| m.as_str()))
}

/// Whether `text` holds `number` as a whole number of its own.
fn holds_number(text: &str, number: &str) -> bool {
    numbers().find_iter(text).any(|m| m.as_str() == number)
}

/// Fewest values of the files a program may hold typed in before it is
/// taken to copy the files' data rather than read it: one or two are
/// thresholds and keys as often as not.
const COPIED_AT_LEAST: usize = 3;

/// The numbers `code` holds as literals (outside comments) that the
/// `files` it could read hold too and the `task` does not, when there are
/// [`COPIED_AT_LEAST`] of them, said as a flaw: the program copied the
/// files' values into its own text, and computes from its copy. On
/// held-out-47 (spent) the one program of seven that ran for May's
/// kombucha less April's held `{"ginger": 19.5, "hibiscus": 18.25, ...}`,
/// values of the file typed in by the model, and its answer was passed.
/// Only decimals count ([`is_data_decimal`]).
pub(crate) fn copied_values(code: &str, files: &[impl AsRef<str>], task: &str) -> Option<String> {
    let mut copied: Vec<&str> = literals(code)
        .filter(|number| is_data_decimal(number))
        .filter(|number| !holds_number(task, number))
        .filter(|number| files.iter().any(|file| holds_number(file.as_ref(), number)))
        .collect();
    copied.sort_unstable();
    copied.dedup();
    (copied.len() >= COPIED_AT_LEAST).then(|| {
        let shown = copied.iter().take(4).copied().collect::<Vec<_>>().join(", ");
        let more = if copied.len() > 4 { ", ..." } else { "" };
        format!("it holds {} values of the files typed into its own text ({shown}{more}), and computes from its copy: read the values from the files", copied.len())
    })
}

/// Whether `number` is a decimal with a fraction that is not all zeros
/// (`19.5`, `18.25`): the kind of value a file holds as data. Whole
/// numbers (`500`, `2024`, `1024`) and round ones (`100.0`) are as often a
/// program's own constants, a status code or a year that is a column's
/// name; a version (`1.2.3`) is no decimal.
fn is_data_decimal(number: &str) -> bool {
    match number.split_once('.') {
        Some((_, fraction)) => !fraction.contains('.') && fraction.chars().any(|c| c != '0'),
        None => false,
    }
}

/// `line` of Python up to its comment: a `#` outside quotes.
pub(crate) fn without_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '\'' | '"') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            _ => {}
        }
    }
    line
}

/// What is said of a program that typed `value`.
pub(crate) fn said(value: &str) -> String {
    format!("it writes {value}, a value typed into the program, not read or computed from the files: compute it from the files")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version typed into the program is found; the same value computed,
    /// given by the task, read from a file, a zero or a short number is not.
    #[test]
    fn a_number_the_program_holds_and_nothing_gave_is_typed() {
        let manifest = r#"{"version": "2.9.4"}"#;
        let typed = "m = json.load(f)\nm['version'] = '2.9.5'  # bumped\njson.dump(m, f)";
        let written = r#"{"version": "2.9.5"}"#;
        assert_eq!(
            typed_value(typed, written, &["Bump the minor version", manifest]).as_deref(),
            Some("2.9.5")
        );
        let computed = "a, b, c = m['version'].split('.')\nm['version'] = f'{a}.{int(b) + 1}.0'";
        assert_eq!(typed_value(computed, r#"{"version": "2.10.0"}"#, &[manifest]), None);
        assert_eq!(
            typed_value(typed, written, &["Set the version to 2.9.5", manifest]),
            None,
            "the task gave it"
        );
        let commented = "# the answer is 55.4\ntotal = sum(miles) * 1.609344\nprint(round(total, 1))";
        assert_eq!(
            typed_value(commented, "55.4", &["runs"]),
            None,
            "a comment types nothing"
        );
        assert_eq!(
            typed_value("total = 0.0\nprint(total)", "0.0", &[] as &[&str]),
            None,
            "a start value"
        );
        assert_eq!(
            typed_value("print(12)", "12", &[] as &[&str]),
            None,
            "too short to tell"
        );
        assert_eq!(
            typed_value("print(55.4)", "55.4", &["3.1\n5.25"]).as_deref(),
            Some("55.4")
        );
        assert_eq!(
            typed_value("x = '#'\nprint(55.4)", "55.4", &[] as &[&str]).as_deref(),
            Some("55.4")
        );
    }

    #[test]
    fn a_program_holding_three_values_of_the_files_copied_them() {
        let csv = "date,flavour,litres\n2025-04-03,ginger,19.5\n2025-05-01,hibiscus,18.25\n2025-05-09,lemon,22.75\n2025-05-20,lime,22.0\n";
        let task = "How many more litres did we bottle in May 2025 than in April 2025?";
        let copied = "litres = {'ginger': 19.5, 'hibiscus': 18.25, 'lemon': 22.75, 'lime': 22.0}\nprint(litres['lemon'] + litres['hibiscus'] - litres['ginger'])";
        let said = copied_values(copied, &[csv], task).expect("three values of the file typed in");
        assert!(
            said.contains("3 values") && said.contains("(18.25, 19.5, 22.75)"),
            "{said}"
        );
        let read = "rows = list(csv.DictReader(open('b.csv')))\nmay = sum(float(r['litres']) for r in rows if r['date'].startswith('2025-05'))";
        assert_eq!(copied_values(read, &[csv], task), None, "2025 is the task's");
        let two = "print(19.5 + 18.25)  # 22.75";
        assert_eq!(copied_values(two, &[csv], task), None, "two values, and a comment");
        let factors = "print(round(x * 0.453592, 2), 1.609, 2.54)";
        assert_eq!(copied_values(factors, &[csv], task), None, "none of the file's");
        let log = "GET / 500\nGET /a 502\nGET /b 503\nGET /c 100.0\n";
        let codes = "print(sum(1 for l in open('a.log') if l.split()[-1] in ('500', '502', '503')), 100.0)";
        assert_eq!(
            copied_values(codes, &[log], "How many server errors?"),
            None,
            "whole and round numbers"
        );
    }
}
