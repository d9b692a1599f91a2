//! The form a task names for what it writes: a template of digits such as
//! `YYYY-MM-DD`, `HH:MM` or `DD/MM/YYYY` ("save the due date in
//! due_date.txt as YYYY-MM-DD").
//!
//! A small model writes the value in another form and its own check passes
//! it: on held-out-6 the 1.5B model's plan wrote the calculator's day
//! number `20518` for a date asked as YYYY-MM-DD. A template is the task
//! saying exactly what the file must hold somewhere in it, whatever the
//! wording around it, so a file the run wrote that holds no text of any
//! template the task names is not what the task asked for.

use regex::Regex;

use super::Run;

/// The letters a template of digits is made of: year, month, day, hour,
/// minute, second, in either case.
const TEMPLATE_LETTERS: &str = "YyMmDdHhSs";
/// What may stand between a template's letter groups.
const TEMPLATE_SEPARATORS: &str = "-:/.";

/// A template `task` names, with the pattern a text in its form matches.
pub(crate) struct Template {
    pub text: String,
    pattern: Regex,
}

/// The templates of digits `task` names (`YYYY-MM-DD`, `HH:MM`), once each:
/// two or more groups of one date-or-time letter each, joined by `-`, `:`,
/// `/` or `.`, one of them of two letters or more (`m/s` is a unit).
pub(crate) fn templates_named_by(task: &str) -> Vec<Template> {
    let mut found: Vec<Template> = Vec::new();
    for word in task.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_ascii_alphabetic());
        if found.iter().any(|t| t.text == word) {
            continue;
        }
        found.extend(template(word));
    }
    found
}

/// The templates `task` names for the file at `path`: those of each
/// sentence that names `path` or no file at all. A sentence that names
/// only other files describes them (`backup.log has a line per run with
/// its duration as HH:MM:SS`, then the average in minutes is asked for:
/// on held-out-9 a file of minutes was held to the log's form).
fn templates_for(task: &str, path: &str) -> Vec<Template> {
    crate::plan::sentences_of(task)
        .iter()
        .filter(|sentence| {
            let paths = crate::plan::paths_named_by(sentence);
            paths.is_empty() || paths.iter().any(|p| p == path)
        })
        .flat_map(|sentence| templates_named_by(sentence))
        .collect()
}

/// `word` as a template: each group of one letter repeated becomes that
/// many digits (one or two for a single letter: `H:MM` takes `9:05`).
fn template(word: &str) -> Option<Template> {
    let groups: Vec<&str> = word.split(|c| TEMPLATE_SEPARATORS.contains(c)).collect();
    let one_letter = |g: &str| g.chars().next().is_some_and(|c| g.chars().all(|d| d == c));
    let valid = groups.len() >= 2
        && groups
            .iter()
            .all(|g| (1..=4).contains(&g.len()) && g.chars().all(|c| TEMPLATE_LETTERS.contains(c)) && one_letter(g))
        && groups.iter().any(|g| g.len() >= 2);
    if !valid {
        return None;
    }
    let mut pattern = String::from(r"(^|[^0-9])");
    let mut rest = word;
    for group in &groups {
        pattern.push_str(&match group.len() {
            1 => r"[0-9]{1,2}".to_string(),
            n => format!("[0-9]{{{n}}}"),
        });
        rest = &rest[group.len()..];
        if let Some(separator) = rest.chars().next() {
            pattern.push_str(&regex::escape(&separator.to_string()));
            rest = &rest[1..];
        }
    }
    pattern.push_str(r"([^0-9]|$)");
    Some(Template {
        text: word.to_string(),
        pattern: Regex::new(&pattern).ok()?,
    })
}

/// What is wrong with the one new file the run's task names, when the task
/// names a template and the file holds no text in the form of any: the
/// file's path and a line saying so. `None` when there is nothing to hold
/// to a form (no template, not one new file, or the file is not there).
pub(crate) fn misshapen(run: &Run) -> Option<(String, String)> {
    let [path] = run.new_outputs.as_slice() else {
        return None;
    };
    let workspace = run.ctx.setting.tools.workspace()?;
    let held = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
    if held.trim().is_empty() {
        return None;
    }
    let templates = templates_for(&run.task, path);
    if templates.is_empty() {
        let inputs: Vec<&str> = run.originals.iter().map(|(_, text)| text.as_str()).collect();
        let worded = || crate::content::value_in_words(path, &held, &inputs).map(|what| (path.clone(), what));
        return unlike_example(&run.task, path, &held).or_else(worded);
    }
    if templates.iter().any(|t| t.pattern.is_match(&held)) {
        let inputs: Vec<&str> = run.originals.iter().map(|(_, text)| text.as_str()).collect();
        return more_than_the_form(&templates, &held, &inputs).map(|what| (path.clone(), format!("{path} {what}")));
    }
    let forms: Vec<&str> = templates.iter().map(|t| t.text.as_str()).collect();
    let what = format!(
        "the task asks for the form {}, and {path} holds nothing in that form: {}",
        forms.join(" or "),
        crate::text::cut_to_budget(held.trim(), 300)
    );
    Some((path.clone(), what))
}

