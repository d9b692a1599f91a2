//! What the executor model sees of a step: the goal, the step and its
//! dependencies' results, a text result's lines numbered when that helps a
//! small model count or pick a line.

use crate::context::Setting;
use crate::plan::{self, Plan, Step};
use crate::schedule::DependencyOutputs;

/// What the executor model sees of a step: the goal, the step, its dependencies' results.
pub(super) fn step_context(setting: &Setting, plan: &Plan, step: &Step, deps: &DependencyOutputs) -> String {
    context_with(setting, plan, step, deps, false)
}

/// [`step_context`], with a text result's lines numbered when `numbered`.
pub(super) fn context_with(
    setting: &Setting,
    plan: &Plan,
    step: &Step,
    deps: &DependencyOutputs,
    numbered: bool,
) -> String {
    let mut text = format!(
        "Goal of the whole task: {}\n\nThis step: [{}] {}\n",
        plan.goal, step.id, step.description
    );
    if let Some(expected) = &step.expected {
        text.push_str(&format!("A good result: {expected}\n"));
    }
    if !deps.is_empty() {
        text.push_str("\nResults of the steps it depends on:\n");
        for (id, output) in deps {
            let description = plan.step(id).map(|s| s.description.as_str()).unwrap_or("");
            let result = crate::text::cut_to_budget(&plan::value_as_text(output), setting.options.dependency_budget);
            match numbered.then(|| numbered_lines(&result)).flatten() {
                Some((lines, count)) => text.push_str(&format!(
                    "[{id}] {description} ({count} lines, numbered here; the numbers are not part of the text):\n{lines}\n\n"
                )),
                None => text.push_str(&format!("[{id}] {description}:\n{result}\n\n")),
            }
        }
    }
    text
}

/// Most lines of a result that are numbered for a reasoning step.
pub(super) const MOST_NUMBERED_LINES: usize = 200;

/// `text` with its lines numbered (`1| …`), and how many there are, when it
/// has several and not too many. A small model picking "the last line" of a
/// four-line file gave the first, and counted the lines that mention a word
/// wrong; numbered, the last line and the count are written beside them.
pub(super) fn numbered_lines(text: &str) -> Option<(String, usize)> {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if !(2..=MOST_NUMBERED_LINES).contains(&lines.len()) {
        return None;
    }
    let numbered: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}| {l}", i + 1))
        .collect();
    Some((numbered.join("\n"), lines.len()))
}

/// `reply` without the line numbers [`numbered_lines`] put before the lines
/// a model copied into it.
pub(super) fn without_line_numbers(reply: &str) -> String {
    static NUMBER: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?m)^[ \t]*\d+\| ?").expect("a valid pattern"));
    NUMBER.replace_all(reply, "").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_results_lines_are_numbered_for_reasoning_and_the_numbers_leave_the_reply() {
        let (lines, count) = numbered_lines("Mon: garden\nTue: rain\nThu: sprout\n").unwrap();
        assert_eq!(count, 3);
        assert_eq!(lines, "1| Mon: garden\n2| Tue: rain\n3| Thu: sprout");
        // One line, or too many, stays as it is.
        assert_eq!(numbered_lines("42"), None);
        assert_eq!(numbered_lines(&"x\n".repeat(MOST_NUMBERED_LINES + 1)), None);
        assert_eq!(without_line_numbers("3| Thu: sprout"), "Thu: sprout");
        assert_eq!(without_line_numbers("1| a\n2|b"), "a\nb");
        // A number that is the answer, or a time, is kept.
        assert_eq!(without_line_numbers("3"), "3");
        assert_eq!(without_line_numbers("09:14 | up"), "09:14 | up");
    }
}
