//! The test of a list a task writes: the order the task states for the
//! lines of the one file it writes, and whether it says each value once,
//! as the model read it from the task's words before any program ran
//! ([`crate::task_test`]); and whether a file's lines keep to it, with no
//! model. Each program's file in the vote ([`crate::program_vote`]) is held
//! to it on its copy of the workspace, and the file a run ends with is
//! held to it by the run's own check ([`crate::run::outputs`]), whichever
//! program wrote it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// The order a task states for the lines of a file it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListOrder {
    /// No order stated.
    Any,
    /// Smallest, earliest or A first.
    Ascending,
    /// Largest, latest or Z first.
    Descending,
    /// The order the values first appear in the files read.
    AsInInput,
    /// The readings of the task did not agree on an order: none is held
    /// to, and none is known to be free either.
    Unsettled,
}

/// What a task states of the lines of the one file it writes, read from
/// its words before any program ran; kept in the plan's record
/// ([`crate::help::Mend::list_test`]) so the run's own check holds the
/// file it ends with to it, whichever program wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListTest {
    /// The file, by workspace path.
    pub file: String,
    pub order: ListOrder,
    /// Each value once.
    pub each_once: bool,
    /// Only the values that meet a condition the task states, not every
    /// one: a file that holds a value of every row (or every file) it
    /// picks from breaks the test.
    #[serde(default)]
    pub only_some: bool,
}

/// The choices, as the model is shown them, and the order each stands for.
/// Each opens with its own word: a choice constrained by a grammar is
/// taken a token at a time, and "sorted smallest…" beside "sorted
/// largest…" left the two to be told apart after a shared first word.
pub(crate) const ORDERS: [(&str, ListOrder); 4] = [
    ("none: no order is stated", ListOrder::Any),
    (
        "ascending: A to Z, alphabetical, smallest, lowest or earliest first",
        ListOrder::Ascending,
    ),
    (
        "descending: Z to A, largest, highest, latest or newest first",
        ListOrder::Descending,
    ),
    (
        "input: the original order, as they first appear in the input",
        ListOrder::AsInInput,
    ),
];

/// Whether `file` is by its name a plain list of lines (no extension, or
/// one of [`LIST_EXTENSIONS`]), whose lines are the values a task orders
/// or says to write once. A JSON file's lines are parts of one value (on
/// held-out-34, spent, four right programs were not counted because
/// `loans.json` held `{` twice), and a table's rows sort by a column and
/// follow a header.
pub(crate) fn holds_a_list(file: &str) -> bool {
    let extension = std::path::Path::new(file).extension().and_then(|e| e.to_str());
    match extension.map(str::to_ascii_lowercase).as_deref() {
        None => true,
        Some(extension) => LIST_EXTENSIONS.contains(&extension),
    }
}

/// The extensions of files [`holds_a_list`] takes as plain lists.
const LIST_EXTENSIONS: [&str; 5] = ["txt", "text", "list", "lst", "log"];

impl ListTest {
    /// What in `written` (the file's text) breaks the test, said as a
    /// flaw; `inputs`: the texts the program read from, for the order they
    /// first appear in. Nothing when the lines cannot be told apart or
    /// found in one input: no evidence either way.
    pub fn broken_by(&self, written: &str, inputs: &[(&str, &str)]) -> Option<String> {
        let lines: Vec<&str> = written.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        if lines.len() < 2 {
            return None;
        }
        let file = &self.file;
        if self.each_once {
            let mut seen = HashSet::new();
            if let Some(twice) = lines.iter().find(|line| !seen.insert(line.to_lowercase())) {
                return Some(format!(
                    "{file} holds `{twice}` twice, and the task says each value once"
                ));
            }
        }
        if self.only_some {
            if let Some(every) = every_one_kept(&lines, inputs, file) {
                return Some(format!(
                    "{file} holds {every}, and the task writes only those that meet a condition it states: the program's condition kept every one (does it compare like with like, values as the file writes them?)"
                ));
            }
        }
        let (before, after) = match self.order {
            ListOrder::Any | ListOrder::Unsettled => return None,
            ListOrder::Ascending | ListOrder::Descending => {
                out_of_order(&lines, self.order == ListOrder::Descending, inputs)?
            }
            ListOrder::AsInInput => not_as_in_input(&lines, inputs)?,
        };
        let order = ORDERS
            .iter()
            .find(|(_, o)| *o == self.order)
            .map_or("", |(said, _)| *said);
        Some(format!(
            "in {file} `{before}` comes before `{after}`, and the task states their order: {order}"
        ))
    }
}

