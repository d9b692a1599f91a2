//! What the task, or a step's own description, asks for, against what the
//! step's tool call would give.
//!
//! A small planner names the right work in words and then picks the wrong
//! form for it: "extract every email" planned as a search that only counts
//! the lines, "count the words" as the calculator's count (of lines), "list
//! the .csv files" as a listing of everything, "rounded to 2 decimals" with
//! no rounding. The words are there to compare with, so the plan is sent
//! back (or mended, [`super::repair`]) before a run writes the wrong thing.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::{Plan, PlanError, Step};
use crate::tools::ToolRegistry;

/// Every mismatch of `plan` with what `task` and its steps' descriptions ask.
pub fn asked_but_not_planned(plan: &Plan, task: &str, tools: &ToolRegistry) -> Vec<PlanError> {
    let mut errors = counts_not_asked_for(plan, task);
    errors.extend(words_counted_as_lines(plan));
    errors.extend(totals_counted_as_lines(plan, tools));
    errors.extend(reversals_not_asked(plan, task));
    errors.extend(listings_of_a_kind(plan, tools));
    errors.extend(listings_described_as_counts(plan, tools));
    errors.extend(rounding_left_out(plan, task));
    errors.extend(fields_searched_in_json(plan, tools));
    errors.extend(parts_searched_as_lines(plan));
    errors.extend(plain_texts_matched(plan));
    errors.extend(counts_of_a_count(plan));
    errors.extend(yes_or_no_not_answered(plan, task));
    errors
}

/// How the error of [`yes_or_no_not_answered`] starts (its mend looks for it).
pub(super) const YES_OR_NO_NOT_ANSWERED: &str = "the task asks for yes or no";

/// The tool step whose output a `write_file` step writes as it is, in a
/// task that asks for yes or no: lines a search found, a file's text.
pub(super) fn written_tool_output(plan: &Plan, writer: &Step) -> Option<String> {
    let content = writer.args.get("content")?.as_str()?.trim();
    let id = content.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let source = plan.step(id)?;
    (source.tool.is_some() && source.agent.is_none()).then(|| id.to_string())
}

/// The question a task asks: its first sentence that ends with `?`, or the task.
fn question_of(task: &str) -> &str {
    let task = task.trim();
    let end = task.find('?').map_or(task.len(), |at| at + 1);
    // A sentence ends with `. ` or `! ` (not the dot of `servers.txt`).
    let start = [". ", "! ", "\n"]
        .iter()
        .filter_map(|stop| task[..end].rfind(stop).map(|at| at + stop.len()))
        .max()
        .unwrap_or(0);
    task[start..end].trim()
}

/// The question an error of [`yes_or_no_not_answered`] quotes.
pub(super) fn quoted_question(problem: &str) -> Option<&str> {
    let (_, rest) = problem.split_once("answers `")?;
    Some(rest.split_once('`')?.0)
}

/// A task that asks for yes or no, whose file gets a tool's output as it
/// is: "Is port 8080 used? Write yes or no" wrote the line with 8080.
fn yes_or_no_not_answered(plan: &Plan, task: &str) -> Vec<PlanError> {
    let lower = task.to_lowercase();
    if !lower.contains("yes or no") && !lower.contains("yes/no") {
        return Vec::new();
    }
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("write_file"))
        .filter_map(|s| Some((s, written_tool_output(plan, s)?)))
        .map(|(s, source)| PlanError::InvalidArgs {
            step: s.id.clone(),
            tool: "write_file".into(),
            problems: vec![format!(
                "{YES_OR_NO_NOT_ANSWERED}, and this writes {source}'s output as it is: add a reasoning step (\"tool\": null) that depends on {source} and answers `{}` with only yes or no, and write its result",
                question_of(task)
            )],
        })
        .collect()
}

