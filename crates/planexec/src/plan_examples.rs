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
    /// The tools its plan calls: it is shown only to runs that have them.
    tools: &'static [&'static str],
    task: &'static str,
    plan: &'static str,
}

/// The examples, most specific kind first (a tie goes to the earlier one).
const EXAMPLES: [WorkedExample; 7] = [
    WorkedExample {
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
        // An order to edit opens with its verb; "which port does it set?" asks.
        cues: &[&["^change ", "^set ", "^update ", "^edit "]],
        tools: &["set_value"],
        task: "Change the timeout in app.ini to 30.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "set the timeout to 30", "tool": "set_value", "args": {"path": "app.ini", "key": "timeout", "value": "30"}, "depends_on": []}
]}"#,
    },
    WorkedExample {
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
        cues: &[&["backwards", "backward", "reverse", "reversed"]],
        tools: &["reverse_text", "write_file"],
        task: "Write the word garden spelled backwards to back.txt.",
        plan: r#"{"steps": [
 {"id": "s1", "description": "spell garden backwards", "tool": "reverse_text", "args": {"text": "garden", "reverse": "letters"}, "depends_on": []},
 {"id": "s2", "description": "save it", "tool": "write_file", "args": {"path": "back.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
]}"#,
    },
    WorkedExample {
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
        if hits.contains(&0) {
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

    fn chosen(task: &str) -> Option<&'static str> {
        let shown = example_for(task, &|_| true);
        EXAMPLES.iter().find(|e| shown.contains(e.task)).map(|e| e.task)
    }

    #[test]
    fn the_example_fits_the_tasks_kind_and_a_task_of_no_kind_gets_none() {
        assert_eq!(
            chosen("What share of the orders in orders.txt came from Leeds, in percent?"),
            Some(EXAMPLES[0].task)
        );
        assert_eq!(
            chosen("Count the lines in server.log that contain ERROR."),
            Some(EXAMPLES[1].task)
        );
        // Sorting in reverse order is a sort, not a text spelled backwards.
        assert_eq!(
            chosen("Sort names.txt in reverse alphabetical order."),
            Some(EXAMPLES[3].task)
        );
        assert_eq!(chosen("Spell the word river backwards."), Some(EXAMPLES[4].task));
        assert_eq!(chosen("Read a.txt and b.txt and add the two numbers."), None);
        // Three days in minutes is no date.
        assert_eq!(chosen("How many minutes are in 3 days?"), None);
        // An edit opens with its verb; a question about a setting reads it.
        assert_eq!(
            chosen("Change the level in config.json to debug."),
            Some(EXAMPLES[2].task)
        );
        assert_eq!(chosen("Which port does config.json set?"), None);
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