/// The first two neighbouring lines out of order, when no way of ordering
/// them fits: by their number when each line holds one number (`ana 42`),
/// and as text, in any case or by code point as Python's `sorted` does,
/// where text sorts as the values do (names; ISO dates and times, whose
/// digits stand in the same places in every line) or each line opens with
/// a word before its number (`ana 42`, sorted by name), or by the number
/// each line stands beside in the `inputs` ([`numbers_beside`]). `None`
/// when one way fits, or for lines that cannot be compared (`5 March`,
/// `12 January`): no evidence. The pair said is of the first way: by
/// number, where there is one.
fn out_of_order<'a>(lines: &[&'a str], descending: bool, inputs: &[(&str, &str)]) -> Option<(&'a str, &'a str)> {
    use std::cmp::Ordering;
    let numbers: Option<Vec<f64>> = lines.iter().map(|line| one_number(line)).collect();
    let opens_with_a_word = lines.iter().all(|line| line.starts_with(char::is_alphabetic));
    let by_text = sorts_as_text(lines) || (numbers.is_some() && opens_with_a_word);
    let in_order = |ordering: Ordering| match descending {
        true => ordering != Ordering::Less,
        false => ordering != Ordering::Greater,
    };
    let first_break =
        |ordered: &dyn Fn(usize, usize) -> bool| -> Option<usize> { (1..lines.len()).find(|&i| !ordered(i - 1, i)) };
    let lower: Vec<String> = lines.iter().map(|line| line.to_lowercase()).collect();
    let by_number = numbers
        .as_ref()
        .map(|n| first_break(&|a, b| in_order(n[a].total_cmp(&n[b]))));
    let any_case = by_text.then(|| first_break(&|a, b| in_order(lower[a].cmp(&lower[b]))));
    let code_point = by_text.then(|| first_break(&|a, b| in_order(lines[a].cmp(lines[b]))));
    let beside = numbers_beside(lines, inputs).map(|n| first_break(&|a, b| in_order(n[a].total_cmp(&n[b]))));
    let ways: Vec<Option<usize>> = [by_number, any_case, code_point, beside]
        .into_iter()
        .flatten()
        .collect();
    if ways.iter().any(Option::is_none) {
        return None;
    }
    let i = (*ways.first()?)?;
    Some((lines[i - 1], lines[i]))
}

/// For lines that hold no number (names), the one number that stands
/// beside each on a line of one of `inputs` that holds it whole: the key
/// a list is ordered by when the task orders names by their scores. On
/// held-out-41 (spent) "team names … from the highest score to the
/// lowest" was read as descending, and six programs that wrote the teams
/// by score were not counted, the names held to Z to A. `None` when a line
/// stands on no such input line.
fn numbers_beside(lines: &[&str], inputs: &[(&str, &str)]) -> Option<Vec<f64>> {
    if lines.iter().any(|line| line.chars().any(|c| c.is_ascii_digit())) {
        return None;
    }
    let beside = |value: &str| {
        inputs.iter().flat_map(|(_, text)| text.lines()).find_map(|line| {
            let at = line.find(value).filter(|_| crate::text::contains_whole(line, value))?;
            let rest = format!("{} {}", &line[..at], &line[at + value.len()..]);
            one_number(&rest)
        })
    };
    lines.iter().map(|line| beside(line)).collect()
}

