//! Worked plans the planner is shown, chosen for the task's shape.
//!
//! The plan format's fixed examples (in the system prompt) show reading,
//! reasoning and arithmetic. A small planner copies the shape of the example
//! nearest its task far more reliably than it applies a rule: told that a
//! share in percent is `sum(part) / sum(whole) * 100`, the 1.5B model still
//! counted lines; shown one such plan, it writes one. So one worked plan for
//! a task of the same kind (a share, lines that mention something, an edit,
//! a text spelled backwards, …) goes beside the task, and only when the run
//! has every tool it calls. A task of no known kind gets none, and pays no
//! tokens for it.
//!
//! An example copied where it does not fit does harm, so each kind here was
//! kept only if the tune suite did not lose a task to it. Two were dropped:
//! a unit conversion (`{{s1}} * 60`), whose `*` the planner copied into a
//! km-to-miles conversion that divides, and a JSON field (`database.host`),
//! after which it read made-up fields to count a list or add up prices.

/// One worked plan and the kind of task it shows.
struct WorkedExample {
    /// Each group must have one of its cues in the task (lower case; a cue
    /// with a space is a phrase, one without is a whole word, one after `^`
    /// opens the task).
    cues: &'static [&'static [&'static str]],
    /// Cues (as above) of tasks the example does not fit, though its cues
    /// are there.
    unless: &'static [&'static str],
    /// The tools its plan calls: it is shown only to runs that have them.
    tools: &'static [&'static str],
    task: &'static str,
    plan: &'static str,
}

