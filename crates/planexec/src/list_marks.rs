//! Whether a plain list a program or a run wrote kept the marks of the
//! Markdown list it copied its values from: `- Zoë Marchetti` where the
//! file lists names. In a Markdown file the `- `, `* `, `+ ` or `1. ` that
//! opens an item is the list's syntax, not part of the item; a `.txt` list
//! of those items holds the items. On held-out-44 (spent) a run copied a
//! class's names from register.md with their `- ` and said `succeeded`.
//! No model reads the task here: the evidence is the lines themselves,
//! each standing as it is in a Markdown input.

/// The flaw, said for the program or the run, when every line of `text`
/// (the plain list `path` holds, [`crate::list_test::holds_a_list`]; two
/// lines or more) opens with a list mark and stands, as it is, as a line
/// of one Markdown file among `inputs` (path, text). `None` otherwise: a
/// list whose lines are its own (no Markdown input holds them) keeps what
/// it wrote.
pub(crate) fn marks_kept(path: &str, text: &str, inputs: &[(&str, &str)]) -> Option<String> {
    if !crate::list_test::holds_a_list(path) {
        return None;
    }
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    if lines.len() < 2 {
        return None;
    }
    let marks: Vec<&str> = lines.iter().map(|line| list_mark(line)).collect::<Option<_>>()?;
    // A task list's `- [ ]` is a box to tick, kept with its item.
    let boxed = |line: &str, mark: &str| ["[ ]", "[x]", "[X]"].iter().any(|b| line[mark.len()..].starts_with(b));
    if lines.iter().zip(&marks).any(|(line, mark)| boxed(line, mark)) {
        return None;
    }
    let (source, _) = inputs.iter().find(|(input, input_text)| {
        is_markdown(input) && {
            let held: std::collections::HashSet<&str> = input_text.lines().map(str::trim).collect();
            lines.iter().all(|line| held.contains(line))
        }
    })?;
    let first = lines[0];
    let item = first[marks[0].len()..].trim_start();
    Some(format!(
        "every line of {path} opens with a list mark copied from {source} (`{first}`): in Markdown the mark is the list's layout, not part of the item; write the items alone (`{item}`)"
    ))
}

/// The list mark `line` opens with, with the spaces after it: `- `, `* `,
/// `+ `, or a number with `.` or `)` (`12. `). `None` for any other line.
fn list_mark(line: &str) -> Option<&str> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let mark_end = match line.as_bytes().get(digits) {
        Some(b'.' | b')') if digits > 0 && digits <= 3 => digits + 1,
        Some(b'-' | b'*' | b'+') if digits == 0 => 1,
        _ => return None,
    };
    let after = line.get(mark_end..)?;
    let item = after.trim_start_matches([' ', '\t']);
    (item.len() < after.len() && !item.is_empty()).then(|| &line[..line.len() - item.len()])
}

/// Whether `path` names a Markdown file, by its extension.
fn is_markdown(path: &str) -> bool {
    let extension = std::path::Path::new(path).extension().and_then(|e| e.to_str());
    matches!(
        extension.map(str::to_ascii_lowercase).as_deref(),
        Some("md" | "markdown")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTER: &str =
        "# Registers\n\n## Tuesday – Ballet\n- Zoë Marchetti\n- Inès Laurent\n\n## Tuesday – Tap\n- Noah Brennan\n";

    #[test]
    fn items_copied_with_their_markdown_marks_are_a_flaw() {
        let inputs = [("register.md", REGISTER)];
        let said = marks_kept("ballet.txt", "- Zoë Marchetti\n- Inès Laurent\n", &inputs).expect("a flaw");
        assert!(
            said.contains("register.md") && said.contains("`Zoë Marchetti`"),
            "{said}"
        );
        assert_eq!(marks_kept("ballet.txt", "Zoë Marchetti\nInès Laurent\n", &inputs), None);
    }

    #[test]
    fn marks_of_a_plain_text_input_or_lines_of_its_own_are_kept() {
        let todo = "- buy milk\n- ring the vet\n";
        assert_eq!(marks_kept("urgent.txt", todo, &[("todo.txt", todo)]), None);
        let own = "- Zoë Marchetti\n- someone else\n";
        assert_eq!(marks_kept("ballet.txt", own, &[("register.md", REGISTER)]), None);
        // A table or a Markdown file written is no plain list.
        let copied = "- Zoë Marchetti\n- Inès Laurent\n";
        assert_eq!(marks_kept("ballet.md", copied, &[("register.md", REGISTER)]), None);
        // A task list's boxes are kept with their items.
        let boxes = "## Jobs\n- [ ] Paint the shed\n- [x] Fix the gate\n";
        assert_eq!(
            marks_kept(
                "jobs.txt",
                "- [ ] Paint the shed\n- [x] Fix the gate\n",
                &[("plan.md", boxes)]
            ),
            None
        );
        // One line alone says nothing of a list.
        assert_eq!(
            marks_kept("ballet.txt", "- Zoë Marchetti\n", &[("register.md", REGISTER)]),
            None
        );
    }

    #[test]
    fn numbered_and_starred_marks_are_read_and_other_openings_are_not() {
        assert_eq!(list_mark("1. Maya"), Some("1. "));
        assert_eq!(list_mark("12) Maya"), Some("12) "));
        assert_eq!(list_mark("*  Maya"), Some("*  "));
        assert_eq!(list_mark("+ Maya"), Some("+ "));
        assert_eq!(list_mark("-5 degrees"), None);
        assert_eq!(list_mark("2.5 kg"), None);
        assert_eq!(list_mark("-"), None);
        assert_eq!(list_mark("[EMERGENCY] boiler"), None);
        assert_eq!(list_mark("**bold** item"), None);
    }
}