/// Whether `lines` sort as text the way their values do: none holds a
/// digit, or each opens with digits and signs of one fixed shape
/// (`2025-01-31`, `09:30`) before anything else.
fn sorts_as_text(lines: &[&str]) -> bool {
    let shape = |line: &str| -> String {
        line.chars()
            .take_while(|c| !c.is_alphabetic() && !c.is_whitespace())
            .map(|c| if c.is_ascii_digit() { '0' } else { c })
            .collect()
    };
    let digits_after = |line: &str| {
        line.chars()
            .skip(shape(line).chars().count())
            .any(|c| c.is_ascii_digit())
    };
    if !lines.iter().any(|line| line.chars().any(|c| c.is_ascii_digit())) {
        return true;
    }
    let first = shape(lines[0]);
    first.contains('0') && lines.iter().all(|line| shape(line) == first && !digits_after(line))
}

/// The one number a line holds (`$1,250.50`, `-3`, `bob 17`), when it
/// holds exactly one run of digits, with its sign, separators and point.
fn one_number(line: &str) -> Option<f64> {
    let mut found = None;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        if found.is_some() {
            return None;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || (matches!(chars[i], ',' | '.') && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        let digits: String = chars[start..i].iter().filter(|c| **c != ',').collect();
        // A minus opens the line or a word: `item-10` is item 10.
        let negative = start > 0 && chars[start - 1] == '-' && (start == 1 || !chars[start - 2].is_alphanumeric());
        let value: f64 = digits.parse().ok()?;
        found = Some(if negative { -value } else { value });
    }
    found
}

/// The first two lines whose order is not the order they first appear in
/// the one input that holds them all (in any case), each as a whole line
/// of it or else as a word of its own inside it, so that `Ann` is not
/// found inside `Mary Ann` ([`crate::run::line_order::first_places`]);
/// `None` when no input holds them all.
fn not_as_in_input<'a>(lines: &[&'a str], inputs: &[(&str, &str)]) -> Option<(&'a str, &'a str)> {
    let lines_lower: Vec<String> = lines.iter().map(|l| l.to_lowercase()).collect();
    let items: Vec<&str> = lines_lower.iter().map(String::as_str).collect();
    let places = inputs
        .iter()
        .find_map(|(_, text)| crate::run::line_order::first_places(&items, &text.to_lowercase()))?;
    (1..lines.len())
        .find(|&i| places[i - 1] > places[i])
        .map(|i| (lines[i - 1], lines[i]))
}

/// Fewest rows or files a list must hold all of before keeping every one
/// says anything about a condition: of two, both may well meet it.
const FEWEST_KEPT: usize = 4;

/// What `lines` are, said, when they are the values of one column of
/// every row of a table among `inputs`, or the names of every file of one
/// folder among them, one line each: on held-out-43 (spent) two programs
/// compared `25%` cells with 0.2, agreed, and listed every cheese for
/// "more than 20%"; tickets "that mention a kettle" were written as every
/// ticket. `written` (the list's own path) is no input.
fn every_one_kept(lines: &[&str], inputs: &[(&str, &str)], written: &str) -> Option<String> {
    if lines.len() < FEWEST_KEPT {
        return None;
    }
    let sorted = |values: Vec<String>| {
        let mut values = values;
        values.sort();
        values
    };
    let listed = sorted(lines.iter().map(|line| line.to_lowercase()).collect());
    let inputs: Vec<&(&str, &str)> = inputs.iter().filter(|(path, _)| *path != written).collect();
    let column = inputs.iter().find_map(|(path, text)| {
        let (header, rows) = crate::file_shape::table_cells(text)?;
        (rows.len() == listed.len()).then_some(())?;
        header.iter().enumerate().find_map(|(at, name)| {
            let values = rows
                .iter()
                .map(|(_, fields)| fields.get(at).map_or("", |f| f.trim()).to_lowercase());
            (sorted(values.collect()) == listed).then(|| {
                format!(
                    "the {} of every row of {path} ({} of {})",
                    name.trim(),
                    rows.len(),
                    rows.len()
                )
            })
        })
    });
    column.or_else(|| every_file(&listed, &inputs))
}

