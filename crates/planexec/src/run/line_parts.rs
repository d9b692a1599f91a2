//! Lines of a written file that are parts of an input file's lines, not
//! whole ones, said as a choice of two ways for the check to ask the task
//! about ([`TwoWays`]).
//!
//! Asked to pull every ERROR line out of app.log, the 1.5B model's programs
//! wrote `re.findall(r'ERROR\s+(.+)')`: each line of errors.txt was the
//! end of a line of app.log, without its timestamp. Both programs agreed,
//! and the checker, shown the two files, passed the run (held-out-23).
//! Whether a part is what the task asks for is the task's to say (a list of
//! the addresses in a contact list is parts of its lines too), so this is a
//! fact, not a finding. It is asked as a choice, both ways round: put to
//! the task's words alone, the 1.5B model quoted "gather all the TODOs
//! from notes.md into todos.txt" as against TODO texts cut from their
//! lines, where the task said "just the text after TODO:" (held-out-40,
//! spent), and failed a right run.

use super::two_ways::TwoWays;

/// Most lines of a file compared.
const COMPARED_LINES: usize = 2000;

/// When every line of `now` (the file at `path`) is a part of a line of one
/// of `inputs` (path and text) and none is a whole one: a line saying so,
/// with the first such line and the line it was cut from, and the two ways
/// the file could be. A line of fewer than two words (a number, a name) is
/// no cut line: a computed value may stand in an input's line by chance.
pub(crate) fn cut_from(path: &str, now: &str, inputs: &[(String, String)]) -> Option<TwoWays> {
    let written = lines_written(now);
    if written.is_empty() || written.iter().any(|line| line.split_whitespace().count() < 2) {
        return None;
    }
    inputs
        .iter()
        .filter(|(input, _)| input != path)
        .find_map(|(input, text)| {
            let lines = input_lines(text);
            let mut first = None;
            for line in &written {
                if lines.contains(line) {
                    return None;
                }
                let whole = lines.iter().find(|whole| whole.contains(line))?;
                first.get_or_insert((*line, *whole));
            }
            let (part, whole) = first?;
            let cut = whole.replacen(part, " … ", 1);
            Some(TwoWays {
                text: format!(
                    "In {path}, no line is a whole line of {input}: each is a part of one, with the rest cut off (`{part}` is cut from `{whole}`, without `{}`).\n\n",
                    cut.trim()
                ),
                question: format!("what is each line of {path} to be, of a line of {input}?"),
                ways: [
                    format!("a part of the line, such as `{part}`"),
                    format!("the whole line, such as `{whole}`"),
                ],
            })
        })
}

/// When every line of `now` (the file at `path`, two lines or more) is a
/// whole list item of one of `inputs`, its list mark (`- `, `* `, `+ `,
/// `1. `) kept: a line saying so, and the two ways the file could be. Two
/// of the 1.5B model's three programs for the points under a Markdown
/// heading, "one per line, without the dashes", wrote each point with its
/// `- `, agreed, and the run said `succeeded` (held-out-42, spent). Whether
/// the marks belong is the task's to say (a copy of a section keeps them).
pub(crate) fn marked_from(path: &str, now: &str, inputs: &[(String, String)]) -> Option<TwoWays> {
    let written = lines_written(now);
    if written.len() < 2 {
        return None;
    }
    let item = *written.first()?;
    let unmarked = without_mark(item)?;
    if written.iter().any(|line| without_mark(line).is_none()) {
        return None;
    }
    let (input, _) = inputs.iter().filter(|(input, _)| input != path).find(|(_, text)| {
        let lines = input_lines(text);
        written.iter().all(|line| lines.contains(line))
    })?;
    Some(TwoWays {
        text: format!(
            "In {path}, each line is a whole list item of {input}, the list mark it has there (dashes, stars or numbers) kept at its start (`{item}`).\n\n"
        ),
        question: format!("what is each line of {path} to be, of a list item of {input}?"),
        ways: [
            format!("the item with its list mark, such as `{item}`"),
            format!("the item without its list mark, such as `{unmarked}`"),
        ],
    })
}