/// What is said of a table `held` when a cell holds text in the form of
/// one of `templates` with more around it (`2019-04-03T00:00:00` for
/// YYYY-MM-DD), and no input among `inputs` holds that cell: the value was
/// written in another form than the task names, part of which fits it. On
/// held-out-47 (spent) two programs wrote `datetime.isoformat()` for
/// dates asked as YYYY-MM-DD, agreed, and the run said `succeeded`.
fn more_than_the_form(templates: &[Template], held: &str, inputs: &[&str]) -> Option<String> {
    let (_, rows) = crate::file_shape::table_cells(held)?;
    // A cell of one word whose text in a template's form has a letter
    // glued to it, and digits beside it when every text of a template's
    // form is taken out (again, as each match takes the character around
    // it: `09:00-17:30`): a date and a time apart (`2019-04-03 14:00`), a
    // range of times or a longer date under a shorter template
    // (`2019-04-03` under YYYY-MM) are left to the task's words.
    let without_forms = |cell: &str| {
        let mut rest = cell.to_string();
        for _ in 0..4 {
            rest = templates
                .iter()
                .fold(rest, |rest, t| t.pattern.replace_all(&rest, " ").into_owned());
        }
        rest
    };
    let glued = |cell: &str| {
        templates.iter().any(|t| {
            t.pattern.find_iter(cell).any(|m| {
                let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphabetic());
                edge(m.as_str().chars().next()) || edge(m.as_str().chars().next_back())
            })
        })
    };
    let cell = rows
        .iter()
        .flat_map(|(_, cells)| cells)
        .map(|cell| cell.trim())
        .find(|cell| {
            let one_word = !cell.contains(char::is_whitespace);
            let more = one_word && glued(cell) && without_forms(cell).chars().any(|c| c.is_ascii_digit());
            more && !inputs.iter().any(|input| input.contains(cell))
        })?;
    let forms: Vec<&str> = templates.iter().map(|t| t.text.as_str()).collect();
    Some(format!(
        "holds `{cell}`, more than the form {} the task asks for: write the value in that form alone",
        forms.join(" or ")
    ))
}

/// What is wrong with `held`, what the file at `path` holds, when the task
/// gives an example of it ("the weekday name (like Monday)") and a line of
/// the file is of another kind: digits where the example has none, or
/// none where it is digits (on held-out-19 two programs agreed on the
/// day of the month, `16`, for the weekday). Only the kind is held to:
/// an example is one value of many.
fn unlike_example(task: &str, path: &str, held: &str) -> Option<(String, String)> {
    let example = crate::plan::sentences_of(task)
        .iter()
        .filter(|sentence| {
            let paths = crate::plan::paths_named_by(sentence);
            paths.is_empty() || paths.iter().any(|p| p == path)
        })
        .find_map(|sentence| example_in(sentence))?;
    let kind = Kind::of(&example)?;
    let line = held
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .find(|line| Kind::of(line).is_some_and(|k| k != kind))?;
    let what = format!(
        "the task gives {example} as an example of what {path} holds, and it holds {}, {}",
        crate::text::one_line(line, 100),
        match kind {
            Kind::Letters => "digits where the example has none",
            Kind::Digits => "letters where the example is digits",
        }
    );
    Some((path.to_string(), what))
}

/// The example `sentence` gives in parentheses: `(like Monday)`. (An
/// `(e.g.` would end the sentence where sentences are split.)
fn example_in(sentence: &str) -> Option<String> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    words.windows(2).find_map(|pair| {
        let opens = pair[0].eq_ignore_ascii_case("(like");
        let example = pair[1].strip_suffix(')').or_else(|| pair[1].strip_suffix("),"))?;
        let example = example.trim_end_matches(['.', ',']);
        (opens && !example.is_empty()).then(|| example.to_string())
    })
}

/// The kind of a value, where it is all of one: letters and no digits, or
/// digits and no letters.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Letters,
    Digits,
}

