//! Values a plan reads as if they were files.
//!
//! A small planner, asked to multiply 37 by 23, may plan `read_file("37")`:
//! the run then spends its replans failing on a file that never existed. A
//! read-only step whose literal `path` is not in the workspace, is written by
//! no step, and is plainly a value the task gave (a number) is a plan error, sent back to the planner with what to do
//! instead. A path that merely does not exist is left to fail when it runs:
//! a file may appear, and a run's failure is what replanning is for.

use serde_json::Value;

use super::outputs::{mentions, outputs_named_by};
use super::{Plan, PlanError};
use crate::tools::ToolRegistry;

/// Whether `path` reads as a value rather than a file name: a number. (Words
/// are not taken for values: a small model also copies a parameter's
/// description into a path, and that is better left to fail and be replanned.)
fn looks_like_a_value(path: &str) -> bool {
    path.trim().parse::<f64>().is_ok()
}

/// Whether a step of `plan` with side effects names `path` in its arguments
/// (so the file may be there by the time a later step reads it).
fn written(plan: &Plan, tools: &ToolRegistry, path: &str) -> bool {
    plan.steps.iter().any(|s| {
        s.tool.as_deref().is_some_and(|t| tools.has_side_effects(t)) && s.args.values().any(|v| mentions(v, path))
    })
}

/// An error for each read-only step of `plan` whose literal `path` is a value
/// the task gave (see [`looks_like_a_value`]), not a file in the workspace of
/// `tools` nor one any step writes. A run without a workspace is not checked.
pub fn values_read_as_files(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    let Some(workspace) = tools.workspace() else {
        return Vec::new();
    };
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref().is_some_and(|t| !tools.has_side_effects(t)))
        .filter_map(|s| {
            let path = s.args.get("path").and_then(Value::as_str)?;
            // An empty path is no file either: a small planner writes
            // `read_file("")` for "read the number 240".
            let empty = path.trim().is_empty();
            let exists = !empty && workspace.resolve(path).ok()?.exists();
            ((empty || looks_like_a_value(path)) && !path.contains("{{") && !exists && !written(plan, tools, path))
                .then(|| PlanError::ValueReadAsFile {
                    step: s.id.clone(),
                    value: path.to_string(),
                })
        })
        .collect()
}

/// An error for each read-only step of `plan` whose literal `path` is not in
/// the workspace of `tools`, is written by no step, and is a file `task`
/// never names: an input the planner made up (a word problem whose numbers
/// are in the task, planned as `read_file("crates/17_bottles.txt")`). A file
/// the task names is left to fail when it runs, which is how a run learns
/// that an input it was promised is missing (and says so); a value read as a
/// file is [`values_read_as_files`]'s.
pub fn invented_inputs(plan: &Plan, task: &str, tools: &ToolRegistry) -> Vec<PlanError> {
    let Some(workspace) = tools.workspace() else {
        return Vec::new();
    };
    let named = |path: &str| names_file(task, path);
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref().is_some_and(|t| !tools.has_side_effects(t)))
        .filter_map(|s| {
            let path = s.args.get("path").and_then(Value::as_str)?;
            let literal = !path.contains("{{") && !path.contains(['*', '?', '[']);
            let value = path.trim().is_empty() || looks_like_a_value(path);
            let exists = workspace.resolve(path).ok()?.exists();
            (literal && !value && !exists && !written(plan, tools, path) && !named(path)).then(|| {
                PlanError::InventedInput {
                    step: s.id.clone(),
                    path: path.to_string(),
                }
            })
        })
        .collect()
}

/// Most workspace entries looked through for a missing input's name; a
/// bigger workspace is not checked (the file may be past the bound).
const LOOKED_THROUGH: usize = 2000;

