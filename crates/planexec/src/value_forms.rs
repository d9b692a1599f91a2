//! Values a file writes in more than one form, said in the prompt of a
//! program that reads it: a duration as `2h 30m`, `45m` and `1h`, an
//! amount as `$89.00` and `$1,045.50`, a name as `Linden`, ` linden ` and
//! `LINDEN`, a field left empty in some rows.
//!
//! A small model writes its program to the form of the first values it
//! reads, though the file is shown whole: on held-out-36 (spent) the run's
//! program and a checking program both matched `(\d+)h (\d+)m` in a
//! timesheet, left out the four lines of another form, and agreed on a
//! wrong total; on held-out-35 (spent) programs summed one spelling of a
//! hive's name, and left out the loans whose returned date was blank. A
//! form is found from the value alone (each run of digits one `9`, each
//! word of three letters or more one `a`), never from the task's words,
//! and each form is said with an example and how many lines hold it.

/// Most forms said for one column or file, and most columns said for one
/// file: a note is read by a model with a small context.
const MOST_FORMS: usize = 5;
const MOST_COLUMNS: usize = 4;

/// Fewest lines of free text whose first values are weighed: fewer are no
/// pattern to depart from.
const FEWEST_LINES: usize = 3;

/// For each file of `paths` in `workspace` whose values are written in
/// more than one form ([`forms_note`]), a line that says so. Empty when none is.
pub(crate) fn forms_notes<'a>(
    workspace: &crate::tools::workspace::Workspace,
    paths: impl IntoIterator<Item = &'a str>,
) -> String {
    crate::file_shape::notes_of(workspace, paths, forms_note)
}

/// The heading of the notes in a program's prompt.
pub(crate) const FORMS_HEADING: &str =
    "Values these files write in more than one form, or leave empty (the program must read each form as the task means it):";

/// What `text`, the file at `path`, writes in more than one form: for a
/// table, each column whose values with digits take several forms, whose
/// words are one word in other capitals or spaces, or that is empty in
/// some rows; for a text file that is no table, the first value with
/// digits on each line, when it takes several forms. `None` when nothing is.
pub(crate) fn forms_note(path: &str, text: &str) -> Option<String> {
    // A header of digits or a comment is prose split at its commas.
    let table = crate::file_shape::table_cells(text)
        .filter(|(header, _)| header.iter().all(|name| !has_digit(name) && !name.starts_with('#')));
    let said = match table {
        Some((header, rows)) => columns_said(&header, &rows),
        None if free_text(path) => first_values_said(text).into_iter().collect(),
        None => Vec::new(),
    };
    (!said.is_empty()).then(|| format!("{path}: {}", said.join("; ")))
}

/// Whether the file at `path` is free text, whose lines may hold values:
/// not a configuration or data file of a syntax of its own (a JSON or
/// TOML file's values are of many kinds by design).
fn free_text(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, extension)) => matches!(extension.to_ascii_lowercase().as_str(), "txt" | "log" | "text"),
        None => true,
    }
}

/// What each column of a table (`header`, `rows`) writes in several forms.
fn columns_said(header: &[String], rows: &[Vec<String>]) -> Vec<String> {
    header
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let values: Vec<&str> = rows.iter().filter_map(|row| row.get(i)).map(String::as_str).collect();
            column_said(name, &values)
        })
        .take(MOST_COLUMNS)
        .collect()
}

/// What the column `name` of `values` writes in several forms.
fn column_said(name: &str, values: &[&str]) -> Option<String> {
    let filled: Vec<&str> = values.iter().copied().filter(|v| !v.trim().is_empty()).collect();
    let mut said = Vec::new();
    let quantities = filled.iter().filter(|v| is_quantity(v)).count();
    if quantities * 2 >= filled.len() {
        let forms: Vec<Valued> = filled
            .iter()
            .map(|v| Valued {
                form: form(v),
                value: v.trim().to_string(),
                line: None,
            })
            .collect();
        said.extend(forms_said(&forms, "row").map(|forms| format!("written in {forms}")));
    } else {
        said.extend(spellings_said(&filled));
    }
    let empty = values.len() - filled.len();
    if empty > 0 && !filled.is_empty() {
        said.push(format!("empty in {empty} of {} rows", values.len()));
    }
    (!said.is_empty()).then(|| format!("column `{name}` is {}", said.join(", and ")))
}

