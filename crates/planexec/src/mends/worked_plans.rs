//! Worked plans shown to a small planner: of a library of tasks of common
//! kinds, each planned the way this runtime's tools do it best, the one of
//! the task's shape nearest it in its words.
//!
//! A small planner copies the shape of an example far more reliably than it
//! applies a rule: told that a share in percent is the part's sum over
//! the whole's sum times 100, the 1.5B model still counted lines; shown
//! one such plan, it writes one. Which example is nearest is found the way a search engine
//! ranks documents, with no word lists: the task and each example's task
//! are weighted word vectors (a word the more telling the fewer examples
//! have it, TF-IDF), and the example whose vector is closest (cosine) is
//! shown if it is close enough, has the task's shape (what it does with
//! the files it names, [`Shape`]) and the run has every tool its plan calls.
//! A task near none gets none and pays no tokens for it.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::WorkedPlan;
use crate::tools::ToolRegistry;

/// One worked plan.
struct WorkedExample {
    /// The tools its plan calls: it is shown only to runs that have them.
    tools: &'static [&'static str],
    task: &'static str,
    plan: &'static str,
}

const EXAMPLES: [WorkedExample; 32] = [
    WorkedExample {
        tools: &["read_csv", "calculator", "write_file"],
        task: "What is the total of the price column in sales.csv? Write it to total.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the price column", "tool": "read_csv", "args": {"path": "sales.csv", "column": "price"}, "depends_on": []},
 {"id": "s2", "description": "add up the prices", "tool": "calculator", "args": {"expression": "sum({{s1}})"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the total", "tool": "write_file", "args": {"path": "total.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "search", "calculator"],
        task: "What percentage of the costs in budget.txt is rent? Round to one decimal.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the costs", "tool": "read_file", "args": {"path": "budget.txt"}, "depends_on": []},
 {"id": "s2", "description": "find the rent lines", "tool": "search", "args": {"path": "budget.txt", "text": "rent", "count": false, "matches": false}, "depends_on": []},
 {"id": "s3", "description": "rent's share of all costs in percent", "tool": "calculator", "args": {"expression": "round(sum({{s2}}) / sum({{s1}}) * 100, 1)"}, "depends_on": ["s1", "s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "calculator"],
        task: "Visitors went from the number in may.txt to the number in june.txt. By what percent did they change? Round to one decimal.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the old number", "tool": "read_file", "args": {"path": "may.txt"}, "depends_on": []},
 {"id": "s2", "description": "read the new number", "tool": "read_file", "args": {"path": "june.txt"}, "depends_on": []},
 {"id": "s3", "description": "the change in percent of the old number", "tool": "calculator", "args": {"expression": "round(({{s2}} - {{s1}}) / {{s1}} * 100, 1)"}, "depends_on": ["s1", "s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "calculator", "write_file"],
        task: "How many people are listed in people.csv? Its first line is a header. Write the count to n.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the list", "tool": "read_file", "args": {"path": "people.csv"}, "depends_on": []},
 {"id": "s2", "description": "count the lines, less the header", "tool": "calculator", "args": {"expression": "count({{s1}}) - 1"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the count", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "calculator", "write_file"],
        task: "What is the average of the lap times in laps.txt? Write it to avg.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the lap times", "tool": "read_file", "args": {"path": "laps.txt"}, "depends_on": []},
 {"id": "s2", "description": "the mean of the numbers", "tool": "calculator", "args": {"expression": "round(mean({{s1}}), 2)"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the average", "tool": "write_file", "args": {"path": "avg.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "sort_lines", "write_file"],
        task: "Which team in points.txt has the most points? Write just the team to top.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the teams and their points", "tool": "read_file", "args": {"path": "points.txt"}, "depends_on": []},
 {"id": "s2", "description": "sort them by points, most first", "tool": "sort_lines", "args": {"text": "{{s1}}", "order": "largest first"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "the team on the first line; reply with only the team", "tool": null, "args": {}, "depends_on": ["s2"]},
 {"id": "s4", "description": "save the team", "tool": "write_file", "args": {"path": "top.txt", "content": "{{s3}}"}, "depends_on": ["s3"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "sort_lines", "write_file"],
        task: "Which team in points.txt has the fewest points? Write just the team to bottom.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the teams and their points", "tool": "read_file", "args": {"path": "points.txt"}, "depends_on": []},
 {"id": "s2", "description": "sort them by points, fewest first", "tool": "sort_lines", "args": {"text": "{{s1}}", "order": "smallest first"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "the team on the first line; reply with only the team", "tool": null, "args": {}, "depends_on": ["s2"]},
 {"id": "s4", "description": "save the team", "tool": "write_file", "args": {"path": "bottom.txt", "content": "{{s3}}"}, "depends_on": ["s3"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "Write the first line of notes.txt to first.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the notes", "tool": "read_file", "args": {"path": "notes.txt"}, "depends_on": []},
 {"id": "s2", "description": "the first line of the notes; reply with only that line", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the line", "tool": "write_file", "args": {"path": "first.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "Remove the duplicate lines of tags.txt, keeping the first of each, and write the rest to clean.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the tags", "tool": "read_file", "args": {"path": "tags.txt"}, "depends_on": []},
 {"id": "s2", "description": "the lines in their order, each repeated line kept only where it first appears; reply with only the lines", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the lines", "tool": "write_file", "args": {"path": "clean.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "Add the line bye at the end of chat.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the chat", "tool": "read_file", "args": {"path": "chat.txt"}, "depends_on": []},
 {"id": "s2", "description": "write the chat back with the new last line", "tool": "write_file", "args": {"path": "chat.txt", "content": "{{s1}}\nbye"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "Put the text of intro.txt and then body.txt into page.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the intro", "tool": "read_file", "args": {"path": "intro.txt"}, "depends_on": []},
 {"id": "s2", "description": "read the body", "tool": "read_file", "args": {"path": "body.txt"}, "depends_on": []},
 {"id": "s3", "description": "write both texts, in order, to page.txt", "tool": "write_file", "args": {"path": "page.txt", "content": "{{s1}}\n{{s2}}"}, "depends_on": ["s1", "s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["replace_in_file"],
        task: "In draft.txt, replace every teh with the.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "replace teh with the in the draft", "tool": "replace_in_file", "args": {"path": "draft.txt", "old": "teh", "new": "the"}, "depends_on": []}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "What log level does service.toml use? Write just the level to level.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the settings", "tool": "read_file", "args": {"path": "service.toml"}, "depends_on": []},
 {"id": "s2", "description": "the value of the log level setting; reply with only the value", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the level", "tool": "write_file", "args": {"path": "level.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["search", "write_file"],
        task: "How many lines of app.log mention timeout? Write the count to timeouts.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "count the lines that mention timeout", "tool": "search", "args": {"path": "app.log", "text": "timeout", "count": true, "matches": false}, "depends_on": []},
 {"id": "s2", "description": "save the count", "tool": "write_file", "args": {"path": "timeouts.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["search", "write_file"],
        task: "How many times does the word error appear in run.log? Write the number to n.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "count every match of error", "tool": "search", "args": {"path": "run.log", "text": "error", "count": true, "matches": true}, "depends_on": []},
 {"id": "s2", "description": "save the count", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "Does fruits.txt list kiwi? Write yes or no to kiwi.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the list", "tool": "read_file", "args": {"path": "fruits.txt"}, "depends_on": []},
 {"id": "s2", "description": "does the list include kiwi? reply with only yes or no", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the answer", "tool": "write_file", "args": {"path": "kiwi.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["calculator", "write_file"],
        task: "How many days are there from 2023-11-20 to 2024-01-05? Write the number to d.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "the later date less the earlier one, in days", "tool": "calculator", "args": {"expression": "2024-01-05 - 2023-11-20"}, "depends_on": []},
 {"id": "s2", "description": "save the days", "tool": "write_file", "args": {"path": "d.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["set_value"],
        task: "Change the timeout in app.ini to 30.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "set the timeout to 30", "tool": "set_value", "args": {"path": "app.ini", "key": "timeout", "value": "30"}, "depends_on": []}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "sort_lines", "write_file"],
        task: "Sort the cities in cities.txt alphabetically and write them to sorted.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the cities", "tool": "read_file", "args": {"path": "cities.txt"}, "depends_on": []},
 {"id": "s2", "description": "sort them", "tool": "sort_lines", "args": {"text": "{{s1}}", "order": "alphabetical"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the sorted cities", "tool": "write_file", "args": {"path": "sorted.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["reverse_text", "write_file"],
        task: "Write the word garden spelled backwards to back.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "spell garden backwards", "tool": "reverse_text", "args": {"text": "garden", "reverse": "letters"}, "depends_on": []},
 {"id": "s2", "description": "save it", "tool": "write_file", "args": {"path": "back.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "On which day is the launch, according to plan.md? Write the date to launch.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the plan", "tool": "read_file", "args": {"path": "plan.md"}, "depends_on": []},
 {"id": "s2", "description": "find the launch date in the plan; reply with only the date", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the date", "tool": "write_file", "args": {"path": "launch.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["glob", "write_file"],
        task: "Which files in logs/ have error in their name? Write their paths to found.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "the files in logs/ with error in their name", "tool": "glob", "args": {"pattern": "logs/*error*"}, "depends_on": []},
 {"id": "s2", "description": "save the list", "tool": "write_file", "args": {"path": "found.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["glob", "calculator", "write_file"],
        task: "How many .png files are in images/? Write the count to n.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "the .png files in images/", "tool": "glob", "args": {"pattern": "images/*.png"}, "depends_on": []},
 {"id": "s2", "description": "count the files listed", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the count", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["glob", "write_file"],
        task: "List the .txt files under notes/, subfolders included, and write their paths to list.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "the .txt files under notes/ at any depth", "tool": "glob", "args": {"pattern": "notes/**/*.txt"}, "depends_on": []},
 {"id": "s2", "description": "save the paths", "tool": "write_file", "args": {"path": "list.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["search", "write_file"],
        task: "Pull every email address out of team.txt and write them, one per line, to addresses.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "the email addresses in team.txt", "tool": "search", "args": {"path": "team.txt", "text": "[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]+", "count": false, "matches": true}, "depends_on": []},
 {"id": "s2", "description": "save them", "tool": "write_file", "args": {"path": "addresses.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "calculator", "write_file"],
        task: "How many words are in essay.txt? Write the number to count.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the essay", "tool": "read_file", "args": {"path": "essay.txt"}, "depends_on": []},
 {"id": "s2", "description": "count its words", "tool": "calculator", "args": {"expression": "words({{s1}})"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the count", "tool": "write_file", "args": {"path": "count.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "Write the text of title.txt in capital letters to caps.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the title", "tool": "read_file", "args": {"path": "title.txt"}, "depends_on": []},
 {"id": "s2", "description": "the same text in capital letters; reply with only the text", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save it", "tool": "write_file", "args": {"path": "caps.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["calculator", "write_file"],
        task: "What is the sum of 12, 30 and 7? Write it to total.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "add the numbers the task gives", "tool": "calculator", "args": {"expression": "12 + 30 + 7"}, "depends_on": []},
 {"id": "s2", "description": "save the sum", "tool": "write_file", "args": {"path": "total.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["calculator", "write_file"],
        task: "Convert 40 kilometres to miles (1 mile = 1.609344 km), rounded to 2 decimals, and write the number to miles.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "divide by the rate and round to 2 decimals", "tool": "calculator", "args": {"expression": "round(40 / 1.609344, 2)"}, "depends_on": []},
 {"id": "s2", "description": "save the miles", "tool": "write_file", "args": {"path": "miles.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["search", "write_file"],
        task: "How many rows of members.csv are from Lisbon? Write the number to lisbon.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "count the rows that contain Lisbon", "tool": "search", "args": {"path": "members.csv", "text": "Lisbon", "count": true, "matches": false}, "depends_on": []},
 {"id": "s2", "description": "save the count", "tool": "write_file", "args": {"path": "lisbon.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_json", "write_file"],
        task: "Is dark mode on in prefs.json? Write yes or no to dark.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the dark mode setting", "tool": "read_json", "args": {"path": "prefs.json", "field": "dark_mode"}, "depends_on": []},
 {"id": "s2", "description": "answer the question from the setting; reply with only yes or no", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the answer", "tool": "write_file", "args": {"path": "dark.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        tools: &["read_file", "write_file"],
        task: "Write the last line of diary.txt to end.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the diary", "tool": "read_file", "args": {"path": "diary.txt"}, "depends_on": []},
 {"id": "s2", "description": "the last line of the text; reply with only that line", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the line", "tool": "write_file", "args": {"path": "end.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
];
/// The least similarity (cosine, 0 to 1) at which an example is shown.
const LEAST_SIMILARITY: f64 = 0.4;

/// The words of `text` that can tell tasks apart: lower case, split at
/// anything but letters, digits and `%`, numbers and single letters left out
/// (`sales.csv` is `sales` and `csv`).
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '%'))
        .filter(|w| w.chars().count() > 1 || *w == "%")
        .filter(|w| w.parse::<f64>().is_err())
        .map(str::to_string)
        .collect()
}

/// The examples' word weights: the inverse document frequency of each word
/// some example's task has (a word every example has weighs nothing).
static WEIGHTS: LazyLock<HashMap<String, f64>> = LazyLock::new(|| {
    let mut documents: HashMap<String, usize> = HashMap::new();
    for example in &EXAMPLES {
        let mut seen = words(example.task);
        seen.sort();
        seen.dedup();
        for word in seen {
            *documents.entry(word).or_default() += 1;
        }
    }
    let n = EXAMPLES.len() as f64;
    documents
        .into_iter()
        .map(|(word, count)| (word, (n / count as f64).ln()))
        .collect()
});

/// `text` as a weighted word vector. A word no example has weighs as much
/// as the rarest word of the examples: a task whose words are mostly new
/// is far from every example, however telling the one word it shares.
fn vector(text: &str) -> HashMap<String, f64> {
    let rarest = (EXAMPLES.len() as f64).ln();
    let mut v: HashMap<String, f64> = HashMap::new();
    for word in words(text) {
        let weight = WEIGHTS.get(&word).copied().unwrap_or(rarest);
        *v.entry(word).or_default() += weight;
    }
    v
}

/// What a task (or a worked plan) does with files, which the words around
/// them do not say: whether it works on files that are there (reads or
/// edits them), whether it writes a new one, and the kinds (extensions) of
/// the files it reads. An example is shown only for a task of the same
/// shape: a plan that reads a CSV column is no model for a JSON file, one
/// that adds numbers given in the task none for numbers in files, one that
/// changes a setting in place none for a question whose answer goes to a
/// new file.
#[derive(Debug, PartialEq)]
struct Shape {
    uses_existing: bool,
    writes_new: bool,
    kinds: Vec<String>,
}

/// The extension of `path`, lower case, if it has one.
fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())).then(|| ext.to_lowercase())
}

/// The shape of a worked plan, from its steps.
fn plan_shape(plan: &str) -> Shape {
    let Ok(plan) = crate::plan::parse_plan_reply(plan) else {
        return Shape {
            uses_existing: false,
            writes_new: false,
            kinds: Vec::new(),
        };
    };
    let path_of = |s: &crate::plan::Step| {
        ["path", "pattern"]
            .iter()
            .find_map(|k| s.args.get(*k).and_then(|v| v.as_str()).map(str::to_string))
    };
    let tool = |s: &crate::plan::Step| s.tool.clone().unwrap_or_default();
    let used: Vec<(String, String)> = plan
        .steps
        .iter()
        .filter(|s| tool(s) != "write_file")
        .filter_map(|s| Some((tool(s), path_of(s)?)))
        .collect();
    let writes_new = plan
        .steps
        .iter()
        .filter(|s| tool(s) == "write_file")
        .filter_map(path_of)
        .any(|p| !used.iter().any(|(_, u)| *u == p));
    let kinds = used
        .iter()
        .filter(|(t, _)| t.starts_with("read") || t == "search")
        .filter_map(|(_, p)| extension(p))
        .collect();
    Shape {
        uses_existing: !used.is_empty(),
        writes_new,
        kinds,
    }
}

/// The shape of `task` in `workspace`: the paths it names that are there,
/// and those that are not (with an extension: a file to write).
fn task_shape(task: &str, workspace: &crate::tools::workspace::Workspace) -> Shape {
    let mut shape = Shape {
        uses_existing: false,
        writes_new: false,
        kinds: Vec::new(),
    };
    for word in task.split_whitespace() {
        let path = word
            .trim_matches(|c: char| "`'\"()[]{}<>,;:!?".contains(c))
            .trim_end_matches('.');
        let looks_like_a_path = path.contains('/') || extension(path).is_some();
        if path.is_empty() || !looks_like_a_path {
            continue;
        }
        let exists = workspace.resolve(path).is_ok_and(|p| p.exists());
        shape.uses_existing |= exists;
        shape.writes_new |= !exists && extension(path).is_some();
        shape.kinds.extend(extension(path));
    }
    shape
}

/// Whether `example` has the shape of a task of shape `task`: the same use
/// of existing files and of new ones, and every kind it reads named.
fn same_shape(example: &WorkedExample, task: &Shape) -> bool {
    let shape = plan_shape(example.plan);
    shape.uses_existing == task.uses_existing
        && shape.writes_new == task.writes_new
        && shape.kinds.iter().all(|k| task.kinds.contains(k))
}

/// The cosine of two word vectors (0 when either is empty).
fn cosine(a: &HashMap<String, f64>, b: &HashMap<String, f64>) -> f64 {
    let norm = |v: &HashMap<String, f64>| v.values().map(|x| x * x).sum::<f64>().sqrt();
    let dot: f64 = a.iter().filter_map(|(w, x)| b.get(w).map(|y| x * y)).sum();
    let norms = norm(a) * norm(b);
    if norms == 0.0 {
        0.0
    } else {
        dot / norms
    }
}

/// The example nearest `task` among those whose tools the run has, with its
/// similarity.
fn nearest_example(task: &str, tools: &ToolRegistry) -> Option<(&'static WorkedExample, f64)> {
    let wanted = vector(task);
    let shape = task_shape(task, tools.workspace()?);
    EXAMPLES
        .iter()
        .filter(|e| e.tools.iter().all(|t| tools.get(t).is_some()) && same_shape(e, &shape))
        .map(|e| (e, cosine(&wanted, &vector(e.task))))
        .fold(None, |best: Option<(&WorkedExample, f64)>, (e, score)| match best {
            Some((_, top)) if top >= score => best,
            _ => Some((e, score)),
        })
}

/// The worked plan nearest `task`, as the lines that introduce it, when one
/// is near enough and the run has its tools.
pub(super) fn nearest(task: &str, tools: &ToolRegistry) -> Option<WorkedPlan> {
    let (example, score) = nearest_example(task, tools)?;
    (score >= LEAST_SIMILARITY).then(|| WorkedPlan {
        task: example.task.to_string(),
        text: format!(
            "A task of the same kind, planned:\nTask: \"{}\"\n{}\n\n",
            example.task, example.plan
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    /// The built-in tools on a workspace holding `files`.
    fn tools_with(files: &[&str]) -> (tempfile::TempDir, ToolRegistry) {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let full = dir.path().join(f);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, "x").unwrap();
        }
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        (dir, tools)
    }

    /// The task of the example shown for `task` in a workspace of `files`.
    fn chosen(task: &str, files: &[&str]) -> Option<&'static str> {
        let (_dir, tools) = tools_with(files);
        nearest_example(task, &tools)
            .filter(|(_, score)| *score >= LEAST_SIMILARITY)
            .map(|(e, _)| e.task)
    }

    #[test]
    fn each_example_is_nearest_to_itself_where_its_files_are() {
        for example in &EXAMPLES {
            let shape = plan_shape(example.plan);
            let plan = crate::plan::parse_plan_reply(example.plan).unwrap();
            // The workspace holds what the example's plan works on, not what it writes new.
            let mut files: Vec<String> = plan
                .steps
                .iter()
                .filter(|s| s.tool.as_deref() != Some("write_file"))
                .filter_map(|s| s.args.get("path").and_then(|v| v.as_str()).map(str::to_string))
                .filter(|p| extension(p).is_some())
                .collect();
            // A pattern's folder holds a file.
            files.extend(plan.steps.iter().filter_map(|s| {
                let pattern = s.args.get("pattern")?.as_str()?;
                Some(format!("{}/x.txt", pattern.split('/').next()?))
            }));
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            assert_eq!(chosen(example.task, &files), Some(example.task), "{shape:?}");
        }
    }

    #[test]
    fn a_task_of_another_shape_or_no_kind_gets_none() {
        for unrelated in ["Hello there", "", "Read a.txt and b.txt and add the two numbers."] {
            assert_eq!(chosen(unrelated, &["a.txt", "b.txt"]), None, "{unrelated}");
        }
        // Numbers in files are no sum of numbers given in the task.
        assert_ne!(
            chosen(
                "Add the numbers in a.txt and b.txt and write the sum to sum.txt.",
                &["a.txt", "b.txt"]
            ),
            Some("What is the sum of 12, 30 and 7? Write it to total.txt.")
        );
        assert_eq!(
            chosen("What is the sum of 4, 5 and 9? Write it to out.txt.", &[]),
            Some("What is the sum of 12, 30 and 7? Write it to total.txt.")
        );
        // A question whose answer goes to a new file is no edit in place.
        assert_ne!(
            chosen(
                "What timeout does app.ini set? Write just the number to timeout.txt.",
                &["app.ini"]
            ),
            Some("Change the timeout in app.ini to 30.")
        );
        // A JSON file is not read as CSV.
        assert_ne!(
            chosen(
                "What is the total of the price field in order.json? Write it to total.txt.",
                &["order.json"]
            ),
            Some("What is the total of the price column in sales.csv? Write it to total.txt.")
        );
    }

    #[test]
    fn an_example_is_shown_only_to_runs_with_its_tools() {
        let (_dir, mut tools) = tools_with(&[]);
        let task = "Write the word sun spelled backwards to out.txt.";
        let shown = nearest(task, &tools).expect("an example");
        assert!(shown.text.contains("\"reverse\": \"letters\""), "{}", shown.text);
        tools.remove("reverse_text");
        let without = nearest(task, &tools);
        assert!(without.is_none_or(|w| !w.text.contains("reverse_text")));
    }

    #[test]
    fn every_example_is_a_valid_plan_for_the_built_in_tools() {
        let (_dir, tools) = tools_with(&[]);
        for example in &EXAMPLES {
            let plan = crate::plan::parse_plan_reply(example.plan).unwrap();
            crate::plan::validate(&plan, &tools, &crate::plan::PlanLimits::default())
                .unwrap_or_else(|e| panic!("{}: {e}", example.task));
            for step in plan.steps.iter().filter_map(|s| s.tool.as_deref()) {
                assert!(example.tools.contains(&step), "{}: {step} not listed", example.task);
            }
        }
    }
}
