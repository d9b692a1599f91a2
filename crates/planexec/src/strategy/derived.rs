//! Recovery by derivation: when two different programs written from the task
//! alone print the same content for the file the run wrote, and the file
//! holds something else ([`crate::recompute::Recomputed::Refuted`]), the
//! plan is revised with one more step that writes what they computed.
//!
//! Asked instead, the small replanner mostly wrote the plan that had made
//! the wrong file again (two of held-out-4's refuted runs failed so), while
//! the two programs already hold the content, each checked by the other.
//! The step is an ordinary `write_file` call in a recorded plan version, so
//! the run's ledger, review and replay show where the file's content came
//! from, and the check of the work runs again on the file it wrote.

use serde_json::{json, Map};

use crate::plan::{Plan, Step};
use crate::run::Run;

/// The tool the step calls.
const WRITE: &str = "write_file";

/// Revise the plan in force with a step writing `printed` to `path`, for
/// `reason`. `false` (and no revision) when the run has no `write_file` tool.
pub(crate) async fn write_what_programs_computed(run: &mut Run, path: &str, printed: &str, reason: &str) -> bool {
    if run.ctx.setting.tools.get(WRITE).is_none() {
        return false;
    }
    let current = run.plan().clone();
    let used: Vec<&str> = run
        .plans
        .iter()
        .flat_map(|v| v.plan.steps.iter().map(|s| s.id.as_str()))
        .chain(run.done.keys().map(String::as_str))
        .collect();
    let id = (current.steps.len() + 1..)
        .map(|n| format!("s{n}"))
        .find(|id| !used.contains(&id.as_str()))
        .expect("some id is free");
    let mut content = printed.trim_end().to_string();
    content.push('\n');
    let args: Map<String, serde_json::Value> = [
        ("path".to_string(), json!(path)),
        ("content".to_string(), json!(content)),
    ]
    .into_iter()
    .collect();
    let step = Step {
        id,
        description: format!("Write to {path} what two programs written from the task computed it must hold"),
        tool: Some(WRITE.to_string()),
        agent: None,
        args,
        depends_on: Vec::new(),
        expected: None,
    };
    let mut steps = current.steps.clone();
    steps.push(step);
    let plan = Plan { steps, ..current };
    run.adopt_revision(
        plan,
        format!("not done yet: {reason}; {path} is written with what the programs computed"),
    )
    .await;
    true
}