/// The words of `values` written as one word in other capitals or with
/// spaces around: `` `Linden` is also written ` linden `, `LINDEN` ``.
fn spellings_said(values: &[&str]) -> Option<String> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for value in values {
        let key = value.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, spellings)) if !spellings.contains(value) => spellings.push(value),
            Some(_) => {}
            None => groups.push((key, vec![value])),
        }
    }
    let said: Vec<String> = groups
        .iter()
        .filter(|(_, spellings)| spellings.len() > 1)
        .take(MOST_FORMS)
        .map(|(_, spellings)| {
            let others: Vec<String> = spellings[1..].iter().map(|s| format!("`{s}`")).collect();
            format!("`{}` also as {}", spellings[0], others.join(", "))
        })
        .collect();
    (!said.is_empty()).then(|| format!("one word in other capitals or spaces: {}", said.join("; ")))
}

/// The first value with digits on each line of `text`, when they take
/// several forms, each said with the first line that holds it.
fn first_values_said(text: &str) -> Option<String> {
    let firsts: Vec<Valued> = text
        .lines()
        .filter_map(|line| {
            let value = first_value(line)?;
            Some(Valued {
                form: form(&value),
                value,
                line: Some(crate::text::one_line(line.trim(), 60)),
            })
        })
        .collect();
    if firsts.len() < FEWEST_LINES {
        return None;
    }
    let said = forms_said(&firsts, "line")?;
    Some(format!("the first value with digits on each line is written in {said}"))
}

/// A value, its form, and the line it stands on (for free text).
struct Valued {
    form: String,
    value: String,
    line: Option<String>,
}

/// The first run of words with digits on `line` (`2h 30m` of `Mon  2h 30m
/// client calls`), the punctuation around it aside.
/// A comma or semicolon after a word ends the value (`7:45, 9:05` is two).
fn first_value(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let start = words.iter().position(|word| is_quantity(word))?;
    let mut run = Vec::new();
    for word in &words[start..] {
        if !is_quantity(word) {
            break;
        }
        run.push(word.trim_start_matches('(').trim_end_matches([',', ';', ':', '.', ')']));
        if word.ends_with([',', ';']) {
            break;
        }
    }
    Some(run.join(" "))
}

/// `values` grouped by form, the most common first, when there are two
/// forms or more: `` 2 forms: `x` (3 rows), `y` (1 row) ``, each shown by
/// its first value (and the line it stands on).
fn forms_said(values: &[Valued], unit: &str) -> Option<String> {
    let mut groups: Vec<(&Valued, usize)> = Vec::new();
    for valued in values {
        match groups.iter_mut().find(|(first, _)| first.form == valued.form) {
            Some(group) => group.1 += 1,
            None => groups.push((valued, 1)),
        }
    }
    if groups.len() < 2 {
        return None;
    }
    groups.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    let mut said: Vec<String> = groups
        .iter()
        .take(MOST_FORMS)
        .map(|(first, count)| {
            let plural = if *count == 1 { "" } else { "s" };
            let line = first
                .line
                .as_ref()
                .map_or(String::new(), |line| format!(", as in `{line}`"));
            format!("`{}` ({count} {unit}{plural}{line})", first.value)
        })
        .collect();
    if groups.len() > MOST_FORMS {
        said.push(format!("and {} more", groups.len() - MOST_FORMS));
    }
    Some(format!("{} forms: {}", groups.len(), said.join(", ")))
}

/// The form of a value: a plain number is `9`; otherwise each run of
/// digits is `9`, each run of letters `a` (a month's or a code's letters
/// are one form whichever they are) but for a unit, one or two letters
/// right after digits (`h`, `m`, `kg`), kept in small letters; spaces
/// are one space, and signs are as they are.
fn form(value: &str) -> String {
    let value = value.trim();
    if value.parse::<f64>().is_ok_and(f64::is_finite) && !value.contains(['e', 'E']) {
        return "9".to_string();
    }
    let chars: Vec<char> = value.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let same_kind = |d: &char| {
            (c.is_ascii_digit() && d.is_ascii_digit())
                || (c.is_alphabetic() && d.is_alphabetic())
                || (c.is_whitespace() && d.is_whitespace())
        };
        let run = chars[i..].iter().take_while(|d| same_kind(d)).count().max(1);
        let word: String = chars[i..i + run].iter().collect();
        match c {
            c if c.is_ascii_digit() => out.push('9'),
            c if c.is_alphabetic() && run <= 2 && out.ends_with('9') => out.push_str(&word.to_lowercase()),
            c if c.is_alphabetic() => out.push('a'),
            c if c.is_whitespace() => out.push(' '),
            c => out.push(c),
        }
        i += run;
    }
    out
}

