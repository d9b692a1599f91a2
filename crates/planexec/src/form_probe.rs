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
//! each with its own copies and its own measure of a program's work.

/// Fresh copies of a folder a program runs in, with one file cut: each
/// sandbox makes its own and measures a program's work its own way.
pub(crate) trait CutCopies {
    /// The work `code` does in a fresh copy of the folder where `input`
    /// holds `text`; `None` when no copy could be made or it failed.
    fn work_in_cut(
        &self,
        code: &str,
        input: &str,
        text: String,
    ) -> impl std::future::Future<Output = Option<String>> + Send;
}

/// The flaw of `code`, which did `work`, when it does not read the lines
/// of some form of the values of `inputs` (each file's path and text), run
/// in `copies`: said for the program to be written again.
pub(crate) async fn form_left_out(
    copies: &impl CutCopies,
    code: &str,
    inputs: &[(String, String)],
    work: &str,
) -> Option<String> {
    for (input, text) in inputs {
        for other in crate::value_forms::other_forms(input, text) {
            let unread = copies.work_in_cut(code, input, without(text, &other.lines)).await;
            if unread.as_deref() != Some(work) {
                continue;
            }
            let common = copies.work_in_cut(code, input, without(text, &other.common)).await;
            if common.is_some_and(|w| w != work) {
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

    /// What `code` prints with `input` holding `text`, run by `python3`.
    fn printed(code: &str, input: &str, text: &str) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(input), text).unwrap();
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg(code)
            .current_dir(dir.path())
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Copies in which a program's work is what it prints.
    struct Printed;

    impl CutCopies for Printed {
        async fn work_in_cut(&self, code: &str, input: &str, text: String) -> Option<String> {
            printed(code, input, &text)
        }
    }

    /// Whether the probe finds `code`, which printed `work` on the whole
    /// timesheet, not to read a form.
    async fn probed(code: &str, work: &str) -> Option<String> {
        let inputs = [("timesheet.txt".to_string(), SHEET.to_string())];
        form_left_out(&Printed, code, &inputs, work).await
    }

    /// A program that reads only the durations of one form is found not to
    /// read the others; one that reads them all is not (a form of one line,
    /// the title's week number, is not weighed), nor one that reads none.
    #[tokio::test]
    async fn a_program_that_reads_one_form_of_the_values_is_found_out() {
        let one_form = "import re\nt = 0\nfor line in open('timesheet.txt'):\n    m = re.search(r'(\\d+)h (\\d+)m', line)\n    if m:\n        t += int(m[1]) * 60 + int(m[2])\nprint(f'{t // 60}:{t % 60:02d}')";
        assert_eq!(printed(one_form, "timesheet.txt", SHEET).as_deref(), Some("5:45"));
        let flaw = probed(one_form, "5:45").await.expect("found out");
        assert!(
            flaw.starts_with("run without the 2 lines of timesheet.txt where the first value with digits on each line is written `45m` (2 lines, as in `Tue  45m     review`), it computed the same"),
            "{flaw}"
        );
        let every_form = "import re\nt = 0\nfor line in open('timesheet.txt').readlines()[1:]:\n    h = re.search(r'(\\d+)h', line)\n    m = re.search(r'(\\d+)m', line)\n    t += (int(h[1]) * 60 if h else 0) + (int(m[1]) if m else 0)\nprint(f'{t // 60}:{t % 60:02d}')";
        assert_eq!(printed(every_form, "timesheet.txt", SHEET).as_deref(), Some("11:50"));
        assert_eq!(probed(every_form, "11:50").await, None);
        assert_eq!(probed("print('7:00')", "7:00").await, None);
    }
}
