//! A dotted number (a version `1.8.4`, an address `10.0.0.5`) that an edit
//! in place changed into a value of another form: `"version": "5"`.
//!
//! On held-out-46 (spent) two of seven programs for "a minor version bump"
//! of module.json computed the new minor part and wrote it alone as the
//! version; they agreed, and the run said `succeeded`. A value written as
//! three numbers or more joined by dots keeps that form through any edit of
//! it (a bump, a new address), whatever the task's words; only a task that
//! names the new value itself may ask for another form. The check reads the
//! file before and after, line by line, and stays quiet where a line
//! changed beside the value too (it cannot tell what replaced it).

/// What is said of `path`, which held `was` and holds `now`, when a line
/// kept all but a dotted number, which became digits and dots of another
/// count of parts (`5`, `1.5`) that `task` does not name, or, on a line of
/// a version, a bump that kept a number it resets ([`bumped_without_reset`]). A value with
/// letters in its place (`1.5.0-beta`) is another kind of edit, left to
/// the other checks. `None` otherwise.
pub(crate) fn changed_form(path: &str, was: &str, now: &str, task: &str) -> Option<String> {
    let task_names = |new: &str| {
        crate::text::stands_alone(task, new, char::is_alphanumeric)
            || ["v", "V"].iter().any(|v| task.contains(&format!("{v}{new}")))
    };
    // The bump check is for a version's own line (`"version": "1.4.2"`,
    // `__version__ = ...`), not a date or a section's number.
    let on_a_version_line =
        |old: &str| (was.lines()).any(|line| line.contains(old) && line.to_lowercase().contains("version"));
    let mut replaced = replaced_values(was, now).filter(|(_, new)| !task_names(new));
    replaced.find_map(|(old, new)| {
        if parts(new).is_some_and(|n| Some(n) != parts(old)) && !kept_from(old, new) {
            return Some(format!(
                "{path} held {old:?}, numbers joined by dots, and the edit wrote {new:?} in its place: the value keeps its form, with all of its parts (write the whole new value, such as a version's three numbers)"
            ));
        }
        let reset = bumped_without_reset(old, new).filter(|_| on_a_version_line(old))?;
        Some(format!(
            "{path} held the version {old:?}, and the edit wrote {new:?}: a version's number raised by one sets the numbers after it to 0 ({reset})"
        ))
    })
}

/// What `new` should be when it is `old`, a version of three numbers, with
/// one number raised by one and those after it kept where one is not 0:
/// those after it set to 0 (`3.14.2` to `3.15.2` should be `3.15.0`), as a
/// version bump does. On held-out-48 (spent) two programs for a minor bump
/// of package.json wrote 3.15.2, agreed, and the run said `succeeded`.
fn bumped_without_reset(old: &str, new: &str) -> Option<String> {
    let numbers = |value: &str| -> Option<Vec<u64>> { value.split('.').map(|part| part.parse().ok()).collect() };
    let (was, now) = (numbers(old)?, numbers(new)?);
    // A part of four digits is a year (`15.03.2024`, `2024.1.3`): a date
    // moved by a month keeps its day.
    let year = was.iter().chain(&now).any(|&n| n >= 1000);
    if was.len() != 3 || now.len() != 3 || year {
        return None;
    }
    let raised = (0..3).find(|&i| was[i] != now[i])?;
    let kept_after = now[raised + 1..] == was[raised + 1..];
    let not_reset = now[raised + 1..].iter().any(|&n| n != 0);
    (now[raised] == was[raised] + 1 && kept_after && not_reset).then(|| {
        let reset: Vec<String> = (0..3)
            .map(|i| if i > raised { 0 } else { now[i] }.to_string())
            .collect();
        reset.join(".")
    })
}

/// Each dotted number of a line of `was` and what stands in its place in
/// the same line of `now`, where the line kept everything before and after
/// it and the value changed; lines are paired only when both texts have as
/// many.
fn replaced_values<'a>(was: &'a str, now: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
    let paired = was.lines().count() == now.lines().count();
    was.lines()
        .zip(now.lines())
        .filter(move |(before, after)| paired && before != after)
        .flat_map(|(before, after)| {
            dotted_numbers(before).filter_map(move |(start, end)| {
                let (head, tail) = (&before[..start], &before[end..]);
                let rest = after.strip_prefix(head)?.strip_suffix(tail)?;
                (rest != &before[start..end]).then_some((&before[start..end], rest))
            })
        })
}

/// Where each dotted number of `line` stands (start and end): three or
/// more runs of digits joined by single dots, not inside a longer word or
/// number.
fn dotted_numbers(line: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = line.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at;
            let glued = start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'.');
            if !bytes[start].is_ascii_digit() || glued {
                at += 1;
                continue;
            }
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
                end += 1;
            }
            at = end;
            let value = &line[start..end];
            let next_glued = end < bytes.len() && bytes[end].is_ascii_alphanumeric();
            if parts(value).is_some_and(|n| n >= 3) && !next_glued {
                return Some((start, end));
            }
        }
        None
    })
}