/// What follows the list mark a line opens with (`- `, `* `, `+ `, or a
/// number and `.` or `)`), when it opens with one and holds more.
fn without_mark(line: &str) -> Option<&str> {
    let rest = match line.strip_prefix(['-', '*', '+']) {
        Some(rest) => rest,
        None => {
            let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            (digits > 0)
                .then(|| line[digits..].strip_prefix(['.', ')']))
                .flatten()?
        }
    };
    let item = rest.strip_prefix(' ')?.trim();
    (!item.is_empty()).then_some(item)
}

/// The lines of a written file compared with an input's: trimmed, not
/// blank, the first [`COMPARED_LINES`].
pub(super) fn lines_written(now: &str) -> Vec<&str> {
    now.lines()
        .take(COMPARED_LINES)
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect()
}

/// The lines of an input compared with a written file's: trimmed, the
/// first [`COMPARED_LINES`].
pub(super) fn input_lines(text: &str) -> Vec<&str> {
    text.lines().take(COMPARED_LINES).map(str::trim).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> Vec<(String, String)> {
        let text = "2024-06-02 09:00:01 INFO Started\n2024-06-02 09:00:07 ERROR Failed to sync order 882\n2024-06-02 09:01:00 ERROR Disk nearly full\n";
        vec![("app.log".to_string(), text.to_string())]
    }

    #[test]
    fn lines_cut_from_an_inputs_lines_are_a_fact() {
        let fact = cut_from("errors.txt", "Failed to sync order 882\nDisk nearly full\n", &log()).unwrap();
        assert_eq!(
            fact.ways[1],
            "the whole line, such as `2024-06-02 09:00:07 ERROR Failed to sync order 882`"
        );
        let fact = fact.text;
        assert!(
            fact.contains(
                "`Failed to sync order 882` is cut from `2024-06-02 09:00:07 ERROR Failed to sync order 882`"
            ),
            "{fact}"
        );
    }

    #[test]
    fn whole_list_items_with_their_marks_are_a_fact() {
        let agenda =
            "# Agenda\n\n## Any other business\n- Bike racks\n- Hall paint\n\n## Next\n1. Set a date\n2. Book a room\n";
        let inputs = vec![("agenda.md".to_string(), agenda.to_string())];
        let fact = marked_from("aob.txt", "- Bike racks\n- Hall paint\n", &inputs).unwrap();
        assert_eq!(fact.ways[1], "the item without its list mark, such as `Bike racks`");
        assert!(fact.text.contains("a whole list item of agenda.md"), "{}", fact.text);
        let numbered = marked_from("next.txt", "1. Set a date\n2. Book a room\n", &inputs).unwrap();
        assert_eq!(numbered.ways[1], "the item without its list mark, such as `Set a date`");
        let bare = "Bike racks\nHall paint\n";
        assert_eq!(marked_from("aob.txt", bare, &inputs), None, "marks taken off");
        assert_eq!(marked_from("aob.txt", "- Bike racks\n", &inputs), None, "one line");
        assert_eq!(
            marked_from("aob.txt", "- Bike racks\n- Roof\n", &inputs),
            None,
            "not all from the input"
        );
        assert_eq!(marked_from("agenda.md", agenda, &inputs), None, "the file itself");
    }

    #[test]
    fn whole_lines_or_values_are_no_cut_lines() {
        let whole = "2024-06-02 09:00:07 ERROR Failed to sync order 882\n2024-06-02 09:01:00 ERROR Disk nearly full\n";
        assert_eq!(cut_from("errors.txt", whole, &log()), None, "whole lines");
        let mixed = "2024-06-02 09:00:07 ERROR Failed to sync order 882\nDisk nearly full\n";
        assert_eq!(cut_from("errors.txt", mixed, &log()), None, "one line is whole");
        assert_eq!(cut_from("count.txt", "882\n", &log()), None, "a value");
        assert_eq!(
            cut_from("notes.txt", "Failed to ship\n", &log()),
            None,
            "not from the input"
        );
        assert_eq!(
            cut_from("app.log", "Disk nearly full\n", &log()),
            None,
            "the file itself"
        );
    }
}