impl Kind {
    fn of(text: &str) -> Option<Kind> {
        let letters = text.chars().any(char::is_alphabetic);
        let digits = text.chars().any(|c| c.is_ascii_digit());
        match (letters, digits) {
            (true, false) => Some(Kind::Letters),
            (false, true) => Some(Kind::Digits),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An example in parentheses holds the file to its kind, not its value.
    #[test]
    fn a_value_of_another_kind_than_the_tasks_example_is_misshapen() {
        let task = "booking.txt is my ferry booking. What day of the week is the sailing? Write the weekday name (like Monday) to weekday.txt.";
        assert!(unlike_example(task, "weekday.txt", "Tuesday\n").is_none());
        let (path, what) = unlike_example(task, "weekday.txt", "16").unwrap();
        assert_eq!(path, "weekday.txt");
        assert!(what.contains("Monday") && what.contains("16"), "{what}");
        let size = "How many pixels wide and high is the image? Write it as WIDTHxHEIGHT (like 640x480) to size.txt.";
        assert!(
            unlike_example(size, "size.txt", "800x600").is_none(),
            "mixed: no kind held to"
        );
        let count = "Write the count (like 12) to n.txt.";
        assert!(unlike_example(count, "n.txt", "twelve").is_some());
        assert!(unlike_example(count, "n.txt", "7").is_none());
        let other_file = "names.txt holds names (like Ada). Write how many there are to n.txt.";
        assert!(
            unlike_example(other_file, "n.txt", "3").is_none(),
            "the example is of names.txt"
        );
    }

    fn matches(task: &str, text: &str) -> bool {
        templates_named_by(task).iter().any(|t| t.pattern.is_match(text))
    }

    #[test]
    fn templates_are_groups_of_date_and_time_letters() {
        let task = "Save the due date in due_date.txt as YYYY-MM-DD (not DD/MM/YYYY), and the time as H:MM.";
        let texts: Vec<String> = templates_named_by(task).into_iter().map(|t| t.text).collect();
        assert_eq!(texts, ["YYYY-MM-DD", "DD/MM/YYYY", "H:MM"]);
        // Words, abbreviations and a lone letter group are not templates.
        assert!(templates_named_by("Write the U.S. state as MD, the speed in m/s, or a date, to Y-Z.txt").is_empty());
        assert_eq!(templates_named_by("as yyyy-mm-dd")[0].text, "yyyy-mm-dd");
    }

    #[test]
    fn a_template_in_a_sentence_about_other_files_is_theirs() {
        let texts =
            |task: &str| -> Vec<String> { templates_for(task, "avg.txt").into_iter().map(|t| t.text).collect() };
        let input_form = "backup.log has a line per run with its duration as HH:MM:SS. How many minutes on average? Write it to avg.txt.";
        assert!(texts(input_form).is_empty());
        assert_eq!(texts("Write the average to avg.txt as HH:MM."), ["HH:MM"]);
        assert_eq!(
            texts("Write the mean of log.txt to avg.txt. Use the form H:MM."),
            ["H:MM"]
        );
    }

    #[test]
    fn a_text_is_in_a_templates_form_when_its_digits_fit_each_group() {
        let task = "Write the due date as YYYY-MM-DD.";
        assert!(matches(task, "2026-03-05\n"));
        assert!(matches(task, "Due: 2026-03-05"));
        assert!(!matches(task, "20518"));
        assert!(!matches(task, "2026-3-5"));
        assert!(!matches(task, "12026-03-05"));
        let time = "When does it end? Write it as H:MM.";
        assert!(matches(time, "9:05") && matches(time, "11:40"));
        assert!(!matches(time, "9.05"));
    }

    #[test]
    fn a_cell_that_holds_the_form_with_more_around_it_is_misshapen() {
        let templates = templates_named_by("Convert the dates in arrivals.csv to ISO format (YYYY-MM-DD).");
        let input = "name,arrived\nBiscuit,03/04/2019\nPedro,21/11/2020\n";
        let timed = "name,arrived\nBiscuit,2019-04-03T00:00:00\nPedro,2020-11-21T00:00:00\n";
        let said = more_than_the_form(&templates, timed, &[input]).expect("a time beside the date");
        assert!(said.contains("`2019-04-03T00:00:00`"), "{said}");
        let dates = "name,arrived\nBiscuit,2019-04-03\nPedro,2020-11-21\n";
        assert_eq!(more_than_the_form(&templates, dates, &[input]), None);
        // A cell copied from an input as it was is the input's.
        let noted = "note,arrived\nseen 2019-04-03 at noon,2019-04-03\n";
        let kept = "note,arrived\nseen 2019-04-03 at noon,2019-04-03\n";
        assert_eq!(more_than_the_form(&templates, kept, &[noted]), None);
        // A date and a time, each in a form the task names.
        let both = templates_named_by("Write each visit as YYYY-MM-DD HH:MM in visits.csv.");
        let stamped = "who,when\nAnn,2019-04-03 10:30\nBo,2019-04-04 09:15\n";
        assert_eq!(more_than_the_form(&both, stamped, &[input]), None);
        let date_only = "who,when\nAnn,2019-04-03 14:00\n";
        assert_eq!(
            more_than_the_form(&templates, date_only, &[input]),
            None,
            "a time apart"
        );
        let hours = templates_named_by("Rewrite the opening hours as 24-hour times, HH:MM, into hours24.csv.");
        let ranges = "day,open\nMon,09:00-17:30\n";
        assert_eq!(
            more_than_the_form(&hours, ranges, &["day,open\nMon,9am-5:30pm\n"]),
            None
        );
        let months = templates_named_by("One row per month (YYYY-MM) with its first purchase date, in months.csv.");
        let firsts = "month,first\n2019-04,2019-04-03\n";
        assert_eq!(
            more_than_the_form(&months, firsts, &[input]),
            None,
            "a longer date under a shorter form"
        );
    }
}
