//! An edit in place that wrote every `\n` line end of the file as `\r\n`.
//!
//! On held-out-49 (spent) two programs changed one price of prices.csv
//! with Python's `csv.writer`, which ends each row with `\r\n` unless told
//! otherwise; they agreed, every line of the file changed, and the run
//! said `succeeded`. The other way (`\r\n` written as `\n`) is left
//! alone: Python's `open()` reads `\r\n` as `\n`, so the plainest right
//! edit of such a file does it, as the built-in line tools do. The check
//! reads the file before and after; only a task that speaks of line ends
//! asks for them changed.

/// Words of a task that speak of line ends: such a task may ask for them
/// changed.
const OF_LINE_ENDS: [&str; 9] = [
    "line end",
    "line break",
    "crlf",
    "newline",
    "\\r",
    "carriage return",
    "unix2dos",
    "windows",
    "dos format",
];

/// What is said of `path`, which held `was` and holds `now`, when every
/// line end was `\n` alone and every one is `\r\n` now, with a change
/// beside them, and `task` does not speak of line ends. `None` otherwise, and for text that is not
/// all UTF-8 (a binary file read as text).
pub(crate) fn changed_ends(path: &str, was: &str, now: &str, task: &str) -> Option<String> {
    let task = task.to_lowercase().replace('-', " ");
    if OF_LINE_ENDS.iter().any(|words| task.contains(words)) || [was, now].iter().any(|t| t.contains('\u{FFFD}')) {
        return None;
    }
    // Line ends alone changed are no edit: the file was written back as it was.
    let edited = now.replace("\r\n", "\n") != was;
    (edited && form(was)? == Ends::Lf && form(now)? == Ends::CrLf).then(|| {
        format!(
            "the edit wrote every line of {path} ending in \\r\\n, where the file's lines end in \\n: keep the file's line ends (Python's csv.writer ends rows with \\r\\n unless given lineterminator='\\n')"
        )
    })
}

/// The one form of line end a text uses.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ends {
    Lf,
    CrLf,
}

/// The form of every line end of `text`, when it has two line ends or
/// more and all are of one form.
fn form(text: &str) -> Option<Ends> {
    let ends = text.matches('\n').count();
    let crlf = text.matches("\r\n").count();
    match (ends, crlf) {
        (0 | 1, _) => None,
        (_, 0) => Some(Ends::Lf),
        (all, crlf) if crlf == all => Some(Ends::CrLf),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICES: &str = "item,size,price\nSalted,regular,2.40\nCheddar Jalapeno,large,3.70\n";
    const TASK: &str = "Change the price of the large Cheddar Jalapeno pretzel in prices.csv to 3.95.";

    #[test]
    fn lines_written_with_crlf_are_a_flaw_and_crlf_taken_out_is_not() {
        let crlf = "item,size,price\r\nSalted,regular,2.40\r\nCheddar Jalapeno,large,3.95\r\n";
        let said = changed_ends("prices.csv", PRICES, crlf, TASK).expect("\\r\\n written");
        assert!(said.contains("lineterminator"), "{said}");
        let lf = crlf.replace("\r\n", "\n");
        assert_eq!(
            changed_ends("prices.csv", crlf, &lf, TASK),
            None,
            "open() reads \\r\\n as \\n"
        );
    }

    #[test]
    fn the_same_ends_mixed_ends_or_a_task_about_line_ends_are_left_alone() {
        let edited = PRICES.replace("3.70", "3.95");
        assert_eq!(changed_ends("prices.csv", PRICES, &edited, TASK), None);
        let mixed = "a\r\nb\nc\n";
        assert_eq!(changed_ends("x.txt", mixed, "a\r\nb\r\nc\r\n", TASK), None);
        let crlf = edited.replace('\n', "\r\n");
        let only_ends = PRICES.replace('\n', "\r\n");
        assert_eq!(
            changed_ends("prices.csv", PRICES, &only_ends, TASK),
            None,
            "no edit beside"
        );
        let asked = "Convert prices.csv to Windows line-endings (CRLF).";
        assert_eq!(changed_ends("prices.csv", PRICES, &crlf, asked), None);
        let asked = "Give prices.csv DOS line-breaks.";
        assert_eq!(changed_ends("prices.csv", PRICES, &crlf, asked), None);
        assert_eq!(
            changed_ends("one.txt", "x\n", "x\r\n", TASK),
            None,
            "one line end is no form"
        );
    }
}
