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
    sentences(task)
        .iter()
        .filter(|sentence| {
            let paths = crate::plan::paths_named_by(sentence);
            paths.is_empty() || paths.iter().any(|p| p == path)
        })
        .flat_map(|sentence| templates_named_by(sentence))
        .collect()
}

/// The sentences of `task`, split where [`crate::plan::ends_a_sentence`]
/// says (as the outputs a task names are read).
fn sentences(task: &str) -> Vec<String> {
    let mut all = Vec::new();
    let mut sentence = String::new();
    for word in task.split_whitespace() {
        sentence.push_str(word);
        sentence.push(' ');
        if crate::plan::ends_a_sentence(word, !crate::plan::paths_named_by(word).is_empty()) {
            all.push(std::mem::take(&mut sentence));
        }
    }
    all.extend((!sentence.trim().is_empty()).then_some(sentence));
    all
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
    let templates = templates_for(&run.task, path);
    if templates.is_empty() {
        return None;
    }
    let workspace = run.ctx.setting.tools.workspace()?;
    let held = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
    if held.trim().is_empty() || templates.iter().any(|t| t.pattern.is_match(&held)) {
        return None;
    }
    let forms: Vec<&str> = templates.iter().map(|t| t.text.as_str()).collect();
    let what = format!(
        "the task asks for the form {}, and {path} holds nothing in that form: {}",
        forms.join(" or "),
        crate::text::cut_to_budget(held.trim(), 300)
    );
    Some((path.clone(), what))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