/// An error for each file `task` names to read that is nowhere in the
/// workspace of `tools` (not at its path, no file of its name in any folder)
/// when no step of `plan` names it at all, and the plan reads files the
/// task does not name and none it does: it does the work on another file in
/// its place (the refunds added up from `payments.csv`), which is not what
/// the task asked. A plan that reads the missing file fails when it runs and
/// says so; one that says the task is infeasible is not checked.
pub fn missing_inputs(plan: &Plan, task: &str, tools: &ToolRegistry) -> Vec<PlanError> {
    let Some(workspace) = tools.workspace() else {
        return Vec::new();
    };
    if plan.infeasible.is_some() || plan.steps.is_empty() {
        return Vec::new();
    }
    // Only a plan that reads files the task does not name, and none it
    // does, works "on another file in its place"; one that reads a file the
    // task names (`a.txt or b.txt`, where a.txt is missing) is not.
    let read_paths: Vec<&str> = plan
        .steps
        .iter()
        .filter(|s| s.tool.as_deref().is_some_and(|t| !tools.has_side_effects(t)))
        .filter_map(|s| s.args.get("path").and_then(Value::as_str))
        .filter(|p| !p.contains("{{"))
        .collect();
    let reads_named = read_paths.iter().any(|p| names_file(task, p));
    if reads_named || read_paths.is_empty() {
        return Vec::new();
    }
    let (entries, left_out) = workspace.listing(LOOKED_THROUGH);
    if left_out > 0 {
        return Vec::new();
    }
    let file_name = |path: &str| normal_path(path).rsplit('/').next().unwrap_or_default().to_string();
    let anywhere = |path: &str| entries.iter().any(|(entry, _)| file_name(entry) == file_name(path));
    let used = |path: &str| plan.steps.iter().any(|s| s.args.values().any(|v| mentions(v, path)));
    super::paths_named_by(task)
        .into_iter()
        .filter(|path| names_input(task, path) && !names_a_kind_of_file(path))
        .filter(|path| !workspace.resolve(path).is_ok_and(|full| full.exists()))
        .filter(|path| !anywhere(path) && !used(path))
        .map(|path| PlanError::NamedInputMissing { path })
        .collect()
}

/// Whether `path`, as a task names it, stands for a kind of file rather
/// than one file: a pattern (`*.log`), or a name that is only an extension
/// (`.csv` in "how many .csv files"; a missing `.env` is left out too).
pub fn names_a_kind_of_file(path: &str) -> bool {
    let name = normal_path(path);
    let name = name.rsplit('/').next().unwrap_or_default();
    path.contains(['*', '?']) || (name.starts_with('.') && !name[1..].contains('.'))
}

/// Whether `task` names the file `path`: the path, or a file's name alone
/// (`budget.txt`), not a word of the task (`crates/1/bottles` in "24
/// bottles").
pub fn names_file(task: &str, path: &str) -> bool {
    let task = task.to_lowercase();
    let path = normal_path(path);
    let name = path.rsplit('/').next().unwrap_or(&path);
    task.contains(&path) || (name.contains('.') && task.contains(name))
}

/// Whether `task` names `path` as a file to read: it names the file
/// ([`names_file`]), does not say to write it ([`outputs_named_by`]) and
/// does not give it as an example ([`given_as_example`]).
pub fn names_input(task: &str, path: &str) -> bool {
    let path_seen = normal_path(path);
    names_file(task, path)
        && !given_as_example(task, &path_seen)
        && !outputs_named_by(task)
            .iter()
            .any(|output| normal_path(output) == path_seen)
}

/// Words that give what follows as an example of a form, not as a thing
/// that is there: one word, or two.
const EXAMPLE_MARKS: [&str; 4] = ["(like", "e.g.", "eg", "example:"];
const EXAMPLE_PAIRS: [(&str, &str); 3] = [("such", "as"), ("for", "example"), ("for", "instance")];