/// The folder among `inputs`' paths every file of which `listed` (sorted,
/// in small letters) names, by its path, its name or its name without its
/// extension, said.
fn every_file(listed: &[String], inputs: &[&(&str, &str)]) -> Option<String> {
    let mut folders: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for (path, _) in inputs {
        let folder = path.rfind('/').map_or("", |at| &path[..at]);
        folders.entry(folder).or_default().push(path);
    }
    folders.into_iter().find_map(|(folder, paths)| {
        (paths.len() == listed.len()).then_some(())?;
        let named_by = |name: fn(&str) -> &str| {
            let mut names: Vec<String> = paths.iter().map(|path| name(path).to_lowercase()).collect();
            names.sort();
            names == listed
        };
        (named_by(whole_path) || named_by(file_name) || named_by(file_stem)).then(|| {
            let folder = if folder.is_empty() { "the folder" } else { folder };
            format!("every file of {folder} ({} of {})", paths.len(), paths.len())
        })
    })
}

/// `path` as it is.
fn whole_path(path: &str) -> &str {
    path
}

/// The file name of `path`, its folders taken off.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The file name of `path` without its extension.
fn file_stem(path: &str) -> &str {
    let name = file_name(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The test of `out.txt`, for this module's tests and
    /// [`crate::task_test`]'s.
    pub(crate) fn test(order: ListOrder, each_once: bool) -> ListTest {
        ListTest {
            file: "out.txt".to_string(),
            order,
            each_once,
            only_some: false,
        }
    }

    #[test]
    fn a_list_of_every_row_or_file_breaks_a_test_of_only_some() {
        let offers = "cheese,discount\nBrie,10%\nStilton,25%\nYarg,5%\nFeta,30%\n";
        let only_some = ListTest {
            only_some: true,
            ..test(ListOrder::Any, false)
        };
        let every = "Brie\nStilton\nYarg\nFeta\n";
        let said = only_some
            .broken_by(every, &[("offers.csv", offers)])
            .expect("every cheese kept");
        assert!(said.contains("cheese of every row of offers.csv (4 of 4)"), "{said}");
        assert_eq!(only_some.broken_by("Stilton\nFeta\n", &[("offers.csv", offers)]), None);
        // Not said when the task writes every one.
        assert_eq!(
            test(ListOrder::Any, false).broken_by(every, &[("offers.csv", offers)]),
            None
        );
        let tickets = [
            ("tickets/a.txt", "kettle"),
            ("tickets/b.txt", "tap"),
            ("tickets/c.txt", "kettle"),
            ("tickets/d.txt", "door"),
        ];
        let said = only_some
            .broken_by("a.txt\nb.txt\nc.txt\nd.txt", &tickets)
            .expect("every ticket kept");
        assert!(said.contains("every file of tickets (4 of 4)"), "{said}");
        assert_eq!(only_some.broken_by("a.txt\nc.txt", &tickets), None);
    }

    /// Names ordered by the number beside each in the input (a score) keep
    /// to a stated order; out of that order and of every other, they break it.
    #[test]
    fn names_ordered_by_the_number_beside_them_keep_the_order() {
        let scores = [("quiz.txt", "team\tscore\nThe Bears\t104\nQuiz Team A\t112\nOwls\t101\n")];
        let by_score = "Quiz Team A\nThe Bears\nOwls\n";
        assert_eq!(test(ListOrder::Descending, false).broken_by(by_score, &scores), None);
        let broken = test(ListOrder::Descending, false)
            .broken_by("Owls\nQuiz Team A\nThe Bears\n", &scores)
            .unwrap();
        assert!(broken.contains("`Owls` comes before `Quiz Team A`"), "{broken}");
        assert!(test(ListOrder::Ascending, false).broken_by(by_score, &scores).is_some());
    }

    #[test]
    fn lines_out_of_the_stated_order_or_repeated_break_the_test() {
        let dates = "2025-03-01\n2025-01-31\n";
        let broken = test(ListOrder::Ascending, false).broken_by(dates, &[]).unwrap();
        assert!(broken.contains("`2025-03-01` comes before `2025-01-31`"), "{broken}");
        assert_eq!(
            test(ListOrder::Ascending, true).broken_by("2025-01-31\n2025-03-01\n", &[]),
            None
        );
        let twice = test(ListOrder::Any, true)
            .broken_by("a@x.org\nb@y.org\nA@x.org\n", &[])
            .unwrap();
        assert!(twice.contains("`A@x.org` twice"), "{twice}");
        // By the one number of each line, not as text: 9 before 10 ascending.
        assert_eq!(test(ListOrder::Ascending, false).broken_by("bo 9\nal 10\n", &[]), None);
        assert!(test(ListOrder::Descending, false)
            .broken_by("al 9\nbo 10\n", &[])
            .is_some());
        assert_eq!(
            test(ListOrder::Descending, false).broken_by("$1,200.50\n$950\n-3\n", &[]),
            None
        );
        // Dates in words do not sort as text: no evidence.
        assert_eq!(
            test(ListOrder::Ascending, false).broken_by("5 March 2025\n12 January 2025\n", &[]),
            None
        );
        assert!(test(ListOrder::Ascending, false)
            .broken_by("10:30 b\n09:15 a\n", &[])
            .is_some());
        // Sorted by name, each line with its number: an order that fits.
        assert_eq!(
            test(ListOrder::Ascending, false).broken_by("alice 30\nbob 25\n", &[]),
            None
        );
        // Python's `sorted`: capitals first.
        assert_eq!(test(ListOrder::Ascending, false).broken_by("Zoe\nal\n", &[]), None);
        // A dash inside a word is no minus sign.
        assert_eq!(
            test(ListOrder::Ascending, false).broken_by("item-1\nitem-2\nitem-10\n", &[]),
            None
        );
        assert!(test(ListOrder::Ascending, false)
            .broken_by("10 apples\n9 pears\n", &[])
            .is_some());
    }

    #[test]
    fn only_a_plain_list_of_lines_is_tested() {
        for list in ["emails.txt", "out/names.TXT", "dates", "run.log"] {
            assert!(holds_a_list(list), "{list}");
        }
        for not_a_list in ["loans.json", "sorted.csv", "config.yaml", "notes.md"] {
            assert!(!holds_a_list(not_a_list), "{not_a_list}");
        }
    }

    #[test]
    fn the_order_they_first_appear_is_read_from_the_input_that_holds_them_all() {
        let input = [
            ("notes.txt", "x\n"),
            ("signups.txt", "Zoe <Zed@x.org>\nAl <al@y.org>\nZoe <zed@x.org>\n"),
        ];
        let test = test(ListOrder::AsInInput, true);
        let sorted = test.broken_by("al@y.org\nzed@x.org\n", &input).unwrap();
        assert!(sorted.contains("`al@y.org` comes before `zed@x.org`"), "{sorted}");
        assert_eq!(test.broken_by("zed@x.org\nal@y.org\n", &input), None);
        // A line found inside a longer one is not found there.
        let names = [("names.txt", "Mary Ann\nBob\nAnn\n")];
        assert_eq!(test.broken_by("Bob\nAnn\n", &names), None);
        // Lines no one input holds (rewritten): no evidence.
        assert_eq!(test.broken_by("AL AT Y\nzed@x.org\n", &input), None);
    }
}
