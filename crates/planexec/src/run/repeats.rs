//! Items of a list a run wrote that are written more than once, said as a
//! fact with its other way: each item once.
//!
//! Asked for each date "only once, in the order they first appear", the
//! 1.5B model's revision kept the dates in order and the repeats with them
//! (a spent tune run); whether repeats belong in a list is the task's to
//! say (a list of every sighting keeps them), so this is a choice the task
//! is asked about, not a finding.

use super::two_ways::TwoWays;

/// Fewest lines a list has for a repeat in it to be a fact.
const FEWEST_LINES: usize = 3;

/// The kinds of file a list is written to, one item a line (a file with
/// no extension too); the lines of JSON, YAML or a configuration repeat
/// by their form.
const LIST_KINDS: [&str; 5] = ["txt", "csv", "tsv", "md", "list"];

/// When a line of `now`, the list the run made at `path`, is written more
/// than once: which, how many times, and the two ways the list could be.
pub(crate) fn repeated_in(path: &str, now: &str) -> Option<TwoWays> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let is_list = name
        .rsplit_once('.')
        .is_none_or(|(_, kind)| LIST_KINDS.contains(&kind.to_lowercase().as_str()));
    let written = super::line_parts::lines_written(now);
    if !is_list || written.len() < FEWEST_LINES {
        return None;
    }
    let (item, times) = written
        .iter()
        .filter(|line| line.chars().any(char::is_alphanumeric))
        .map(|line| (*line, written.iter().filter(|other| *other == line).count()))
        .find(|(_, times)| *times > 1)?;
    Some(TwoWays {
        text: format!("In {path}, `{item}` is written {times} times.\n\n"),
        question: format!("how many times is each item to be written in {path}?"),
        ways: [
            "as many times as it is found (repeats kept)".to_string(),
            "each item only once".to_string(),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_written_twice_in_a_list_is_a_fact() {
        let fact = repeated_in("dates.txt", "2024-03-16\n2024-04-27\n2024-04-27\n2024-05-11\n").unwrap();
        assert_eq!(fact.text, "In dates.txt, `2024-04-27` is written 2 times.\n\n");
        assert_eq!(fact.ways[1], "each item only once");
        assert!(
            repeated_in("names", "Ann\nBo\nAnn\n").is_some(),
            "a file with no extension"
        );
    }

    #[test]
    fn a_list_of_items_once_a_short_list_or_a_json_file_is_no_fact() {
        assert_eq!(repeated_in("dates.txt", "2024-03-16\n2024-04-27\n2024-05-11\n"), None);
        assert_eq!(repeated_in("dates.txt", "a\na\n"), None, "two lines");
        assert_eq!(repeated_in("rows.json", "{\n\"a\": 1\n},\n{\n\"a\": 1\n}\n"), None);
        assert_eq!(
            repeated_in("table.md", "| a |\n|---|\n|---|\n| b |\n"),
            None,
            "no letter or digit"
        );
    }
}
