//! Steps a mend adds to a plan: a fresh id beside the plan's own, and a
//! tool step built whole.

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
