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
//! run of letters one `a` but for a unit after digits), never from the
//! task's words, and each form is said with an example and how many lines
//! hold it. Said alone, the forms did not change the 1.5B model's timesheet
//! programs; so a checking program is also run without the lines of each
//! other form ([`other_forms`], in [`crate::recompute`]), and one that
//! computes the same without them is found not to read them.

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
    "Values these files write in more than one form, with more than digits, or leave empty (the program must read each form as the task means it):";

/// What `text`, the file at `path`, writes in more than one form: for a
/// table, each column whose values with digits take several forms, whose
/// words are one word in other capitals or spaces, or that is empty in
/// some rows; for a text file that is no table, the first value with
/// digits on each line, when it takes several forms. `None` when nothing is.
pub(crate) fn forms_note(path: &str, text: &str) -> Option<String> {
    let said: Vec<String> = kinds_of_values(path, text)
        .iter()
        .filter_map(Values::said)
        .take(MOST_COLUMNS)
        .collect();
    (!said.is_empty()).then(|| format!("{path}: {}", said.join("; ")))
}

/// Lines of `text` (the file at `path`) that write values of one kind in
/// a form other than the most common one, or a word in another spelling,
/// two lines or more of a form, for a program to be run without them
/// ([`crate::recompute`]): each with how it is said and the lines of the most
/// common form.
pub(crate) fn other_forms(path: &str, text: &str) -> Vec<OtherForm> {
    let mut found = Vec::new();
    for values in kinds_of_values(path, text) {
        for groups in values.grouped() {
            let Some((common, others)) = groups.split_first() else {
                continue;
            };
            for other in others.iter().filter(|group| group.lines.len() >= 2) {
                found.push(OtherForm {
                    said: format!("{} is written {}", values.of, other.said(values.unit)),
                    lines: other.lines.clone(),
                    common: common.lines.clone(),
                });
            }
        }
    }
    found
}

/// Lines that write a value in a form other than the most common one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OtherForm {
    /// The form, said with an example: "column `hive` is written as ` linden `".
    pub said: String,
    /// Its lines, as indices among the file's lines.
    pub lines: Vec<usize>,
    /// The lines of the most common form.
    pub common: Vec<usize>,
}

/// Values of one kind in a file: a table's column, or the first value
/// with digits on each line of free text.
struct Values {
    /// What they are: "column `hive`", "the first value with digits on each line".
    of: String,
    /// Each line's value (none for an empty field), with its form.
    values: Vec<Valued>,
    /// How many lines leave it empty.
    empty: usize,
    /// Whether they are quantities (grouped by form) or words (grouped by spelling).
    quantities: bool,
    unit: &'static str,
}

/// A value, its form, and its line: its index, and the line itself (for
/// free text, where the line says what the value is).
struct Valued {
    form: String,
    value: String,
    at: usize,
    line: Option<String>,
}

/// One form of a kind of values, and the lines that write it.
struct Group<'a> {
    first: &'a Valued,
    /// Other spellings of one word, after the first.
    spellings: Vec<&'a str>,
    lines: Vec<usize>,
}

impl Group<'_> {
    /// The group said: "`45m` (2 lines, as in `Tue 45m code review`)", or
    /// for spellings, "as ` linden `, `LINDEN`".
    fn said(&self, unit: &str) -> String {
        if !self.spellings.is_empty() {
            let spellings: Vec<String> = self.spellings.iter().map(|s| format!("`{s}`")).collect();
            return format!("as {}", spellings.join(", "));
        }
        let count = self.lines.len();
        let plural = if count == 1 { "" } else { "s" };
        let line = self
            .first
            .line
            .as_ref()
            .map_or(String::new(), |line| format!(", as in `{line}`"));
        format!("`{}` ({count} {unit}{plural}{line})", self.first.value)
    }
}