/// The id of the search step whose count `expression` is only a count of
/// (`count({{s2}})` or `{{s2}}` where s2 is a search with count true): the
/// number is already the search's output, and a count of it is always 1.
pub(super) fn count_of_a_count(plan: &Plan, expression: &str) -> Option<String> {
    let expression = expression.trim();
    let inner = expression
        .strip_prefix("count(")
        .and_then(|e| e.strip_suffix(')'))
        .unwrap_or(expression);
    let id = inner.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let source = plan.step(id)?;
    let counts = source.tool.as_deref() == Some("search") && source.args.get("count") == Some(&Value::Bool(true));
    counts.then(|| id.to_string())
}

/// What the error of [`counts_of_a_count`] says (its mend, `count_dropped`,
/// works from the expression through [`count_of_a_count`], not this text).
const COUNT_OF_A_COUNT: &str = "counts the lines of a number";

/// A calculator step that counts what a counting search returned: `1`.
fn counts_of_a_count(plan: &Plan) -> Vec<PlanError> {
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("calculator"))
        .filter_map(|s| {
            let expression = s.args.get("expression")?.as_str()?;
            let source = count_of_a_count(plan, expression)?;
            expression.trim().starts_with("count(").then(|| PlanError::InvalidArgs {
                step: s.id.clone(),
                tool: "calculator".into(),
                problems: vec![format!(
                    "`{}` {COUNT_OF_A_COUNT}: {source} already returns how many lines match (count true), so use {{{{{source}}}}} itself where the count is needed",
                    expression.trim()
                )],
            })
        })
        .collect()
}

/// How the error of [`plain_texts_matched`] starts (its mend looks for it).
pub(super) const PLAIN_TEXT_MATCHED: &str = "matches true with a plain text returns only that text";

/// Whether `text` is plain text, with nothing a regular expression reads as
/// more than itself.
fn is_plain_text(text: &str) -> bool {
    !text.contains(['\\', '.', '^', '$', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|'])
}

/// A search with matches true for plain text (`@`, `refund`): each match is
/// that same text, so the lines or the parts around it are lost.
fn plain_texts_matched(plan: &Plan) -> Vec<PlanError> {
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("search") && s.args.get("matches") == Some(&Value::Bool(true)))
        .filter(|s| s.args.get("count") != Some(&Value::Bool(true)))
        .filter(|s| s.args.get("text").and_then(Value::as_str).is_some_and(is_plain_text))
        .map(|s| PlanError::InvalidArgs {
            step: s.id.clone(),
            tool: "search".into(),
            problems: vec![format!(
                "{PLAIN_TEXT_MATCHED}, once per match: set matches false to get the lines that contain it, or give a regular expression for the parts to extract"
            )],
        })
        .collect()
}

/// Kinds of text a step extracts, by the words that name them, with the
/// regular expression that matches one.
const PART_KINDS: [(&str, &str); 6] = [
    (
        r"(?i)\b(e-?mails?|email address(es)?)\b",
        r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+",
    ),
    (r"(?i)(#|\bhash)tags?\b", r"#[A-Za-z0-9_]+"),
    (r"(?i)\b(urls?|links?|web addresses)\b", r"https?://[^\s)>\]]+"),
    (
        r"(?i)\b(mentions|@-?mentions|user ?names? starting with @)\b",
        r"@[A-Za-z0-9_]+",
    ),
    // Dates as YYYY-MM-DD, or day/month/year with slashes ("the dates",
    // plural: a step after "the date" of one event wants its line).
    (r"(?i)\bdates\b", r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4})\b"),
    // Digits with the separators numbers are written with: 555-0101,
    // +1 (555) 010-1234, 020 7946 0958.
    (r"(?i)\b(tele)?phone( numbers?)?s?\b", r"\+?\(?\d[\d ().-]{5,}\d"),
];

