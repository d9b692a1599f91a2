//! A line an edit took out for a value the task names holds that value
//! whole, not inside a longer one.
//!
//! A program that removes "the line with k.osei@example.org" by `if value
//! in line` also removes `mk.osei@example.org`: on held-out-20 two of the
//! 1.5B model's programs did, agreed, and the run said `succeeded`. A value
//! written with more than letters (an address, a host name, an id, a
//! version) names one thing exactly, so a removed line that holds it only
//! as part of a longer word was not the one named.

use super::Run;

/// Most lines of a file compared before and after.
const COMPARED_LINES: usize = 2000;

/// When an edit in place of the run took out a line that holds a value the
/// task names only inside a longer word: the file's path and a line saying
/// so. `None` otherwise.
pub(crate) fn removed_by_part(run: &Run) -> Option<(String, String)> {
    let workspace = run.ctx.setting.tools.workspace()?;
    let values = exact_values(&run.task);
    run.originals.iter().find_map(|(path, was)| {
        let now = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
        let kept: Vec<&str> = now.lines().take(COMPARED_LINES).collect();
        let removed = was
            .lines()
            .take(COMPARED_LINES)
            .filter(|line| !line.trim().is_empty() && !kept.contains(line));
        for line in removed {
            let inside = values.iter().find(|v| line.contains(v.as_str()) && !holds_whole(line, v));
            if let Some(value) = inside {
                let what = format!(
                    "the run took the line `{}` out of {path}, which holds {value} only inside a longer word; the task names {value}: take out only lines where it stands whole",
                    line.trim()
                );
                return Some((path.clone(), what));
            }
        }
        None
    })
}

/// The words of `task` written with more than letters (a digit, `@`, `.`,
/// `_` or `-` inside them) and of three characters or more: values that
/// name one thing exactly.
fn exact_values(task: &str) -> Vec<String> {
    task.split_whitespace()
        .map(crate::plan::word_itself)
        .filter(|w| w.chars().count() >= 3 && w.chars().any(char::is_alphanumeric))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit() || "@._-".contains(c)))
        .map(str::to_string)
        .collect()
}

/// Whether `value` stands in `line` at least once with no letter, digit or
/// joining mark (`.`, `_`, `-`, `@`) right before or after it.
fn holds_whole(line: &str, value: &str) -> bool {
    let joins = |c: char| c.is_alphanumeric() || "._-@".contains(c);
    line.match_indices(value).any(|(at, _)| {
        let end = at + value.len();
        let whole_after = match line[end..].chars().next() {
            None => true,
            // A full stop after the value, not a dot inside a longer one.
            Some('.') => !line[end + 1..].chars().next().is_some_and(char::is_alphanumeric),
            Some(c) => !joins(c),
        };
        !line[..at].chars().next_back().is_some_and(joins) && whole_after
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_with_more_than_letters_is_exact() {
        let task = "The address k.osei@example.org keeps bouncing. Remove it from subscribers.txt, and drop v1.2 too.";
        assert_eq!(
            exact_values(task),
            ["k.osei@example.org", "subscribers.txt", "v1.2"],
            "words of letters only are not values"
        );
    }

    #[test]
    fn a_value_inside_a_longer_word_is_not_whole() {
        let value = "k.osei@example.org";
        assert!(holds_whole("k.osei@example.org", value));
        assert!(holds_whole("Kofi <k.osei@example.org>, bounced.", value));
        assert!(holds_whole("mail k.osei@example.org.", value), "a full stop after it");
        assert!(!holds_whole("mk.osei@example.org", value));
        assert!(!holds_whole("k.osei@example.org.uk", value));
        assert!(!holds_whole("k.osei@example.org_old", value));
    }
}