impl Values {
    /// The values grouped: by form, the most common first, as one list;
    /// or for words, one list per word written in several spellings (its
    /// first spelling, then its others as one group).
    fn grouped(&self) -> Vec<Vec<Group<'_>>> {
        if self.quantities {
            let mut groups: Vec<Group> = Vec::new();
            for valued in &self.values {
                match groups.iter_mut().find(|group| group.first.form == valued.form) {
                    Some(group) => group.lines.push(valued.at),
                    None => groups.push(Group {
                        first: valued,
                        spellings: Vec::new(),
                        lines: vec![valued.at],
                    }),
                }
            }
            groups.sort_by_key(|group| std::cmp::Reverse(group.lines.len()));
            return if groups.len() >= 2 { vec![groups] } else { Vec::new() };
        }
        let mut words: Vec<(String, Vec<&Valued>)> = Vec::new();
        for valued in &self.values {
            let key = valued
                .value
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            match words.iter_mut().find(|(k, _)| *k == key) {
                Some((_, all)) => all.push(valued),
                None => words.push((key, vec![valued])),
            }
        }
        words
            .into_iter()
            .filter_map(|(_, all)| {
                let first = all[0];
                let (same, other): (Vec<&Valued>, Vec<&Valued>) = all.into_iter().partition(|v| v.value == first.value);
                let mut spellings: Vec<&str> = Vec::new();
                for valued in &other {
                    if !spellings.contains(&valued.value.as_str()) {
                        spellings.push(&valued.value);
                    }
                }
                let first_group = Group {
                    first,
                    spellings: Vec::new(),
                    lines: same.iter().map(|v| v.at).collect(),
                };
                let others = Group {
                    first: other.first()?,
                    spellings,
                    lines: other.iter().map(|v| v.at).collect(),
                };
                Some(vec![first_group, others])
            })
            .collect()
    }

    /// The values said, when they take several forms or spellings or are
    /// empty in some lines.
    fn said(&self) -> Option<String> {
        let mut said = Vec::new();
        let grouped = self.grouped();
        if self.quantities {
            if let Some(groups) = grouped.first() {
                let mut forms: Vec<String> = groups.iter().take(MOST_FORMS).map(|g| g.said(self.unit)).collect();
                if groups.len() > MOST_FORMS {
                    forms.push(format!("and {} more", groups.len() - MOST_FORMS));
                }
                said.push(format!("written in {} forms: {}", groups.len(), forms.join(", ")));
            }
            said.extend(self.signed());
        } else if !grouped.is_empty() {
            let words: Vec<String> = grouped
                .iter()
                .take(MOST_FORMS)
                .map(|groups| format!("`{}` also {}", groups[0].first.value, groups[1].said(self.unit)))
                .collect();
            said.push(format!("one word in other capitals or spaces: {}", words.join("; ")));
        }
        if self.empty > 0 && !self.values.is_empty() {
            let of = self.values.len() + self.empty;
            said.push(format!("empty in {} of {of} {}s", self.empty, self.unit));
        }
        (!said.is_empty()).then(|| format!("{} is {}", self.of, said.join(", and ")))
    }

    /// Quantities all of one form that is a number with more than digits:
    /// a currency sign, a percent sign or thousands separators (`$1.80`,
    /// `12%`, `1,200`). Of one form, they are no forms to tell apart, and
    /// still no number `float()` reads: on held-out-39 (spent) each of the
    /// 1.5B model's seven programs for a bakery's prices, all written
    /// `$1.80`, failed on them or filtered every row away.
    fn signed(&self) -> Option<String> {
        let first = self.values.first()?;
        let one_form = self.values.iter().all(|valued| valued.form == first.form);
        let signed = first.form.contains('9') && first.form.contains(['$', '£', '€', '¥', '%', ',']);
        (self.quantities && one_form && signed && self.values.len() >= 2).then(|| {
            // `35,00` is 35.00, where `1,200` is 1200: of held-out-42's
            // card reader export split by `;` (spent), this note said
            // "the number 3500", and two programs agreed on 3500.
            let (point, advice) = match decimal_comma(&first.value) {
                true => (',', "its comma is the decimal point"),
                false => ('.', "take the rest out before converting"),
            };
            let number: String = first
                .value
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == point || *c == '-')
                .map(|c| if c == point { '.' } else { c })
                .collect();
            format!(
                "written with more than digits in every {}, as `{}` (the number {number}): {advice}",
                self.unit, first.value
            )
        })
    }
}