fn has_digit(value: &str) -> bool {
    value.chars().any(|c| c.is_ascii_digit())
}

/// Whether `value` is a quantity, a date or a time rather than a name or
/// a code: its first letter or digit is a digit (`$1,200`, `2h`, `14:05`,
/// `2024-03-05`; not `B-11` or `photo-001.jpg`).
fn is_quantity(value: &str) -> bool {
    value
        .chars()
        .find(|c| c.is_alphanumeric())
        .is_some_and(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_the_values_digits_and_words_made_one_each() {
        assert_eq!(form("12.5"), "9");
        assert_eq!(form("1200"), "9");
        assert_eq!(form("$1,045.50"), "$9,9.9");
        assert_eq!(form("2h 30m"), "9h 9m");
        assert_eq!(form("45m"), "9m");
        assert_eq!(form("7 Mar 2024"), form("12 April 2023"));
        assert_ne!(form("2024-03-05"), form("03/05/2024"));
    }

    #[test]
    fn durations_of_several_forms_on_free_lines_are_each_said() {
        let sheet = "Week 14 timesheet - J. Ortiz\nMon  2h 30m  client calls\nTue  45m     code review\nTue  1h      standup\nWed  3h 15m  feature work\nThu  1h 5m   bugfix #42\nFri  4h      feature work\nFri  20m     admin\n";
        let note = forms_note("timesheet.txt", sheet).unwrap();
        assert!(
            note.starts_with("timesheet.txt: the first value with digits on each line is written in 4 forms: `2h 30m` (3 lines, as in `Mon  2h 30m  client calls`), `45m` (2 lines, as in `Tue  45m     code review`), `1h` (2 lines, as in `Tue  1h      standup`), `14` (1 line, as in `Week 14 timesheet - J. Ortiz`)"),
            "{note}"
        );
        // Lines of one form, or too few to weigh, are nothing to say.
        assert_eq!(forms_note("log.txt", "10:01 start\n10:05 step\n10:09 stop\n"), None);
        assert_eq!(
            forms_note("results.txt", "collected 13 items\ntest_a ... PASSED\n"),
            None
        );
        // A configuration file's values are of many kinds by design.
        assert_eq!(
            forms_note("app.toml", "port = 8080\nhost = \"a1\"\nratio = 0.5\n"),
            None
        );
    }

    #[test]
    fn a_tables_columns_say_their_forms_their_spellings_and_their_empty_rows() {
        let harvest = "# harvest log\ndate,hive,kg\n2024-05-18,Linden,8.4\n2024-06-02, linden ,9.25\n2024-06-16,LINDEN,11.3\n2024-06-16,Clover,2.75\n";
        let note = forms_note("harvest.csv", harvest).unwrap();
        assert_eq!(
            note,
            "harvest.csv: column `hive` is one word in other capitals or spaces: `Linden` also as ` linden `, `LINDEN`"
        );
        let loans = "id,due,returned,fee\nL1,2024-03-01,2024-02-27,$1.50\nL2,2024-03-04,,$12\nL3,2024-03-05,2024-03-09,\"$1,045.50\"\n";
        let note = forms_note("loans.csv", loans).unwrap();
        assert_eq!(
            note,
            "loans.csv: column `returned` is empty in 1 of 3 rows; column `fee` is written in 3 forms: `$1.50` (1 row), `$12` (1 row), `$1,045.50` (1 row)"
        );
        // A plain table of one form in each column says nothing.
        assert_eq!(
            forms_note("orders.csv", "id,name,total\n1,Ann,3.50\n2,Bo,12\n3,Cy,7\n"),
            None
        );
    }
}