/// The regular expression for the kind of part `description` extracts.
pub(super) fn part_pattern(description: &str) -> Option<&'static str> {
    static KINDS: LazyLock<Vec<(Regex, &str)>> = LazyLock::new(|| {
        PART_KINDS
            .iter()
            .map(|(words, pattern)| (Regex::new(words).expect("a valid pattern"), *pattern))
            .collect()
    });
    KINDS
        .iter()
        .find(|(words, _)| words.is_match(description))
        .map(|(_, p)| *p)
}

/// How the error of [`parts_searched_as_lines`] starts (its mend looks for it).
pub(super) const PARTS_AS_LINES: &str = "without matches true, search returns whole lines";

/// A search described as extracting emails, #tags or links that returns
/// whole lines: the lines carry the rest of the text with them.
fn parts_searched_as_lines(plan: &Plan) -> Vec<PlanError> {
    let flag = |s: &Step, key: &str| s.args.get(key) == Some(&Value::Bool(true));
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("search") && !flag(s, "count") && !flag(s, "matches"))
        .filter_map(|s| Some((s, part_pattern(&s.description)?)))
        .map(|(s, pattern)| PlanError::InvalidArgs {
            step: s.id.clone(),
            tool: "search".into(),
            problems: vec![format!(
                "{PARTS_AS_LINES}, not the parts the step extracts: set matches true with the text {pattern}"
            )],
        })
        .collect()
}

/// How the error of [`fields_searched_in_json`] starts (its mend looks for it).
pub(super) const JSON_SEARCHED: &str = "search returns whole lines of the JSON file";

/// A search in a `.json` file for lines, where `read_json` would give the
/// field's value: a search for "database" returns the line `"database": {`,
/// which a small planner then writes on as the answer.
fn fields_searched_in_json(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    if tools.get("read_json").is_none() {
        return Vec::new();
    }
    let flag = |s: &Step, key: &str| s.args.get(key) == Some(&Value::Bool(true));
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("search") && !flag(s, "count") && !flag(s, "matches"))
        .filter(|s| {
            s.args
                .get("path")
                .and_then(Value::as_str)
                .is_some_and(|p| p.to_lowercase().ends_with(".json"))
        })
        .map(|s| PlanError::InvalidArgs {
            step: s.id.clone(),
            tool: "search".into(),
            problems: vec![format!("{JSON_SEARCHED}, not a field's value: use read_json with the field's dotted key (such as database.host for the host under database)")],
        })
        .collect()
}

/// Words with which a task asks how many.
static ASKS_A_COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(how many|how often|count|counts|number of|tally)\b").expect("a valid pattern")
});

/// How the error of [`counts_not_asked_for`] starts (its mend looks for it).
pub(super) const COUNT_NOT_ASKED: &str = "count true returns only how many lines match";

/// A search that returns only how many lines match, in a task that never
/// asks how many: it wanted the lines (or the matches) themselves.
fn counts_not_asked_for(plan: &Plan, task: &str) -> Vec<PlanError> {
    if ASKS_A_COUNT.is_match(task) {
        return Vec::new();
    }
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("search") && s.args.get("count") == Some(&Value::Bool(true)))
        .map(|s| PlanError::InvalidArgs {
            step: s.id.clone(),
            tool: "search".into(),
            problems: vec![format!("{COUNT_NOT_ASKED}, and the task does not ask how many: set count false to get the lines (and matches true with a regular expression to get only the matching parts, such as emails or #tags)")],
        })
        .collect()
}

/// Whether `description` speaks of words (`count the words`).
fn speaks_of_words(description: &str) -> bool {
    speaks_of(description, &["words", "word"])
}

/// Whether a step's description speaks of characters (or letters).
pub(super) fn speaks_of_characters(description: &str) -> bool {
    speaks_of(description, &["characters", "character", "letters", "chars"])
}

fn speaks_of(description: &str, names: &[&str]) -> bool {
    description
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| names.contains(&w))
}

