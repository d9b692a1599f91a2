//! Results a step waits for and never uses.
//!
//! A small planner chains a computation and then types the value it expects
//! instead of passing the result on: `reverse_text("planet")`, then,
//! waiting for it, `reverse_text("neltap")`. The second step
//! ignores what the first computed, so the run goes on with a made-up value.

use super::{Plan, PlanError};

/// Tools whose only purpose is the result they return (they read no file
/// and change nothing): waiting for one without using its result is never
/// what a plan means.
const COMPUTING_TOOLS: [&str; 3] = ["calculator", "sort_lines", "reverse_text"];

/// Whether step `id` of `plan` exists only for the value it returns: a
/// computing tool, a reasoning step, or an agent step. (Waiting for a read
/// or a write may be a matter of order, not of value.)
fn gives_a_value(plan: &Plan, id: &str) -> bool {
    plan.step(id).is_some_and(|d| match d.kind() {
        super::StepKind::Tool(tool) => COMPUTING_TOOLS.contains(&tool),
        super::StepKind::Agent(_) | super::StepKind::Reasoning => true,
    })
}

/// An error for each tool step that depends on a step that gives a value
/// ([`gives_a_value`]) and does not use it in its arguments: the step that
/// found the value was for nothing, and the call goes on without it (a small
/// planner has an agent step find the .jpg files, then a glob that ignores
/// them). Reasoning and agent steps see their dependencies' results without
/// naming them, so they are not held to this.
pub fn unused_results(plan: &Plan) -> Vec<PlanError> {
    let mut errors = Vec::new();
    for step in plan.steps.iter().filter(|s| s.tool.is_some()) {
        let used: Vec<String> = super::links::step_references(step)
            .into_iter()
            .map(|(_, r)| r.step)
            .collect();
        for dependency in &step.depends_on {
            if gives_a_value(plan, dependency) && !used.contains(dependency) {
                errors.push(PlanError::UnusedResult {
                    step: step.id.clone(),
                    dependency: dependency.clone(),
                });
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: serde_json::Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_computed_result_waited_for_and_not_used_is_an_error() {
        let typed = plan(serde_json::json!([
            {"id": "s1", "description": "reverse planet", "tool": "reverse_text", "args": {"text": "planet", "reverse": "letters"}, "depends_on": []},
            {"id": "s2", "description": "reverse it back", "tool": "reverse_text", "args": {"text": "neltap", "reverse": "letters"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "b.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
        ]));
        let errors = unused_results(&typed);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let message = errors[0].to_string();
        assert!(
            message.contains("step s2 waits for s1") && message.contains("{{s1}}"),
            "{message}"
        );
    }

    #[test]
    fn results_passed_on_waits_for_files_and_reasoning_steps_are_not_errors() {
        let fine = plan(serde_json::json!([
            {"id": "s1", "description": "multiply", "tool": "calculator", "args": {"expression": "37 * 23"}, "depends_on": []},
            {"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "p.txt", "content": "{{s1}}"}, "depends_on": ["s1"]},
            // Waiting for a write, not for a result: an order, not a value.
            {"id": "s3", "description": "read it back", "tool": "read_file", "args": {"path": "p.txt"}, "depends_on": ["s2"]},
            // A reasoning step sees what it depends on without naming it.
            {"id": "s4", "description": "say if it is odd", "tool": null, "args": {}, "depends_on": ["s1"]}
        ]));
        assert!(unused_results(&fine).is_empty());
        // A tool step waiting for an agent's finding that it ignores.
        let ignored = plan(serde_json::json!([
            {"id": "s1", "description": "find the jpg files", "agent": "worker", "depends_on": []},
            {"id": "s2", "description": "count them", "tool": "glob", "args": {"pattern": "photos/*.jpg"}, "depends_on": ["s1"]}
        ]));
        let errors = unused_results(&ignored);
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
}