/// The examples, most specific kind first (a tie goes to the earlier one).
const EXAMPLES: [WorkedExample; 22] = [
    WorkedExample {
        // A CSV file's other columns hold numbers too (dates, taxes): the
        // calculator over the whole file would add them all.
        unless: &[],
        cues: &[
            &["csv"],
            &[
                "total", "sum", "add", "average", "mean", "highest", "lowest", "largest", "smallest", "maximum",
                "minimum",
            ],
        ],
        tools: &["read_csv", "calculator", "write_file"],
        task: "What is the total of the price column in sales.csv? Write it to total.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the price column", "tool": "read_csv", "args": {"path": "sales.csv", "column": "price"}, "depends_on": []},
 {"id": "s2", "description": "add up the prices", "tool": "calculator", "args": {"expression": "sum({{s1}})"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the total", "tool": "write_file", "args": {"path": "total.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["percent", "percentage", "share", "proportion", "%"]],
        tools: &["read_file", "search", "calculator"],
        task: "What percentage of the costs in budget.txt is rent? Round to one decimal.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the costs", "tool": "read_file", "args": {"path": "budget.txt"}, "depends_on": []},
 {"id": "s2", "description": "find the rent lines", "tool": "search", "args": {"path": "budget.txt", "text": "rent", "count": false, "matches": false}, "depends_on": []},
 {"id": "s3", "description": "rent's share of all costs in percent", "tool": "calculator", "args": {"expression": "round(sum({{s2}}) / sum({{s1}}) * 100, 1)"}, "depends_on": ["s1", "s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[
            &["percent", "percentage", "%"],
            &[
                "rise", "rose", "risen", "increase", "increased", "grow", "grew", "growth", "change",
                "changed", "drop", "dropped", "fall", "fell", "decrease", "decreased",
            ],
        ],
        tools: &["read_file", "calculator"],
        task: "Visitors went from the number in may.txt to the number in june.txt. By what percent did they change? Round to one decimal.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the old number", "tool": "read_file", "args": {"path": "may.txt"}, "depends_on": []},
 {"id": "s2", "description": "read the new number", "tool": "read_file", "args": {"path": "june.txt"}, "depends_on": []},
 {"id": "s3", "description": "the change in percent of the old number", "tool": "calculator", "args": {"expression": "round(({{s2}} - {{s1}}) / {{s1}} * 100, 1)"}, "depends_on": ["s1", "s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["header", "heading"], &["how many", "count", "number of"]],
        tools: &["read_file", "calculator", "write_file"],
        task: "How many people are listed in people.csv? Its first line is a header. Write the count to n.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the list", "tool": "read_file", "args": {"path": "people.csv"}, "depends_on": []},
 {"id": "s2", "description": "count the lines, less the header", "tool": "calculator", "args": {"expression": "count({{s1}}) - 1"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the count", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["average", "mean"]],
        tools: &["read_file", "calculator", "write_file"],
        task: "What is the average of the lap times in laps.txt? Write it to avg.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the lap times", "tool": "read_file", "args": {"path": "laps.txt"}, "depends_on": []},
 {"id": "s2", "description": "the mean of the numbers", "tool": "calculator", "args": {"expression": "round(mean({{s1}}), 2)"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the average", "tool": "write_file", "args": {"path": "avg.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        // "Which file is the largest?" is about files, not a file's lines.
        // One example for each direction: shown only the fewest, the 1.5B
        // planner sorted smallest first for "the most people" too.
        unless: &["file", "files", "folder"],
        cues: &[
            &["which", "who"],
            &["most", "largest", "highest", "biggest", "greatest", "longest", "oldest"],
        ],
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
        unless: &["file", "files", "folder"],
        cues: &[
            &["which", "who"],
            &["least", "fewest", "smallest", "lowest", "cheapest", "shortest", "youngest"],
        ],
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
        unless: &[],
        cues: &[&[
            "last line", "first line", "last lines", "first lines", "final line", "top line",
            "opening line", "closing line",
        ]],
        tools: &["read_file", "write_file"],
        task: "Write the first line of notes.txt to first.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the notes", "tool": "read_file", "args": {"path": "notes.txt"}, "depends_on": []},
 {"id": "s2", "description": "the first line of the notes; reply with only that line", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the line", "tool": "write_file", "args": {"path": "first.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&[
            "duplicate", "duplicates", "once", "unique", "distinct", "repeated", "twice",
        ]],
        tools: &["read_file", "write_file"],
        task: "Remove the duplicate lines of tags.txt, keeping the first of each, and write the rest to clean.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the tags", "tool": "read_file", "args": {"path": "tags.txt"}, "depends_on": []},
 {"id": "s2", "description": "the lines in their order, each repeated line kept only where it first appears; reply with only the lines", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the lines", "tool": "write_file", "args": {"path": "clean.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&[
            "at the end", "to the end", "append", "add a line", "add the line", "add a new line",
        ]],
        tools: &["read_file", "write_file"],
        task: "Add the line bye at the end of chat.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the chat", "tool": "read_file", "args": {"path": "chat.txt"}, "depends_on": []},
 {"id": "s2", "description": "write the chat back with the new last line", "tool": "write_file", "args": {"path": "chat.txt", "content": "{{s1}}\nbye"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["join", "joined", "combine", "merge", "concatenate", "put together"]],
        tools: &["read_file", "write_file"],
        task: "Put the text of intro.txt and then body.txt into page.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the intro", "tool": "read_file", "args": {"path": "intro.txt"}, "depends_on": []},
 {"id": "s2", "description": "read the body", "tool": "read_file", "args": {"path": "body.txt"}, "depends_on": []},
 {"id": "s3", "description": "write both texts, in order, to page.txt", "tool": "write_file", "args": {"path": "page.txt", "content": "{{s1}}\n{{s2}}"}, "depends_on": ["s1", "s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["replace", "replaced", "substitute"]],
        tools: &["replace_in_file"],
        task: "In draft.txt, replace every teh with the.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "replace teh with the in the draft", "tool": "replace_in_file", "args": {"path": "draft.txt", "old": "teh", "new": "the"}, "depends_on": []}
]}"#,
    },
    WorkedExample {
        // A setting of a file that is not JSON (read_json reads those).
        unless: &[],
        cues: &[
            &["ini", "env", "cfg", "conf", "toml", "yaml", "yml", "properties"],
            &["what", "which", "how"],
        ],
        tools: &["read_file", "write_file"],
        task: "What log level does service.toml use? Write just the level to level.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the settings", "tool": "read_file", "args": {"path": "service.toml"}, "depends_on": []},
 {"id": "s2", "description": "the value of the log level setting; reply with only the value", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the level", "tool": "write_file", "args": {"path": "level.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[
            &["how many", "count", "number of"],
            &[
                "contain",
                "contains",
                "containing",
                "mention",
                "mentions",
                "start with",
                "starts with",
                "begin with",
                "lines with",
            ],
        ],
        tools: &["search", "write_file"],
        task: "How many lines of app.log mention timeout? Write the count to timeouts.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "count the lines that mention timeout", "tool": "search", "args": {"path": "app.log", "text": "timeout", "count": true, "matches": false}, "depends_on": []},
 {"id": "s2", "description": "save the count", "tool": "write_file", "args": {"path": "timeouts.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        // Each match counts, where a count of lines would count a line with
        // two once.
        unless: &[],
        cues: &[&["how many times", "how often", "occurrences", "number of times"]],
        tools: &["search", "write_file"],
        task: "How many times does the word error appear in run.log? Write the number to n.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "count every match of error", "tool": "search", "args": {"path": "run.log", "text": "error", "count": true, "matches": true}, "depends_on": []},
 {"id": "s2", "description": "save the count", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["yes or no", "yes/no"]],
        tools: &["read_file", "write_file"],
        task: "Does fruits.txt list kiwi? Write yes or no to kiwi.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the list", "tool": "read_file", "args": {"path": "fruits.txt"}, "depends_on": []},
 {"id": "s2", "description": "does the list include kiwi? reply with only yes or no", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the answer", "tool": "write_file", "args": {"path": "kiwi.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        // The calculator reads a date as its day number.
        unless: &[],
        cues: &[&["days"], &["between", "from", "until", "since", "after", "before"]],
        tools: &["calculator", "write_file"],
        task: "How many days are there from 2023-11-20 to 2024-01-05? Write the number to d.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "the later date less the earlier one, in days", "tool": "calculator", "args": {"expression": "2024-01-05 - 2023-11-20"}, "depends_on": []},
 {"id": "s2", "description": "save the days", "tool": "write_file", "args": {"path": "d.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        // An order to edit opens with its verb; "which port does it set?" asks.
        unless: &[],
        cues: &[&["^change ", "^set ", "^update ", "^edit "]],
        tools: &["set_value"],
        task: "Change the timeout in app.ini to 30.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "set the timeout to 30", "tool": "set_value", "args": {"path": "app.ini", "key": "timeout", "value": "30"}, "depends_on": []}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&[
            "sort",
            "sorted",
            "alphabetical",
            "alphabetically",
            "smallest first",
            "largest first",
        ]],
        tools: &["read_file", "sort_lines", "write_file"],
        task: "Sort the cities in cities.txt alphabetically and write them to sorted.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the cities", "tool": "read_file", "args": {"path": "cities.txt"}, "depends_on": []},
 {"id": "s2", "description": "sort them", "tool": "sort_lines", "args": {"text": "{{s1}}", "order": "alphabetical"}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the sorted cities", "tool": "write_file", "args": {"path": "sorted.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["backwards", "backward", "reverse", "reversed"]],
        tools: &["reverse_text", "write_file"],
        task: "Write the word garden spelled backwards to back.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "spell garden backwards", "tool": "reverse_text", "args": {"text": "garden", "reverse": "letters"}, "depends_on": []},
 {"id": "s2", "description": "save it", "tool": "write_file", "args": {"path": "back.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[&["date", "deadline", "when", "which day", "what day"]],
        tools: &["read_file", "write_file"],
        task: "On which day is the launch, according to plan.md? Write the date to launch.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "read the plan", "tool": "read_file", "args": {"path": "plan.md"}, "depends_on": []},
 {"id": "s2", "description": "find the launch date in the plan; reply with only the date", "tool": null, "args": {}, "depends_on": ["s1"]},
 {"id": "s3", "description": "save the date", "tool": "write_file", "args": {"path": "launch.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
]}"#,
    },
    WorkedExample {
        unless: &[],
        cues: &[
            &["list", "which files", "find the files", "names of the files"],
            &["files"],
        ],
        tools: &["glob", "write_file"],
        task: "Which files in logs/ have error in their name? Write their paths to found.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "the files in logs/ with error in their name", "tool": "glob", "args": {"pattern": "logs/*error*"}, "depends_on": []},
 {"id": "s2", "description": "save the list", "tool": "write_file", "args": {"path": "found.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
];

/// The worked plan nearest `task`'s kind, as the lines that introduce it,
/// when there is one and the run has its tools; empty otherwise.
pub(crate) fn example_for(task: &str, has_tool: &dyn Fn(&str) -> bool) -> String {
    let task = task.to_lowercase();
    let words: Vec<&str> = task
        .split(|c: char| !(c.is_alphanumeric() || c == '%'))
        .filter(|w| !w.is_empty())
        .collect();
    let has_cue = |cue: &str| match cue.strip_prefix('^') {
        Some(opening) => task.trim_start().starts_with(opening),
        None if cue.contains(' ') => task.contains(cue),
        None => words.contains(&cue),
    };
    let mut best: Option<(usize, &WorkedExample)> = None;
    for example in &EXAMPLES {
        if !example.tools.iter().all(|t| has_tool(t)) {
            continue;
        }
        let hits: Vec<usize> = example
            .cues
            .iter()
            .map(|group| group.iter().filter(|c| has_cue(c)).count())
            .collect();
        if hits.contains(&0) || example.unless.iter().any(|c| has_cue(c)) {
            continue;
        }
        let score = hits.iter().sum();
        if best.is_none_or(|(top, _)| score > top) {
            best = Some((score, example));
        }
    }
    match best {
        Some((_, example)) => format!(
            "A task of the same kind, planned:\nTask: \"{}\"\n{}\n\n",
            example.task, example.plan
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file the example shown for `task` is about, which names its kind.
    fn chosen(task: &str) -> Option<&'static str> {
        let shown = example_for(task, &|_| true);
        let example = EXAMPLES.iter().find(|e| shown.contains(e.task))?;
        let words = example.task.split_whitespace();
        words
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .find(|w| w.contains('.'))
    }

    #[test]
    fn the_example_fits_the_tasks_kind_and_a_task_of_no_kind_gets_none() {
        assert_eq!(
            chosen("How often does the word fox appear in story.txt?"),
            Some("run.log")
        );
        assert_eq!(
            chosen("Is Maria on the list in guests.txt? Write yes or no to a.txt."),
            Some("fruits.txt")
        );
        assert_eq!(
            chosen("How many days are there between 2024-03-01 and 2024-04-15?"),
            Some("d.txt")
        );
        assert_eq!(
            chosen("What is the average math grade in grades.csv?"),
            Some("sales.csv")
        );
        let share = "What share of the orders in orders.txt came from Leeds, in percent?";
        assert_eq!(chosen(share), Some("budget.txt"));
        assert_eq!(
            chosen("Count the lines in server.log that contain ERROR."),
            Some("app.log")
        );
        // Sorting in reverse order is a sort, not a text spelled backwards.
        assert_eq!(
            chosen("Sort names.txt in reverse alphabetical order."),
            Some("cities.txt")
        );
        assert_eq!(chosen("Spell the word river backwards."), Some("back.txt"));
        assert_eq!(chosen("Read a.txt and b.txt and add the two numbers."), None);
        // Three days in minutes is no date.
        assert_eq!(chosen("How many minutes are in 3 days?"), None);
        // An edit opens with its verb; a question about a setting reads it.
        assert_eq!(chosen("Change the level in config.json to debug."), Some("app.ini"));
        assert_eq!(chosen("Which port does config.json set?"), None);
        assert_eq!(chosen("What port does server.ini use?"), Some("service.toml"));
    }

    #[test]
    fn a_change_in_percent_a_header_and_a_pick_by_size_each_have_their_kind() {
        let rise = "Sales went from the number in q1.txt to the number in q2.txt. By what percent did they grow?";
        assert_eq!(chosen(rise), Some("may.txt"));
        assert_eq!(
            chosen("How many rows has data.csv? The first line is a header."),
            Some("people.csv")
        );
        assert_eq!(chosen("What is the mean of the numbers in x.txt?"), Some("laps.txt"));
        assert_eq!(chosen("Which river in rivers.txt is the longest?"), Some("points.txt"));
        // The sort's direction is the question's.
        let most = example_for("Which city in c.txt has the most people?", &|_| true);
        assert!(
            most.contains("largest first") && !most.contains("smallest first"),
            "{most}"
        );
        let least = example_for("Which item in p.txt is the cheapest?", &|_| true);
        assert!(
            least.contains("smallest first") && !least.contains("largest first"),
            "{least}"
        );
        // The largest file is a question about files, not about lines.
        assert_eq!(chosen("Which file in docs/ is the largest?"), None);
        assert_eq!(chosen("Copy the last line of log.txt to end.txt."), Some("notes.txt"));
        assert_eq!(
            chosen("Write each name in names.txt once to once.txt."),
            Some("tags.txt")
        );
        assert_eq!(chosen("Replace every cat with dog in pets.txt."), Some("draft.txt"));
        assert_eq!(chosen("Append the word end to notes.txt."), Some("chat.txt"));
        assert_eq!(chosen("Combine a.txt and b.txt into c.txt."), Some("intro.txt"));
    }

    #[test]
    fn an_example_is_shown_only_to_runs_with_its_tools() {
        let task = "Write the word sun backwards to out.txt.";
        assert!(example_for(task, &|t| t != "reverse_text").is_empty());
        let shown = example_for(task, &|_| true);
        assert!(shown.contains("\"reverse\": \"letters\""), "{shown}");
    }

    #[test]
    fn every_example_is_a_valid_plan_for_the_built_in_tools() {
        let dir = tempfile::tempdir().unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
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