/// A calculator step described as counting words whose expression counts
/// lines (`count({{s1}})`).
fn words_counted_as_lines(plan: &Plan) -> Vec<PlanError> {
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("calculator"))
        .filter_map(|s| {
            let (unit, function) = if speaks_of_words(&s.description) {
                ("words", "words")
            } else if speaks_of_characters(&s.description) {
                ("characters", "chars")
            } else {
                return None;
            };
            let expression = s.args.get("expression")?.as_str()?;
            let counts_lines = crate::tools::aggregate_arguments(expression).iter().any(|(call, _)| {
                ["count", "len", "lines"]
                    .iter()
                    .any(|c| call.to_lowercase().starts_with(c))
            });
            counts_lines.then(|| PlanError::InvalidArgs {
                step: s.id.clone(),
                tool: "calculator".into(),
                problems: vec![format!(
                    "the step counts {unit}, but count() in `{expression}` counts lines: use {function}(...) instead"
                )],
            })
        })
        .collect()
}

/// How the error of [`reversals_not_asked`] starts (its mend looks for it).
pub(super) const REVERSAL_NOT_ASKED: &str = "reverse_text only reverses a text";

/// A `reverse_text` step when neither it nor the task speaks of reversing
/// or spelling backwards: a small planner reaches for the one text tool for
/// any change of a text (it "reversed" a name it was asked to write in
/// capitals).
fn reversals_not_asked(plan: &Plan, task: &str) -> Vec<PlanError> {
    let speaks_of_reversing = |text: &str| {
        let text = text.to_lowercase();
        ["revers", "backward", "opposite order"]
            .iter()
            .any(|w| text.contains(w))
    };
    if speaks_of_reversing(task) {
        return Vec::new();
    }
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("reverse_text") && !speaks_of_reversing(&s.description))
        .map(|s| PlanError::InvalidArgs {
            step: s.id.clone(),
            tool: "reverse_text".into(),
            problems: vec![format!(
                "{REVERSAL_NOT_ASKED}, and neither the task nor the step asks for that: use a reasoning step (\"tool\": null) for other changes, such as the case"
            )],
        })
        .collect()
}

/// Whether `description` asks for a total (`the total sales`, `sum the
/// prices`) and not for how many there are (`the total number of lines`).
pub(super) fn speaks_of_a_total(description: &str) -> bool {
    let description = description.to_lowercase();
    let words: Vec<&str> = description.split(|c: char| !c.is_alphanumeric()).collect();
    let total = ["total", "sum", "add"].iter().any(|w| words.contains(w));
    let how_many = ["how many", "number of"].iter().any(|p| description.contains(p))
        || ["lines", "files", "items", "entries", "names", "words"]
            .iter()
            .any(|w| words.contains(w));
    total && !how_many
}

/// A calculator step described as a total (`count the total sales`) that
/// counts the lines of a file whose every line holds a number: it adds them
/// up. ("Count" is the verb a small model reaches for; the lines of a sales
/// list are amounts, and four regions are no total.)
fn totals_counted_as_lines(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("calculator") && speaks_of_a_total(&s.description))
        .filter_map(|s| {
            let expression = s.args.get("expression")?.as_str()?;
            let (call, inner) = crate::tools::aggregate_arguments(expression)
                .into_iter()
                .find(|(call, _)| call.to_lowercase().starts_with("count"))?;
            let [reference] = super::refs::find_references(inner).try_into().ok()?;
            let (path, text) = super::inputs::read_text(plan, &reference.step, tools)?;
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let all_numbered = lines.len() > 1 && lines.iter().all(|l| l.chars().any(|c| c.is_ascii_digit()));
            all_numbered.then(|| PlanError::InvalidArgs {
                step: s.id.clone(),
                tool: "calculator".into(),
                problems: vec![format!(
                    "the step is a total, but `{call}` counts the {} lines of {path}, each with a number: use sum(...) to add the numbers up",
                    lines.len()
                )],
            })
        })
        .collect()
}