/// Whether `new` is what `old` holds with less: its numbers some of
/// `old`'s in their order (`2019` of `03.04.2019`, `2.31` of `2.31.0`), or
/// its digits without the dots (`3850809` of `3.850.809`, thousands).
fn kept_from(old: &str, new: &str) -> bool {
    let mut old_parts = old.split('.');
    let in_order = new.split('.').all(|part| old_parts.any(|o| o == part));
    in_order || old.replace('.', "") == new
}

/// How many numbers `value` is, when it is only runs of digits joined by
/// single dots.
fn parts(value: &str) -> Option<usize> {
    let split: Vec<&str> = value.split('.').collect();
    split
        .iter()
        .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
        .then_some(split.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "{\n  \"id\": \"dungeon-tiles\",\n  \"version\": \"1.4.2\",\n  \"compatibility\": {\"minimum\": \"11.315.1\"}\n}\n";
    const TASK: &str =
        "Please do a minor version bump on my Foundry module in module.json. Don't change anything else in the file.";

    #[test]
    fn a_version_written_as_its_minor_part_alone_changed_its_form() {
        let now = MODULE.replace("\"1.4.2\"", "\"5\"");
        let said = changed_form("module.json", MODULE, &now, TASK).expect("the version lost its form");
        assert!(said.contains("\"1.4.2\"") && said.contains("\"5\""), "{said}");
        let two_parts = MODULE.replace("\"1.4.2\"", "\"1.5\"");
        assert!(changed_form("module.json", MODULE, &two_parts, TASK).is_some());
        // What the value holds, with less: thousands, a year, a shorter pin.
        let task = "Do it in the file.";
        assert_eq!(
            changed_form("c.csv", "Berlin;3.850.809\n", "Berlin;3850809\n", task),
            None
        );
        assert_eq!(
            changed_form("g.csv", "Concert;03.04.2019\n", "Concert;2019\n", task),
            None
        );
        assert_eq!(
            changed_form("r.txt", "requests==2.31.0\n", "requests==2.31\n", task),
            None
        );
    }

    #[test]
    fn a_version_raised_with_the_numbers_after_it_kept_is_no_bump() {
        let kept_patch = MODULE.replace("\"1.4.2\"", "\"1.5.2\"");
        let said = changed_form("module.json", MODULE, &kept_patch, TASK).expect("the patch number was kept");
        assert!(said.contains("(1.5.0)"), "{said}");
        let major = MODULE.replace("\"1.4.2\"", "\"2.4.2\"");
        assert!(changed_form("module.json", MODULE, &major, TASK).is_some_and(|s| s.contains("(2.0.0)")));
        let patch = MODULE.replace("\"1.4.2\"", "\"1.4.3\"");
        assert_eq!(
            changed_form("module.json", MODULE, &patch, TASK),
            None,
            "a patch bump has nothing after it"
        );
        let named = "Set the version in module.json to 1.5.2.";
        assert_eq!(
            changed_form("module.json", MODULE, &kept_patch, named),
            None,
            "the task names it"
        );
        let ip = "host = 10.0.0.5\n";
        assert_eq!(
            changed_form("a.ini", ip, "host = 10.0.1.5\n", "Move the host."),
            None,
            "four numbers"
        );
    }

    #[test]
    fn a_version_bumped_in_its_own_form_or_left_alone_is_no_flaw() {
        let bumped = MODULE.replace("\"1.4.2\"", "\"1.5.0\"");
        assert_eq!(changed_form("module.json", MODULE, &bumped, TASK), None);
        assert_eq!(changed_form("module.json", MODULE, MODULE, TASK), None);
        let ip = "host = 10.0.0.5\nport = 5432\n";
        let moved = "host = 10.0.12.50\nport = 5432\n";
        assert_eq!(
            changed_form("db.ini", ip, moved, "Point the database at 10.0.12.50 in db.ini."),
            None
        );
    }

    #[test]
    fn a_new_form_the_task_names_or_a_line_changed_beside_it_is_left_alone() {
        let named = MODULE.replace("\"1.4.2\"", "\"2.0\"");
        let task = "Set the version in module.json to 2.0.";
        assert_eq!(changed_form("module.json", MODULE, &named, task), None);
        // The line changed around the value too: what replaced it is not known.
        let rewritten = MODULE.replace("\"version\": \"1.4.2\"", "\"release\": \"5\"");
        assert_eq!(changed_form("module.json", MODULE, &rewritten, TASK), None);
        // Lines added or removed: not paired.
        let longer = MODULE.replace("\"1.4.2\",", "\"5\",\n  \"note\": \"x\",");
        assert_eq!(changed_form("module.json", MODULE, &longer, TASK), None);
    }

    #[test]
    fn numbers_of_fewer_parts_or_inside_words_are_not_dotted_numbers() {
        let prices = "item,price\ntea,14.50\n";
        assert_eq!(
            changed_form("p.csv", prices, "item,price\ntea,16\n", "Set tea to 16 in p.csv."),
            None
        );
        let found: Vec<(usize, usize)> = dotted_numbers("v1.2.3 and 4.5.6, 7.8").collect();
        assert_eq!(found, vec![(11, 16)]);
    }
}
