//! Calls written twice: two steps with the same tool and the same arguments
//! are one step.
//!
//! A small planner writes the right call two or three times (one question,
//! one call, planned as `get_weather(city="Oslo")` three times over); a
//! larger one sometimes reads the same file in two branches of a plan. Every
//! repeat costs a call and, where a model follows, makes it reason over the
//! same text twice. So the plan check keeps the first of such steps and
//! points every `depends_on` and `{{id}}` of the others at it, for every
//! provider. Arguments are compared after the merges before them, so a step
//! that repeats another once their inputs are merged is merged too. Only
//! calls that are safe to make once for both are merged: a read-only call,
//! or one of a tool that declares itself idempotent. Appending a line or
//! sending a message twice may be the point, so such steps stay as written.

use serde_json::Value;

use super::{rename_step, Plan, StepKind};
use crate::help::{Mend, SAME_CALL};
use crate::tools::{Effect, ToolRegistry};

/// `plan` with each step that repeats an earlier step's call merged into
/// it, and a [`Mend`] (rule [`SAME_CALL`], at the step kept) for each merge.
/// A plan with no repeats comes back as it is, with no mends.
pub fn merge_same_calls(plan: &Plan, tools: &ToolRegistry) -> (Plan, Vec<Mend>) {
    let mut current = plan.clone();
    let mut mends = Vec::new();
    while let Some((kept, repeat)) = first_repeat(&current, tools) {
        let mut next = current.clone();
        next.steps.retain(|s| s.id != repeat);
        rename_step(&mut next.steps, &repeat, &kept);
        for step in &mut next.steps {
            let mut seen = std::collections::HashSet::new();
            step.depends_on.retain(|d| seen.insert(d.clone()));
        }
        mends.push(Mend::between(SAME_CALL, &kept, &current, &next));
        current = next;
    }
    (current, mends)
}

/// The first pair (kept, repeat) of steps, in plan order, that make the same
/// call of a tool safe to call once for both.
fn first_repeat(plan: &Plan, tools: &ToolRegistry) -> Option<(String, String)> {
    let mergeable = |tool: &str, args: &Value| {
        tools
            .get(tool)
            .is_some_and(|entry| entry.effect(args) == Effect::ReadOnly || entry.idempotent())
    };
    let calls: Vec<(&str, &str, Value)> = plan
        .steps
        .iter()
        .filter_map(|s| match s.kind() {
            StepKind::Tool(tool) => Some((s.id.as_str(), tool, Value::Object(s.args.clone()))),
            _ => None,
        })
        .filter(|(_, tool, args)| mergeable(tool, args))
        .collect();
    calls.iter().enumerate().find_map(|(i, (id, tool, args))| {
        calls[i + 1..]
            .iter()
            .find(|(_, other, other_args)| other == tool && other_args == args)
            .map(|(repeat, _, _)| (id.to_string(), repeat.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    fn plan(steps: Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_call_written_twice_is_one_step_and_what_used_either_uses_it() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let twice = plan(serde_json::json!([
            {"id": "s1", "description": "read a", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s2", "description": "read a again", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s3", "description": "double", "tool": "calculator", "args": {"expression": "{{s1}} * 2"}, "depends_on": ["s1"]},
            {"id": "s4", "description": "double again", "tool": "calculator", "args": {"expression": "{{s2}} * 2"}, "depends_on": ["s2"]},
            {"id": "s5", "description": "add", "tool": "calculator", "args": {"expression": "{{s3}} + {{s4}}"}, "depends_on": ["s3", "s4"]}
        ]));
        let (merged, mends) = merge_same_calls(&twice, &tools);
        let ids: Vec<&str> = merged.steps.iter().map(|s| s.id.as_str()).collect();
        // s2 repeats s1; then s4 (now `{{s1}} * 2`) repeats s3.
        assert_eq!(ids, ["s1", "s3", "s5"]);
        assert_eq!(merged.steps[2].args["expression"], "{{s3}} + {{s3}}");
        assert_eq!(merged.steps[2].depends_on, ["s3"]);
        assert_eq!(mends.len(), 2);
        assert_eq!((mends[0].rule.as_str(), mends[0].step.as_str()), (SAME_CALL, "s1"));
        assert!(mends[0].before.iter().any(|s| s.id == "s2"));
        assert!(super::super::validate(&merged, &tools, &Default::default()).is_ok());
    }

    #[test]
    fn calls_that_change_something_are_kept_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        // Replacing a text twice may be the point (`aa` to `a`, twice).
        let appends = plan(serde_json::json!([
            {"id": "s1", "description": "shorten", "tool": "replace_in_file", "args": {"path": "log.txt", "old": "aa", "new": "a"}, "depends_on": []},
            {"id": "s2", "description": "shorten again", "tool": "replace_in_file", "args": {"path": "log.txt", "old": "aa", "new": "a"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "read", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s4", "description": "read b", "tool": "read_file", "args": {"path": "b.txt"}, "depends_on": []}
        ]));
        let (same, mends) = merge_same_calls(&appends, &tools);
        assert_eq!(same, appends);
        assert!(mends.is_empty());
    }
}