/// A kind of file a description names: `.csv files`, `*.csv`, `CSV files`.
static KIND_OF_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:^|[\s*(])\.([a-z0-9]{1,5})\b|\b(csv|json|txt|md|markdown|py|rs|js|ts|jpg|jpeg|png|gif|pdf|log|yaml|yml|toml|html|xml|sql|zip)\s+files?\b")
        .expect("a valid pattern")
});

/// The extension of the one kind of file `description` names, if it names one.
pub(super) fn kind_of_file(description: &str) -> Option<String> {
    let mut kinds: Vec<String> = KIND_OF_FILE
        .captures_iter(description)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .map(|m| match m.as_str().to_lowercase().as_str() {
            "markdown" => "md".to_string(),
            other => other.to_string(),
        })
        .collect();
    kinds.dedup();
    match kinds.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The glob for the files of `kind` in list_dir step `step`'s folder.
pub(super) fn listing_pattern(step: &Step, kind: &str) -> String {
    let folder = step.args.get("path").and_then(Value::as_str).unwrap_or(".").trim();
    match folder.trim_start_matches("./").trim_end_matches('/') {
        "" | "." => format!("*.{kind}"),
        folder => format!("{folder}/*.{kind}"),
    }
}

/// A listing of a whole folder in a step described as listing one kind of
/// file: everything it returns would be handed on, not the kind asked for.
fn listings_of_a_kind(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    if tools.get("glob").is_none() {
        return Vec::new();
    }
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("list_dir"))
        .filter_map(|s| {
            let pattern = listing_pattern(s, &kind_of_file(&s.description)?);
            Some(PlanError::InvalidArgs {
                step: s.id.clone(),
                tool: "list_dir".into(),
                problems: vec![format!(
                    "list_dir returns every file of the folder, but the step wants only some: use glob with pattern \"{pattern}\""
                )],
            })
        })
        .collect()
}

/// How the error of [`listings_described_as_counts`] starts (its mend looks for it).
pub(super) const LISTING_NOT_COUNTED: &str = "it lists the files, it does not count them";

/// A listing (glob, list_dir) in a step described as counting ("count the
/// .py files") that no calculation builds on: its dependents would get the
/// names, not how many.
fn listings_described_as_counts(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    if tools.get("calculator").is_none() {
        return Vec::new();
    }
    let counted_later = |id: &str| {
        plan.steps
            .iter()
            .any(|s| s.tool.as_deref() == Some("calculator") && s.depends_on.iter().any(|d| d == id))
    };
    plan.steps
        .iter()
        .filter(|s| matches!(s.tool.as_deref(), Some("glob" | "list_dir")))
        .filter(|s| ASKS_A_COUNT.is_match(&s.description) && !counted_later(&s.id))
        .map(|s| PlanError::InvalidArgs {
            step: s.id.clone(),
            tool: s.tool.clone().unwrap_or_default(),
            problems: vec![format!(
                "{LISTING_NOT_COUNTED}: list them in one step and count them in a calculator step, count({{{{{}}}}})",
                s.id
            )],
        })
        .collect()
}

/// "rounded to 2 decimals", "round to two decimal places", "to 1 dp".
static ROUNDING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(\d|one|two|three|four)\s+(?:decimals?|decimal places?|digits? after the (?:decimal )?point|dp)\b",
    )
    .expect("a valid pattern")
});

/// The decimal places `task` asks to round to, if it asks.
fn places_asked(task: &str) -> Option<u32> {
    let lower = task.to_lowercase();
    if !lower.contains("round") && !lower.contains("decimal") {
        return None;
    }
    let places = ROUNDING.captures(task)?.get(1)?.as_str().to_lowercase();
    match places.as_str() {
        "one" => Some(1),
        "two" => Some(2),
        "three" => Some(3),
        "four" => Some(4),
        digits => digits.parse().ok(),
    }
}