/// Whether `value` writes its decimal point as a comma: no point, and its
/// last comma followed by digits that are not three (a thousands group).
fn decimal_comma(value: &str) -> bool {
    let digits = |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit());
    !value.contains('.')
        && value
            .trim()
            .rsplit_once(',')
            .is_some_and(|(_, fraction)| digits(fraction) && fraction.len() != 3)
}

/// The kinds of values `text`, the file at `path`, holds: each column of
/// its table, or the first values with digits of its lines.
fn kinds_of_values(path: &str, text: &str) -> Vec<Values> {
    // A header of digits or a comment is prose split at its commas.
    let table = crate::file_shape::table_cells(text)
        .filter(|(header, _)| header.iter().all(|name| !has_digit(name) && !name.starts_with('#')));
    match table {
        Some((header, rows)) => header
            .iter()
            .enumerate()
            .map(|(i, name)| column(name, &rows, i))
            .collect(),
        None if free_text(path) => first_values(text).into_iter().collect(),
        None => Vec::new(),
    }
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

/// The values of column `i`, named `name`, of `rows`.
fn column(name: &str, rows: &[(usize, Vec<String>)], i: usize) -> Values {
    let cells: Vec<(usize, &str)> = rows
        .iter()
        .filter_map(|(at, row)| Some((*at, row.get(i)?.as_str())))
        .collect();
    let filled: Vec<(usize, &str)> = cells.iter().copied().filter(|(_, v)| !v.trim().is_empty()).collect();
    let quantities = filled.iter().filter(|(_, v)| is_quantity(v)).count();
    let quantities = quantities * 2 >= filled.len();
    let values = filled
        .iter()
        .map(|(at, v)| Valued {
            form: form(v),
            // A word keeps its spaces, for its spellings to show them.
            value: if quantities {
                v.trim().to_string()
            } else {
                v.to_string()
            },
            at: *at,
            line: None,
        })
        .collect();
    Values {
        of: format!("column `{name}`"),
        values,
        empty: cells.len() - filled.len(),
        quantities,
        unit: "row",
    }
}

/// The first value with digits on each line of `text`, when enough
/// lines hold one.
fn first_values(text: &str) -> Option<Values> {
    let values: Vec<Valued> = text
        .lines()
        .enumerate()
        .filter_map(|(at, line)| {
            let value = first_value(line)?;
            Some(Valued {
                form: form(&value),
                value,
                at,
                line: Some(crate::text::one_line(line.trim(), 60)),
            })
        })
        .collect();
    (values.len() >= FEWEST_LINES).then(|| Values {
        of: "the first value with digits on each line".to_string(),
        values,
        empty: 0,
        quantities: true,
        unit: "line",
    })
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
    fn a_column_of_numbers_each_written_with_a_sign_says_so() {
        let sales = "product,qty,price\nBun,3,$1.80\nLoaf,2,$4.50\nTart,5,$2.75\n";
        let note = forms_note("sales.csv", sales).unwrap();
        assert_eq!(
            note,
            "sales.csv: column `price` is written with more than digits in every row, as `$1.80` (the number 1.80): take the rest out before converting"
        );
        let export = "date;item;amount\n2024-07-06;Cone;35,00\n2024-07-06;Tub;18,50\n";
        assert_eq!(
            forms_note("export.csv", export).unwrap(),
            "export.csv: column `amount` is written with more than digits in every row, as `35,00` (the number 35.00): its comma is the decimal point"
        );
        // Plain numbers, dates and times are no such note.
        assert_eq!(
            forms_note("plain.csv", "day,qty,at\n2024-03-01,3,10:05\n2024-03-02,4,11:40\n"),
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
        // The rows of a word's other spellings are one group, beside the
        // rows of its first spelling.
        let other = other_forms("harvest.csv", harvest);
        assert_eq!(
            other,
            vec![OtherForm {
                said: "column `hive` is written as ` linden `, `LINDEN`".to_string(),
                lines: vec![3, 4],
                common: vec![2],
            }]
        );
        // A plain table of one form in each column says nothing.
        assert_eq!(
            forms_note("orders.csv", "id,name,total\n1,Ann,3.50\n2,Bo,12\n3,Cy,7\n"),
            None
        );
    }
}