/// Whether every time `task` names `path` (normalized) it gives it as an
/// example of a form, right after [`EXAMPLE_MARKS`] or [`EXAMPLE_PAIRS`]
/// ("paths relative to this folder (like batches/name.txt)"): the form of
/// a line to write, not a file to read. On held-out-48 (spent) the plan
/// for "which files under batches/ mention lot L-047" was made a refusal,
/// for batches/name.txt was nowhere.
fn given_as_example(task: &str, path: &str) -> bool {
    let words: Vec<String> = task.split_whitespace().map(str::to_lowercase).collect();
    let naming: Vec<usize> = (0..words.len())
        .filter(|&i| {
            let word = words[i].trim_start_matches(|c: char| "([\"'`".contains(c));
            normal_path(word.trim_end_matches(|c: char| ")]\"'`,;:.".contains(c))) == path
        })
        .collect();
    // "like" gives an example in brackets ("(like batches/name.txt)");
    // outside them it may name a file to follow ("formatted like
    // template.md").
    let word = |i: usize| match words[i].trim_end_matches(',') {
        "(like" => "(like",
        word => word.trim_start_matches(['(', '[']),
    };
    let after_a_mark = |i: usize| {
        let one = i > 0 && EXAMPLE_MARKS.contains(&word(i - 1));
        let pair = i > 1 && EXAMPLE_PAIRS.contains(&(word(i - 2), word(i - 1)));
        one || pair
    };
    !naming.is_empty() && naming.into_iter().all(after_a_mark)
}

/// A path as the task's words are compared with it: trimmed, without `./`,
/// in lower case.
fn normal_path(path: &str) -> String {
    path.trim().trim_start_matches("./").to_lowercase()
}

/// Largest file whose text [`texts_used_as_numbers`] looks at.
const LOOKED_AT_BYTES: u64 = 64 * 1024;

/// The path and text of the workspace file that step `id` of `plan` reads
/// with `read_file`, when it is there and small enough to look at now.
pub(super) fn read_text(plan: &Plan, id: &str, tools: &ToolRegistry) -> Option<(String, String)> {
    let step = plan.steps.iter().find(|s| s.id == id)?;
    if step.tool.as_deref() != Some("read_file") {
        return None;
    }
    let path = step.args.get("path")?.as_str()?;
    let full = tools.workspace()?.resolve(path).ok()?;
    if std::fs::metadata(&full).ok()?.len() > LOOKED_AT_BYTES {
        return None;
    }
    Some((path.to_string(), std::fs::read_to_string(full).ok()?))
}