/// The task asks for a rounding that no calculator step does. Only when one
/// calculator step is final among the calculations (none builds on it), so
/// which result to round is plain.
fn rounding_left_out(plan: &Plan, task: &str) -> Vec<PlanError> {
    let Some(places) = places_asked(task) else {
        return Vec::new();
    };
    let calculations: Vec<&Step> = plan
        .steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("calculator"))
        .collect();
    let rounds = |s: &Step| {
        s.args
            .get("expression")
            .and_then(Value::as_str)
            .is_some_and(|e| ["round", "floor", "ceil"].iter().any(|f| e.to_lowercase().contains(f)))
    };
    if calculations.iter().any(|s| rounds(s)) {
        return Vec::new();
    }
    let built_on = |s: &Step| calculations.iter().any(|o| o.depends_on.contains(&s.id));
    let last: Vec<&&Step> = calculations.iter().filter(|s| !built_on(s)).collect();
    match last.as_slice() {
        [only] => vec![PlanError::RoundingLeftOut {
            step: only.id.clone(),
            places,
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    fn plan(steps: Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    fn tools() -> (tempfile::TempDir, ToolRegistry) {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        (dir, tools)
    }

    fn steps_of(errors: &[PlanError]) -> Vec<String> {
        errors
            .iter()
            .map(|e| match e {
                PlanError::InvalidArgs { step, .. } | PlanError::RoundingLeftOut { step, .. } => step.clone(),
                other => panic!("{other}"),
            })
            .collect()
    }

    #[test]
    fn a_count_the_task_never_asks_for_is_an_error() {
        let (_dir, tools) = tools();
        let counted = plan(serde_json::json!([
            {"id": "s1", "description": "extract the emails", "tool": "search", "args": {"path": "c.txt", "text": "@", "count": true}, "depends_on": []}
        ]));
        let extract = "Extract every email address from c.txt and write them to e.txt.";
        assert_eq!(steps_of(&asked_but_not_planned(&counted, extract, &tools)), ["s1"]);
        let how_many = "How many lines of c.txt have an email? Write it to n.txt.";
        assert!(asked_but_not_planned(&counted, how_many, &tools).is_empty());
    }

    #[test]
    fn a_search_for_a_field_of_a_json_file_is_an_error() {
        let (_dir, tools) = tools();
        let searched = plan(serde_json::json!([
            {"id": "s1", "description": "find the database host", "tool": "search", "args": {"path": "settings.json", "text": "database"}, "depends_on": []},
            {"id": "s2", "description": "count the users", "tool": "search", "args": {"path": "users.json", "text": "name", "count": true}, "depends_on": []},
            {"id": "s3", "description": "find the errors", "tool": "search", "args": {"path": "app.log", "text": "ERROR"}, "depends_on": []}
        ]));
        let task = "How many users are there, and what is the database host?";
        assert_eq!(steps_of(&asked_but_not_planned(&searched, task, &tools)), ["s1"]);
    }

    #[test]
    fn a_search_for_lines_described_as_extracting_parts_is_an_error() {
        let (_dir, tools) = tools();
        let lines = plan(serde_json::json!([
            {"id": "s1", "description": "pull out the hashtags", "tool": "search", "args": {"path": "post.txt", "text": "#"}, "depends_on": []},
            {"id": "s2", "description": "find the email addresses", "tool": "search", "args": {"path": "c.txt", "text": "\\S+@\\S+", "matches": true}, "depends_on": []},
            {"id": "s3", "description": "find the lines with TODO", "tool": "search", "args": {"path": "a.rs", "text": "TODO"}, "depends_on": []}
        ]));
        let task = "Pull out the hashtags of post.txt and the emails of c.txt.";
        assert_eq!(steps_of(&asked_but_not_planned(&lines, task, &tools)), ["s1"]);
        let tag = Regex::new(part_pattern("pull out the hashtags").unwrap()).unwrap();
        let found: Vec<&str> = tag
            .find_iter("Loving #rustlang and #async!")
            .map(|m| m.as_str())
            .collect();
        assert_eq!(found, ["#rustlang", "#async"]);
        let phone = Regex::new(part_pattern("extract the phone numbers").unwrap()).unwrap();
        let found: Vec<&str> = phone
            .find_iter("Ann: 555-0101 (mobile), office +1 (555) 010-1234; 3 cats")
            .map(|m| m.as_str())
            .collect();
        assert_eq!(found, ["555-0101", "+1 (555) 010-1234"]);
        let date = Regex::new(part_pattern("extract the dates").unwrap()).unwrap();
        let found: Vec<&str> = date
            .find_iter("moved from 2024-03-11 to 12/4/2024; call 555-0101")
            .map(|m| m.as_str())
            .collect();
        assert_eq!(found, ["2024-03-11", "12/4/2024"]);
        assert_eq!(part_pattern("find the date of the meeting"), None);
        let email = Regex::new(part_pattern("the email addresses").unwrap()).unwrap();
        assert_eq!(
            email.find("write to leo.k@example.com.").unwrap().as_str(),
            "leo.k@example.com"
        );
    }

    #[test]
    fn the_question_of_a_task_is_its_sentence_that_asks() {
        assert_eq!(
            question_of("Look at flags.json. Is export enabled? Write yes or no to e.txt."),
            "Is export enabled?"
        );
        assert_eq!(
            question_of("Is port 8080 used in servers.txt?"),
            "Is port 8080 used in servers.txt?"
        );
        assert_eq!(question_of("Say yes or no: 2 > 1"), "Say yes or no: 2 > 1");
    }

    #[test]
    fn matching_plain_text_is_an_error() {
        let (_dir, tools) = tools();
        let matched = plan(serde_json::json!([
            {"id": "s1", "description": "copy the refund lines", "tool": "search", "args": {"path": "o.txt", "text": "refund", "count": false, "matches": true}, "depends_on": []},
            {"id": "s2", "description": "the dates", "tool": "search", "args": {"path": "o.txt", "text": "\\d{4}-\\d\\d", "count": false, "matches": true}, "depends_on": []},
            {"id": "s3", "description": "how many refunds", "tool": "search", "args": {"path": "o.txt", "text": "refund", "count": true, "matches": true}, "depends_on": []}
        ]));
        let task = "How many refunds? Copy the refund lines and the dates.";
        assert_eq!(steps_of(&asked_but_not_planned(&matched, task, &tools)), ["s1"]);
    }

    #[test]
    fn words_counted_as_lines_and_a_listing_of_everything_are_errors() {
        let (_dir, tools) = tools();
        let p = plan(serde_json::json!([
            {"id": "s1", "description": "read poem.txt", "tool": "read_file", "args": {"path": "poem.txt"}, "depends_on": []},
            {"id": "s2", "description": "count the words in poem.txt", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "count the lines", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
            {"id": "s4", "description": "list the .csv files in the data folder", "tool": "list_dir", "args": {"path": "data/"}, "depends_on": []},
            {"id": "s5", "description": "list the data folder", "tool": "list_dir", "args": {"path": "data"}, "depends_on": []},
            {"id": "s6", "description": "count the characters in name.txt", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]}
        ]));
        let errors = asked_but_not_planned(&p, "Count the words and the lines; list the CSV files.", &tools);
        assert_eq!(steps_of(&errors), ["s2", "s6", "s4"]);
        assert!(errors[1].to_string().contains("use chars(...)"), "{}", errors[1]);
        assert!(errors[2].to_string().contains("\"data/*.csv\""), "{}", errors[2]);
        assert_eq!(kind_of_file("list the CSV files"), Some("csv".into()));
        assert_eq!(kind_of_file("find *.md"), Some("md".into()));
        assert_eq!(kind_of_file("read notes.txt and list the folder"), None);
        assert_eq!(kind_of_file("the .csv and .md files"), None);
    }

    #[test]
    fn a_reversal_nothing_asks_for_is_an_error() {
        let upper = plan(serde_json::json!([
            {"id": "s1", "description": "convert the name to upper case", "tool": "reverse_text", "args": {"text": "Ada", "reverse": "letters"}, "depends_on": []}
        ]));
        let errors = reversals_not_asked(&upper, "Write Ada in upper case to a.txt.");
        assert_eq!(steps_of(&errors), ["s1"]);
        assert!(errors[0].to_string().contains(REVERSAL_NOT_ASKED));
        assert!(reversals_not_asked(&upper, "Write Ada backwards to a.txt.").is_empty());
    }

    #[test]
    fn a_total_that_counts_the_lines_of_amounts_is_an_error() {
        let (dir, tools) = tools();
        std::fs::write(dir.path().join("sales.txt"), "north 30\nsouth 50\n").unwrap();
        std::fs::write(dir.path().join("names.txt"), "Ada\nBo\n").unwrap();
        let with = |path: &str, description: &str| {
            plan(serde_json::json!([
                {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": path}, "depends_on": []},
                {"id": "s2", "description": description, "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]}
            ]))
        };
        let errors = asked_but_not_planned(&with("sales.txt", "count the total sales"), "", &tools);
        assert_eq!(steps_of(&errors), ["s2"]);
        assert!(errors[0].to_string().contains("use sum(...)"), "{}", errors[0]);
        // How many there are, or lines with no amounts: a count is right.
        for (path, description) in [
            ("sales.txt", "count the total number of sales"),
            ("sales.txt", "count the regions"),
            ("names.txt", "count the total"),
        ] {
            let errors = asked_but_not_planned(&with(path, description), "", &tools);
            assert!(errors.is_empty(), "{description}: {errors:?}");
        }
    }

    #[test]
    fn a_listing_described_as_a_count_that_nothing_counts_is_an_error() {
        let (_dir, tools) = tools();
        let with = |counted: bool| {
            let mut steps = vec![
                serde_json::json!({"id": "s1", "description": "count the .py files", "tool": "glob", "args": {"pattern": "src/*.py"}, "depends_on": []}),
                serde_json::json!({"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}),
            ];
            if counted {
                steps.insert(1, serde_json::json!({"id": "s3", "description": "count", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]}));
            }
            plan(Value::Array(steps))
        };
        let errors = asked_but_not_planned(&with(false), "count the .py files", &tools);
        assert_eq!(steps_of(&errors), ["s1"]);
        assert!(errors[0].to_string().contains(LISTING_NOT_COUNTED));
        assert!(asked_but_not_planned(&with(true), "count the .py files", &tools).is_empty());
    }

    #[test]
    fn a_rounding_the_task_asks_for_and_no_step_does_is_an_error() {
        let (_dir, tools) = tools();
        let calc = |expression: &str| {
            plan(serde_json::json!([
                {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "km.txt"}, "depends_on": []},
                {"id": "s2", "description": "convert", "tool": "calculator", "args": {"expression": expression}, "depends_on": ["s1"]},
                {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "m.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
            ]))
        };
        let task = "Convert it to miles, rounded to 2 decimals, and write it to m.txt.";
        let errors = asked_but_not_planned(&calc("{{s1}} / 1.609344"), task, &tools);
        assert_eq!(
            errors,
            [PlanError::RoundingLeftOut {
                step: "s2".into(),
                places: 2
            }]
        );
        assert!(asked_but_not_planned(&calc("round({{s1}} / 1.609344, 2)"), task, &tools).is_empty());
        assert!(asked_but_not_planned(&calc("{{s1}} / 1.609344"), "Convert it to miles.", &tools).is_empty());
        assert_eq!(places_asked("round to two decimal places"), Some(2));
        assert_eq!(places_asked("with 1 decimal"), Some(1));
        assert_eq!(places_asked("add 2 apples"), None);
    }
}
