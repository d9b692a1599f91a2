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

/// The flaw of `code`, which did `work`, when it reads an input of
/// `inputs` (the files it reads and does not write) otherwise than the
/// same input written another way that means the same ([`rewrites`]):
/// run on a copy so written, it does other work.
pub(crate) async fn meaning_changed(
    copies: &impl CutCopies,
    (code, task): (&str, &str),
    inputs: &[(String, String)],
    work: &str,
) -> Option<String> {
    for (input, text) in inputs {
        for (rewritten, said) in rewrites(input, text, task) {
            let other = copies.work_in_cut(code, input, rewritten).await;
            // A value the program copies out is written the copy's way
            // too: the spaces are the same work.
            if other.is_some_and(|other| plain_spaces(&other) != plain_spaces(work)) {
                return Some(said);
            }
        }
    }
    None
}

/// `text` with its [`ODD_SPACES`] written as plain ones.
fn plain_spaces(text: &str) -> String {
    text.replace(ODD_SPACES, " ")
}

/// `text`, the file `input`, written another way that means the same, and
/// what is said of a program that does other work on it:
/// - a column written only on each group's first row, filled down
///   ([`crate::file_shape::filled_down`]): every program for an
///   ironmonger's fixings at their reorder level matched the one row that
///   says `Fixings`, though each was shown a reader that fills the column
///   down, and three agreed on 1 of 4 (held-out-52, spent);
/// - spaces of another kind (a web page's non-breaking ones) written as
///   plain spaces: two of the 1.5B model's three programs for the top lot
///   of Aberdeen Angus at a mart compared with `'Aberdeen Angus'`, missed
///   the lots written `Aberdeen\u{a0}Angus`, and agreed (held-out-53, spent).
fn rewrites(input: &str, text: &str, task: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    // Only where the task names a group: a program that copies rows whole
    // copies the blanks, and needs no group.
    let task = task.to_lowercase();
    let filled = crate::file_shape::filled_down(text).filter(|filled| {
        filled
            .values
            .iter()
            .any(|value| crate::named_value::names(&task, value))
    });
    if let Some(crate::file_shape::Filled { name, text: filled, .. }) = filled {
        found.push((filled, format!(
            "run on {input} with each blank `{name}` filled from the row above it, it computed other work: it reads a blank `{name}` as no {name}, where it is the one above it (fill the column down as you read the rows)"
        )));
    }
    let odd = |c: char| ODD_SPACES.contains(&c);
    // The value the first odd space stands in, between separators.
    let apart = |c: char| (c.is_whitespace() && !odd(c)) || ",;|\"'<>=:".contains(c);
    if let Some(at) = text.find(odd) {
        let start = text[..at]
            .char_indices()
            .rfind(|(_, c)| apart(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word: String = text[start..]
            .split(apart)
            .next()
            .unwrap_or_default()
            .chars()
            .take(40)
            .collect();
        let plain = word.replace(odd, " ");
        let shown = word.replace(odd, "\\u00a0");
        found.push((text.replace(odd, " "), format!(
            "run on {input} with its non-breaking spaces written as plain ones, it computed other work: it reads `{shown}` (a non-breaking space, `\\xa0`, between its words) as other than `{plain}` (read each value with `.replace('\\xa0', ' ')`)"
        )));
    }
    found
}

/// Spaces a text copied from a web page or a word processor may hold
/// where a plain space is meant: no-break, figure and narrow no-break.
const ODD_SPACES: [char; 3] = ['\u{a0}', '\u{2007}', '\u{202f}'];

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

    /// A program that matches a column written only on each group's first
    /// row, blanks and all, is found out; one that fills it down is not.
    #[tokio::test]
    async fn a_program_that_reads_a_blank_group_cell_as_empty_is_found_out() {
        let stock = "category,item,in_stock,reorder_at\nHinges,Butt hinge,14,10\n,Tee hinge,4,6\nFixings,Wood screws,6,10\n,Wall plugs,8,10\n,Coach bolts,9,8\nLocks,Padlock,2,4\n,Hasp,1,3\n";
        let inputs = [("stock.csv".to_string(), stock.to_string())];
        let matched = "import csv\nrows = list(csv.DictReader(open('stock.csv')))\nprint(sum(1 for r in rows if r['category'] == 'Fixings' and int(r['in_stock']) <= int(r['reorder_at'])))";
        assert_eq!(printed(matched, "stock.csv", stock).as_deref(), Some("1"));
        let task = "How many Fixings are at or below their reorder level?";
        let flaw = meaning_changed(&Printed, (matched, task), &inputs, "1")
            .await
            .expect("found out");
        assert!(
            flaw.starts_with(
                "run on stock.csv with each blank `category` filled from the row above it, it computed other work"
            ),
            "{flaw}"
        );
        let filled = "import csv\nrows = list(csv.DictReader(open('stock.csv')))\nabove = ''\nfor r in rows:\n    above = r['category'] = r['category'] or above\nprint(sum(1 for r in rows if r['category'] == 'Fixings' and int(r['in_stock']) <= int(r['reorder_at'])))";
        assert_eq!(printed(filled, "stock.csv", stock).as_deref(), Some("2"));
        assert_eq!(meaning_changed(&Printed, (filled, task), &inputs, "2").await, None);
        let unnamed = "How many items are at or below their reorder level?";
        assert_eq!(
            meaning_changed(&Printed, (matched, unnamed), &inputs, "1").await,
            None,
            "no group named"
        );
    }

    /// A program that compares a value with plain spaces misses the rows
    /// written with non-breaking ones, and is found out; one that reads
    /// them as plain spaces is not.
    #[tokio::test]
    async fn a_program_that_misses_values_with_non_breaking_spaces_is_found_out() {
        let sale = "lot,breed,price\n11,Aberdeen Angus,1385\n16,Aberdeen\u{a0}Angus,1465\n17,Simmental,1295\n";
        let inputs = [("sale.csv".to_string(), sale.to_string())];
        let plain = "import csv\nrows = [r for r in csv.DictReader(open('sale.csv', encoding='utf-8')) if r['breed'] == 'Aberdeen Angus']\nprint(max(rows, key=lambda r: int(r['price']))['lot'])";
        assert_eq!(printed(plain, "sale.csv", sale).as_deref(), Some("11"));
        let task = "Which lot of Aberdeen Angus made the most?";
        let flaw = meaning_changed(&Printed, (plain, task), &inputs, "11")
            .await
            .expect("found out");
        assert!(
            flaw.contains("it reads `Aberdeen\\u00a0Angus` (a non-breaking space, `\\xa0`, between its words) as other than `Aberdeen Angus`"),
            "{flaw}"
        );
        let read = plain.replace("r['breed'] ==", "r['breed'].replace('\\xa0', ' ') ==");
        assert_eq!(printed(&read, "sale.csv", sale).as_deref(), Some("16"));
        assert_eq!(meaning_changed(&Printed, (&read, task), &inputs, "16").await, None);
        let breed = "import csv\nrows = list(csv.DictReader(open('sale.csv', encoding='utf-8')))\nprint(max(rows, key=lambda r: int(r['price']))['breed'])";
        assert_eq!(
            meaning_changed(&Printed, (breed, task), &inputs, "Aberdeen\u{a0}Angus").await,
            None,
            "a value copied out with its space is the same work"
        );
    }
}
