//! A text file of lines that each name a thing and give its number (a
//! price list, `strawberries 6.40`), among lines that do not (a title, a
//! note): said with a reader that makes a dict of the pairs.
//!
//! All seven of the 1.5B model's programs for what the pickers of a fruit
//! field paid on a Saturday failed on such a price list, or typed its
//! prices into their own text (held-out-53, spent): each was shown the
//! file whole, and none read it.

/// Fewest lines that are pairs, and the least share of the lines that are
/// not blank, for a file to be read as a list of pairs.
const PAIRS: usize = 2;

/// Most lines weighed.
const LINES: usize = 200;

/// A line that names a thing and gives its number last: words, then
/// maybe `:` or `=`, maybe a currency sign, and a number.
static PAIR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^\s*([^\d\s].*?)(?:\s+|\s*[:=]\s*)(-?)[£$€]?(-?\d+(?:\.\d+)?)\s*$").expect("a valid pattern")
});

/// The pattern the reader shown matches a line with, as Python writes it.
const PYTHON_PAIR: &str = r"\s*([^\d\s].*?)(?:\s+|\s*[:=]\s*)(-?)[£$€]?(-?\d+(?:\.\d+)?)\s*";

/// How to read `text`, the file at `path`, when most of its lines that are
/// not blank name a thing and give its number, and some lines do not: the
/// pairs, the other lines, and lines of Python that read the pairs into a
/// dict. `None` for a file of another form, or one of pairs alone.
pub(crate) fn note(path: &str, text: &str) -> Option<String> {
    if !text_file(path) {
        return None;
    }
    let lines: Vec<(usize, &str)> = text
        .lines()
        .take(LINES)
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .collect();
    let (pairs, others): (Vec<_>, Vec<_>) = lines.iter().partition(|(_, line)| PAIR.is_match(line));
    let names: std::collections::BTreeSet<String> = pairs
        .iter()
        .filter_map(|(_, line)| Some(PAIR.captures(line)?[1].to_lowercase()))
        .collect();
    let most = pairs.len() * 2 >= lines.len();
    if pairs.len() < PAIRS || names.len() != pairs.len() || !most {
        return None;
    }
    let quote = |line: &str| format!("`{}`", crate::text::one_line(line.trim(), 60));
    let other = match others.as_slice() {
        [] => "every line is a pair".to_string(),
        [(at, line)] => format!("line {} ({}) is no pair", at + 1, quote(line)),
        more => format!(
            "its lines {} are no pairs",
            more.iter()
                .map(|(at, _)| (at + 1).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(format!(
        "{path}: {} of its lines each name a thing and give its number last (as {}); {other}. The pairs are read into a dict, its keys in small letters, so:\n```python\nimport re\npairs = {{}}\nfor line in open('{path}', encoding='utf-8-sig').read().splitlines():\n    m = re.fullmatch(r'{PYTHON_PAIR}', line)\n    if m:\n        pairs[m[1].lower()] = float(m[2] + m[3])\n```",
        pairs.len(),
        quote(pairs[0].1)
    ))
}

/// Whether `path` names a plain text file, by its extension.
fn text_file(path: &str) -> bool {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(extension.as_deref(), None | Some("txt" | "text" | "list"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICES: &str = "Pick your own - prices per kg (2025 season)\nstrawberries 6.40\nraspberries 9.20\ngooseberries: £5.10\nContainers free. Children under 5 pick free.\n";

    #[test]
    fn a_list_of_named_numbers_under_a_title_is_said_with_a_reader() {
        let note = note("prices.txt", PRICES).expect("a list of pairs");
        assert!(
            note.starts_with("prices.txt: 3 of its lines each name a thing and give its number last (as `strawberries 6.40`); its lines 1, 5 are no pairs."),
            "{note}"
        );
        let code = note.split("```python\n").nth(1).unwrap().split("```").next().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prices.txt"), PRICES).unwrap();
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg(format!("{code}\nprint(sorted(pairs.items()))"))
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "[('gooseberries', 5.1), ('raspberries', 9.2), ('strawberries', 6.4)]"
        );
    }

    #[test]
    fn prose_a_table_or_a_config_gets_no_note() {
        let prose = "Dear all,\nThe hall opens at 9.\nBring a flask.\nJo\n";
        assert_eq!(note("letter.txt", prose), None);
        assert_eq!(note("prices.ini", PRICES), None);
        let commas = "Price list\nstrawberries 6,40\nraspberries 9,20\n";
        assert_eq!(
            note("prices.txt", commas),
            None,
            "a number with a comma is no number read here"
        );
        let repeated = "Saturday 12\nSunday 14\nSaturday 9\n";
        assert_eq!(
            note("days.txt", repeated),
            None,
            "a name twice is a log, not a list of pairs"
        );
    }
}
