//! Steps a mend adds to a plan: a fresh id beside the plan's own, and a
//! tool step built whole; and a step a mend drops for another.

use serde_json::{Map, Value};

use crate::plan::{Plan, Step};

/// The `skip`-th id `{prefix}1`, `{prefix}2`, … that no step of `plan` has
/// (ids before it are taken by steps about to be added).
pub(super) fn fresh_id(plan: &Plan, prefix: &str, skip: usize) -> Option<String> {
    (1..)
        .map(|n| format!("{prefix}{n}"))
        .filter(|id| !plan.steps.iter().any(|s| &s.id == id))
        .nth(skip)
}

/// A tool step the runtime adds to a plan.
pub(super) fn tool_step(
    id: String,
    description: String,
    tool: &str,
    args: Map<String, Value>,
    depends_on: Vec<String>,
) -> Step {
    Step {
        id,
        description,
        tool: Some(tool.into()),
        agent: None,
        args,
        depends_on,
        expected: None,
    }
}

/// Drop step `id` from `plan`; the steps that waited for it, or used its
/// result, wait for and use step `by` instead (each dependency listed once).
pub(super) fn replaced_by(plan: &mut Plan, id: &str, by: &str) {
    plan.steps.retain(|s| s.id != id);
    crate::plan::rename_step(&mut plan.steps, id, by);
    for step in &mut plan.steps {
        let mut seen = std::collections::HashSet::new();
        step.depends_on.retain(|d| seen.insert(d.clone()));
    }
}
