//! Whether a program reads every form of the values it is given: it is run
//! again on copies of the folder, once without the lines of a form other
//! than the most common one ([`crate::value_forms::other_forms`]), once
//! without the lines of the most common form. The same work the first
//! time and other work the second means it does not read that form.
//!
//! A small model writes its program to the form of the first values it
//! reads: on held-out-36 (spent) the run's program and a checking program
//! both matched `(\d+)h (\d+)m` in a timesheet, left out its `45m` and `1h`
//! lines, and agreed on a wrong total, and told the forms in its prompt,
//! the model wrote the same pattern again. What a program reads is seen
//! without a model, from what it computes. Used by the vote's sandbox
//! ([`crate::sandbox`]) and by the checking programs ([`crate::recompute`]),
//! each with its own measure of a program's work.

use std::path::Path;

/// The flaw of `code`, which did `work` in a copy of the folder at `root`,
/// when it does not read the lines of some form of the values of
/// `inputs` (each file's path and text): said for the program to be
/// written again. `work_of(copy, input, printed)` is what the program did
/// in a copy where `input` was cut, and printed `printed`.
pub(crate) async fn form_left_out(
    root: &Path,
    inputs: &[(String, String)],
    (code, work): (&str, &str),
    work_of: impl Fn(&Path, &str, String) -> Option<String>,
) -> Option<String> {
    for (input, text) in inputs {
        for other in crate::value_forms::other_forms(input, text) {
            let cut = |lines: &[usize]| Cut {
                root,
                input,
                text: without(text, lines),
            };
            let unread = cut(&other.lines).work(code, &work_of).await;
            if unread.as_deref() != Some(work) {
                continue;
            }
            if cut(&other.common).work(code, &work_of).await.is_some_and(|w| w != work) {
                let count = other.lines.len();
                return Some(format!(
                    "run without the {count} lines of {input} where {}, it computed the same: it does not read those lines (read each form the values take, unless the task leaves them out)",
                    other.said
                ));
            }
        }
    }
    None
}

/// A copy of the folder at `root` where `input` holds `text`.
struct Cut<'a> {
    root: &'a Path,
    input: &'a str,
    text: String,
}

impl Cut<'_> {
    /// What `code` does in the copy, as `work_of` measures it; `None` when
    /// no copy could be made or the program failed.
    async fn work(&self, code: &str, work_of: &impl Fn(&Path, &str, String) -> Option<String>) -> Option<String> {
        let (copy, python) = crate::sandbox::python_on_copy(self.root, "forms")?;
        std::fs::write(copy.path().join(self.input), &self.text).ok()?;
        let printed = crate::sandbox::run_watched(&python, copy.path(), code).await.0.ok()?;
        let printed = crate::plan::value_as_text(&printed).trim().to_string();
        work_of(copy.path(), self.input, printed)
    }
}

/// `text` without its lines at `left_out` (indices among its lines).
fn without(text: &str, left_out: &[usize]) -> String {
    let kept: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| !left_out.contains(i))
        .map(|(_, line)| line)
        .collect();
    format!("{}\n", kept.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHEET: &str = "Week 14 timesheet\nMon  2h 30m  calls\nTue  45m     review\nTue  1h      standup\nWed  3h 15m  work\nFri  4h      work\nFri  20m     admin\n";

    /// What a program printed, as its work.
    fn printed(_: &Path, _: &str, printed: String) -> Option<String> {
        Some(printed)
    }

    /// A program that reads only the durations of one form is found not to
    /// read the others; one that reads them all is not (a form of one line,
    /// the title's week number, is not weighed).
    #[tokio::test]
    async fn a_program_that_reads_one_form_of_the_values_is_found_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("timesheet.txt"), SHEET).unwrap();
        let inputs = [("timesheet.txt".to_string(), SHEET.to_string())];
        let one_form = "import re\nt = 0\nfor line in open('timesheet.txt'):\n    m = re.search(r'(\\d+)h (\\d+)m', line)\n    if m:\n        t += int(m[1]) * 60 + int(m[2])\nprint(f'{t // 60}:{t % 60:02d}')";
        let flaw = form_left_out(dir.path(), &inputs, (one_form, "5:45"), printed)
            .await
            .expect("found out");
        assert!(
            flaw.starts_with("run without the 2 lines of timesheet.txt where the first value with digits on each line is written `45m` (2 lines, as in `Tue  45m     review`), it computed the same"),
            "{flaw}"
        );
        let every_form = "import re\nt = 0\nfor line in open('timesheet.txt').readlines()[1:]:\n    h = re.search(r'(\\d+)h', line)\n    m = re.search(r'(\\d+)m', line)\n    t += (int(h[1]) * 60 if h else 0) + (int(m[1]) if m else 0)\nprint(f'{t // 60}:{t % 60:02d}')";
        assert_eq!(
            form_left_out(dir.path(), &inputs, (every_form, "11:50"), printed).await,
            None
        );
        // A program that reads no line at all is not this flaw.
        assert_eq!(
            form_left_out(dir.path(), &inputs, ("print('7:00')", "7:00"), printed).await,
            None
        );
        // The folder is as it was.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("timesheet.txt")).unwrap(),
            SHEET
        );
    }
}
