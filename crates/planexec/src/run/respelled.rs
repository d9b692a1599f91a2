//! Items of a list a run made that are an input's lines written otherwise
//! than where each first stands there (other capitals, spaces taken out),
//! said as a fact with its other way: as the input first writes each.
//!
//! Asked to write seed names "each variety once … keeping the first
//! spelling seen with spaces trimmed", two of the 1.5B model's programs
//! lowercased them and took their inner spaces out (`blackkrim` for
//! `Black Krim`), agreed, and the run said `succeeded` (held-out-34,
//! spent). Whether values may be written otherwise is the task's to say (a
//! list "lowercased" asks for it), so this is a choice the task is asked
//! about, not a finding.

use super::two_ways::TwoWays;

/// Fewest lines a list has for its spelling to be a fact.
const FEWEST_LINES: usize = 3;

/// When each line of `now`, the list the run made at `path` (a plain list,
/// [`crate::list_test::holds_a_list`]), is a line of one of `inputs` (path
/// and text) in any capitals and spacing, and one of them is not written
/// as that input first writes it (runs of spaces aside): the first such,
/// and the two ways the list could be.
pub(crate) fn respelled_from(path: &str, now: &str, inputs: &[(String, String)]) -> Option<TwoWays> {
    let written = super::line_parts::lines_written(now);
    if !crate::list_test::holds_a_list(path) || written.len() < FEWEST_LINES {
        return None;
    }
    inputs
        .iter()
        .filter(|(input, _)| input != path)
        .find_map(|(input, text)| {
            let lines = super::line_parts::input_lines(text);
            let first_spelling = |item: &str| lines.iter().copied().find(|line| same_value(line, item));
            let firsts: Vec<&str> = written.iter().map(|item| first_spelling(item)).collect::<Option<_>>()?;
            // A list that holds the first spelling too holds two values.
            let held: Vec<String> = written.iter().map(|line| squeezed(line)).collect();
            let (item, first) = written
                .iter()
                .zip(&held)
                .zip(firsts)
                .find(|((_, item), first)| **item != squeezed(first) && !held.contains(&squeezed(first)))
                .map(|((item, _), first)| (item, first))?;
            Some(TwoWays {
                text: format!(
                    "The items of {path} are lines of {input} written otherwise than where each first stands there: `{item}` for `{first}`.\n\n"
                ),
                question: format!("how are the items of {path} to be written?"),
                ways: [
                    format!("changed from how {input} writes them (`{item}` for `{first}`)"),
                    format!("as {input} first writes each, with the spaces at their ends trimmed"),
                ],
            })
        })
}

/// `line` with each run of spaces one space: a list written with its
/// values' runs of spaces squeezed is not written otherwise.
fn squeezed(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether two lines are one value in any capitals and spacing.
fn same_value(a: &str, b: &str) -> bool {
    let key = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect()
    };
    !a.is_empty() && key(a) == key(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds() -> Vec<(String, String)> {
        let text = "Cherokee Purple\n  Sungold\nBlack Krim\ncherokee purple\nSUNGOLD\n";
        vec![("seeds.txt".to_string(), text.to_string())]
    }

    #[test]
    fn an_inputs_lines_written_in_other_capitals_or_spacing_are_a_fact() {
        let fact = respelled_from("unique.txt", "cherokeepurple\nsungold\nblackkrim\n", &seeds()).unwrap();
        assert!(
            fact.text.contains("`cherokeepurple` for `Cherokee Purple`"),
            "{}",
            fact.text
        );
        assert_eq!(
            fact.ways[1],
            "as seeds.txt first writes each, with the spaces at their ends trimmed"
        );
        // A later spelling of the input is not the first.
        let later = respelled_from("unique.txt", "cherokee purple\nSungold\nBlack Krim\n", &seeds()).unwrap();
        assert!(
            later.text.contains("`cherokee purple` for `Cherokee Purple`"),
            "{}",
            later.text
        );
    }

    #[test]
    fn first_spellings_lines_of_no_input_or_other_files_are_no_fact() {
        let inputs = seeds();
        assert_eq!(
            respelled_from("unique.txt", "Cherokee Purple\nSungold\nBlack Krim\n", &inputs),
            None
        );
        assert_eq!(
            respelled_from("unique.txt", "cherokee purple\nsungold\ntigerella\n", &inputs),
            None,
            "a line of no input: not the input's items"
        );
        assert_eq!(
            respelled_from("unique.txt", "Cherokee Purple\ncherokee purple\nSungold\n", &inputs),
            None,
            "both spellings: two values"
        );
        assert_eq!(
            respelled_from("unique.json", "sungold\nblackkrim\ncherokeepurple\n", &inputs),
            None
        );
        assert_eq!(
            respelled_from("unique.txt", "sungold\nblackkrim\n", &inputs),
            None,
            "two lines"
        );
    }
}
