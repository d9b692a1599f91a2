//! Inputs a small planner makes up: a number of the task read as a file
//! ([`PlanError::ValueReadAsFile`](crate::plan::PlanError::ValueReadAsFile)),
//! and a file nothing holds that stands for a number the task gives
//! ([`PlanError::InventedInput`](crate::plan::PlanError::InventedInput));
//! and a file the task names that is nowhere, with the work planned on
//! another ([`PlanError::NamedInputMissing`](crate::plan::PlanError::NamedInputMissing)).

use crate::plan::Plan;
use crate::tools::ToolRegistry;

/// Value-reading step `id` dropped, when no step uses its output: not
/// referenced as `{{id}}`, nor a dependency of a reasoning or agent step
/// (which see their dependencies' results). Such a step is noise a small
/// planner keeps beside a correct calculation of the same values
/// (`read_file("37")` next to `37 * 23`); asking it again does not make it
/// let go. A read whose output is used is left to the planner.
pub(super) fn value_read_dropped(plan: &mut Plan, id: &str) -> Option<&'static str> {
    let used = plan.steps.iter().any(|s| {
        crate::plan::step_references(s).iter().any(|(_, r)| r.step == id)
            || (s.tool.is_none() && s.depends_on.iter().any(|d| d == id))
    });
    if used || plan.steps.len() < 2 {
        return None;
    }
    plan.steps.retain(|s| s.id != id);
    for step in &mut plan.steps {
        step.depends_on.retain(|d| d != id);
    }
    Some("value-read-dropped")
}

/// Step `id`, a read of the file a later step writes (not there yet),
/// dropped, when no step uses what it read (as [`value_read_dropped`]).
pub(super) fn output_read_dropped(plan: &mut Plan, id: &str) -> Option<&'static str> {
    value_read_dropped(plan, id).map(|_| "output-read-dropped")
}

/// Every argument of step `id` that is `path` made `there`, the file the
/// workspace has by that name but for case and marks.
pub(super) fn input_renamed(plan: &mut Plan, id: &str, path: &str, there: &str) -> Option<&'static str> {
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    let mut renamed = false;
    for value in step.args.values_mut() {
        if value.as_str() == Some(path) {
            *value = serde_json::Value::String(there.to_string());
            renamed = true;
        }
    }
    renamed.then_some("input-renamed")
}

/// The plan made the answer the finding asks for: infeasible, because the
/// file the task names is not there. The steps it had did the work on some
/// other file, so none of them is kept; what is already done of a revised
/// plan is kept by the replanner's merge.
pub(super) fn missing_input_infeasible(plan: &mut Plan, path: &str) -> Option<&'static str> {
    if plan.infeasible.is_some() {
        return None;
    }
    plan.steps.clear();
    plan.infeasible = Some(format!("{path} does not exist in the workspace"));
    Some("named-input-missing")
}

/// Step `id`, reading the made-up input `path`, made the reasoning step its
/// description describes (which sees the task), when the task has a number
/// in it and nothing is there to look at: the made-up file's folder is not
/// in the workspace (or, for a bare name, no file of its kind is). A read
/// that cannot succeed otherwise costs the run its replans ("a crate holds
/// 24 bottles" planned as `read_file("crates/17_bottles.txt")`). A task
/// with no number keeps its read, to fail and say the input is missing
/// rather than have a model make one up.
pub(super) fn invented_read_to_reasoning(
    plan: &mut Plan,
    id: &str,
    path: &str,
    task: &str,
    tools: &ToolRegistry,
) -> Option<&'static str> {
    let workspace = tools.workspace()?;
    if !task.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let file = std::path::Path::new(path.trim().trim_start_matches("./"));
    let folder = file
        .parent()
        .map(|p| p.to_string_lossy().to_string())
        .filter(|f| !f.is_empty());
    let nothing_there = match folder {
        Some(folder) => workspace.resolve(&folder).map(|p| !p.exists()).unwrap_or(true),
        None => {
            let extension = file.extension();
            let entries = std::fs::read_dir(workspace.root()).into_iter().flatten().flatten();
            !entries
                .into_iter()
                .any(|e| e.path().is_file() && e.path().extension() == extension)
        }
    };
    if !nothing_there {
        return None;
    }
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    step.tool = None;
    step.args = serde_json::Map::new();
    Some("invented-read-to-reasoning")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    fn plan(steps: serde_json::Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_value_read_nobody_uses_is_dropped_and_a_used_one_is_not() {
        let mut noisy = plan(serde_json::json!([
            {"id": "s1", "description": "read 37", "tool": "read_file", "args": {"path": "37"}, "depends_on": []},
            {"id": "s3", "description": "multiply", "tool": "calculator", "args": {"expression": "37 * 23"}, "depends_on": ["s1"]}
        ]));
        assert_eq!(value_read_dropped(&mut noisy, "s1"), Some("value-read-dropped"));
        assert_eq!(noisy.steps.len(), 1);
        assert!(noisy.steps[0].depends_on.is_empty());
        let mut used = plan(serde_json::json!([
            {"id": "s1", "description": "read 37", "tool": "read_file", "args": {"path": "37"}, "depends_on": []},
            {"id": "s2", "description": "double", "tool": "calculator", "args": {"expression": "{{s1}} * 2"}, "depends_on": ["s1"]}
        ]));
        assert_eq!(value_read_dropped(&mut used, "s1"), None);
    }

    #[test]
    fn a_plan_on_another_file_than_the_missing_one_becomes_a_refusal() {
        let mut substituted = plan(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "payments.csv"}, "depends_on": []}
        ]));
        assert_eq!(
            missing_input_infeasible(&mut substituted, "refunds.csv"),
            Some("named-input-missing")
        );
        assert!(substituted.steps.is_empty());
        assert_eq!(
            substituted.infeasible.as_deref(),
            Some("refunds.csv does not exist in the workspace")
        );
        assert_eq!(missing_input_infeasible(&mut substituted, "refunds.csv"), None);
    }

    #[test]
    fn a_made_up_read_of_a_number_becomes_reasoning_only_where_nothing_is_there() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let reads = |path: &str| {
            plan(serde_json::json!([
                {"id": "s1", "description": "the bottles in 17 crates", "tool": "read_file", "args": {"path": path}, "depends_on": []}
            ]))
        };
        let task = "A crate holds 24 bottles. How many are in 17 crates?";
        let mut invented = reads("crates/17_bottles.txt");
        assert_eq!(
            invented_read_to_reasoning(&mut invented, "s1", "crates/17_bottles.txt", task, &tools),
            Some("invented-read-to-reasoning")
        );
        assert!(invented.steps[0].is_reasoning());
        // A folder that is there may hold it yet; a task with no number has no value to reason from.
        let mut in_data = reads("data/bottles.txt");
        assert_eq!(
            invented_read_to_reasoning(&mut in_data, "s1", "data/bottles.txt", task, &tools),
            None
        );
        let mut no_number = reads("crates/bottles.txt");
        assert_eq!(
            invented_read_to_reasoning(&mut no_number, "s1", "crates/bottles.txt", "How many bottles?", &tools),
            None
        );
    }
}