/// An error for each calculator step that uses, as one number in its
/// arithmetic, the text of a file the workspace holds that is a list of
/// lines (`{{s1}} + {{s1}}` over a price list, `{{s1}} / count({{s1}})` over four
/// scores). The file is there to look at, so the run need not find out by
/// failing; the error says which aggregate to use instead.
pub fn texts_used_as_numbers(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    if tools.workspace().is_none() {
        return Vec::new();
    }
    let text_of = |id: &str| read_text(plan, id, tools);
    let mut errors = Vec::new();
    for step in plan.steps.iter().filter(|s| s.tool.as_deref() == Some("calculator")) {
        let Some(expression) = step.args.get("expression").and_then(Value::as_str) else {
            continue;
        };
        let arithmetic = crate::tools::outside_aggregates(expression);
        // Each step once, however often the expression names it: one read.
        let mut ids: Vec<String> = Vec::new();
        for r in crate::refs::find_references(&arithmetic) {
            if !ids.contains(&r.step) {
                ids.push(r.step);
            }
        }
        let mut paths: Vec<String> = Vec::new();
        for id in ids {
            let Some((path, text)) = text_of(&id) else { continue };
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            if lines > 1 && !paths.contains(&path) {
                paths.push(path.clone());
                errors.push(PlanError::TextUsedAsNumber {
                    step: step.id.clone(),
                    reference: id,
                    path,
                    lines,
                });
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    #[test]
    fn a_path_given_as_an_example_of_a_line_is_no_input() {
        let task = "Which files under batches/ mention lot L-047? Write their paths relative to this folder (like batches/name.txt) to recall.txt, one per line.";
        assert!(!names_input(task, "batches/name.txt"));
        let both = "Read batches/name.txt and list paths like batches/name.txt in out.txt.";
        assert!(names_input(both, "batches/name.txt"), "named once to read");
        assert!(names_input("Sum the amounts in likes.csv into total.txt.", "likes.csv"));
        assert!(!names_input("Name the files as e.g. 2024-01.txt.", "2024-01.txt"));
        assert!(!names_input(
            "List the scans, for example, scans/a.tif, in out.txt.",
            "scans/a.tif"
        ));
        assert!(names_input(
            "Compare totals with the same figures as budget.csv.",
            "budget.csv"
        ));
    }

    fn plan(steps: Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_number_or_words_read_as_a_file_are_an_error_and_a_file_name_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("2024"), "a file named like a number").unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invented = plan(serde_json::json!([
            {"id": "s1", "description": "read 37", "tool": "read_file", "args": {"path": "37"}, "depends_on": []},
            {"id": "s2", "description": "read 2.5", "tool": "read_file", "args": {"path": " 2.5 "}, "depends_on": []},
            {"id": "s3", "description": "read b", "tool": "read_file", "args": {"path": "b.txt"}, "depends_on": []},
            {"id": "s4", "description": "read 2024", "tool": "read_file", "args": {"path": "2024"}, "depends_on": []},
            {"id": "s5", "description": "read the number 240", "tool": "read_file", "args": {"path": " "}, "depends_on": []}
        ]));
        let errors = values_read_as_files(&invented, &tools);
        let steps: Vec<&str> = errors
            .iter()
            .map(|e| match e {
                PlanError::ValueReadAsFile { step, .. } => step.as_str(),
                other => panic!("{other}"),
            })
            .collect();
        // b.txt may not exist, but it is a file name: the run finds out.
        assert_eq!(steps, ["s1", "s2", "s5"]);
        let message = errors[0].to_string();
        assert!(
            message.contains("`37`") && message.contains("use it as it is"),
            "{message}"
        );

        // A value some step writes under that name is a file after all.
        let written = plan(serde_json::json!([
            {"id": "s1", "description": "save", "tool": "write_file", "args": {"path": "42", "content": "x"}, "depends_on": []},
            {"id": "s2", "description": "read it back", "tool": "read_file", "args": {"path": "42"}, "depends_on": ["s1"]}
        ]));
        assert!(values_read_as_files(&written, &tools).is_empty());
    }

    #[test]
    fn a_file_the_task_never_names_and_nothing_holds_is_an_invented_input() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prices.txt"), "1\n").unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let reads = plan(serde_json::json!([
            {"id": "s1", "description": "read the crate", "tool": "read_file", "args": {"path": "crates/17_bottles.txt"}, "depends_on": []},
            {"id": "s8", "description": "read bottles", "tool": "read_file", "args": {"path": "crates/1/bottles"}, "depends_on": []},
            {"id": "s2", "description": "read the budget", "tool": "read_file", "args": {"path": "./Budget.txt"}, "depends_on": []},
            {"id": "s3", "description": "read prices", "tool": "read_file", "args": {"path": "prices.txt"}, "depends_on": []},
            {"id": "s4", "description": "read 37", "tool": "read_file", "args": {"path": "37"}, "depends_on": []},
            {"id": "s5", "description": "read inbox", "tool": "read_file", "args": {"path": "inbox/*"}, "depends_on": []},
            {"id": "s6", "description": "save", "tool": "write_file", "args": {"path": "out/tmp.txt", "content": "x"}, "depends_on": []},
            {"id": "s7", "description": "read back", "tool": "read_file", "args": {"path": "out/tmp.txt"}, "depends_on": ["s6"]}
        ]));
        let task = "A crate holds 24 bottles; add 17 to the number in budget.txt";
        let errors = invented_inputs(&reads, task, &tools);
        // s1, and s8 (whose last part is a word of the task, not a file's
        // name); budget.txt is named (the run reports it missing), prices.txt
        // exists, 37 is a value, a pattern is looked up, out/tmp.txt is written.
        let steps: Vec<&str> = errors
            .iter()
            .map(|e| match e {
                PlanError::InventedInput { step, .. } => step.as_str(),
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(steps, ["s1", "s8"]);
        let message = errors[0].to_string();
        assert!(
            message.contains("the task does not name it") && message.contains("as they are"),
            "{message}"
        );
    }

    #[test]
    fn a_named_input_that_is_nowhere_and_unread_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("payments.csv"), "id,amount\n1,20\n").unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/rates.csv"), "r\n1\n").unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let task = "Add up the amount column of refunds.csv and write the total to refund_total.txt.";
        let reading = |path: &str| {
            plan(serde_json::json!([
                {"id": "s1", "description": "sum", "tool": "read_csv", "args": {"path": path, "column": "amount", "op": "sum"}, "depends_on": []},
                {"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "refund_total.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
            ]))
        };
        // The work done on another file: the missing one is named; the
        // output the task names is not an input.
        assert_eq!(
            missing_inputs(&reading("payments.csv"), task, &tools),
            [PlanError::NamedInputMissing {
                path: "refunds.csv".into()
            }]
        );
        // Reading only files the task names ("a.txt or b.txt") is no
        // substitution, nor is reading the missing one (to fail and say
        // so), nor a refusal.
        let task_or = "Add up the amount column of refunds.csv or payments.csv into refund_total.txt.";
        assert!(missing_inputs(&reading("payments.csv"), task_or, &tools).is_empty());
        assert!(missing_inputs(&reading("refunds.csv"), task, &tools).is_empty());
        let mut refused = reading("payments.csv");
        refused.steps.clear();
        refused.infeasible = Some("refunds.csv does not exist".into());
        assert!(missing_inputs(&refused, task, &tools).is_empty());
        // A kind of file is no name: "how many .py files" when there are none.
        let task = "How many .py files are in src/? Write the number to n.txt.";
        assert!(missing_inputs(&reading("payments.csv"), task, &tools).is_empty());
        // A file of that name in a folder is there: the plan may read it.
        let task = "Add up rates.csv into total.txt.";
        assert!(missing_inputs(&reading("data/rates.csv"), task, &tools).is_empty());
        assert!(missing_inputs(&reading("payments.csv"), task, &tools).is_empty());
    }

    #[test]
    fn a_files_lines_in_arithmetic_are_an_error_and_one_line_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prices.txt"), "apple 1.25\nbread 3.40\n").unwrap();
        std::fs::write(dir.path().join("km.txt"), " 42.195\n").unwrap();
        std::fs::write(dir.path().join("price.txt"), "Price: 12\n").unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let with = |path: &str, expression: &str| {
            plan(serde_json::json!([
                {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": path}, "depends_on": []},
                {"id": "s2", "description": "calc", "tool": "calculator", "args": {"expression": expression}, "depends_on": ["s1"]}
            ]))
        };
        let errors = texts_used_as_numbers(&with("prices.txt", "{{s1}} + {{s1}}"), &tools);
        let message = errors[0].to_string();
        assert_eq!(errors.len(), 1);
        assert!(
            message.contains("{{s1}} is the text of prices.txt (2 lines), not one number")
                && message.contains("sum({{s1}})"),
            "{message}"
        );
        for fine in [
            with("prices.txt", "sum({{s1}})"),
            with("prices.txt", "sum({{s1}}) / count({{s1}})"),
            with("km.txt", "round({{s1}} / 1.609344, 2)"),
            with("missing.txt", "{{s1}} * 2"),
            with("price.txt", "{{s1}} * 2"),
        ] {
            assert!(texts_used_as_numbers(&fine, &tools).is_empty(), "{fine:?}");
        }
    }
}
