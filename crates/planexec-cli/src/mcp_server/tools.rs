//! The tools `planexec mcp-server` offers a client: their names, what they
//! do and their argument schemas, and reading their arguments.

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

/// The tools, as `tools/list` gives them.
pub fn list() -> Vec<Tool> {
    let task = json!({"type": "string", "description": "what to do, in words"});
    let run_id = json!({"type": "string", "description": "a run id (or the start of one) from `run`"});
    vec![
        tool(
            "plan",
            "Plan a task without running it: the checked plan (steps, their tools and arguments, what each depends on) as JSON and as text.",
            json!({"task": task, "strategy": {"type": "string", "description": "plan-execute, rewoo, compiler or replan-each-step"}}),
            &["task"],
            true,
        ),
        tool(
            "run",
            "Plan and run a task in the server's workspace, under its mode and budgets: the answer, the run id and the report. Progress is notified as steps finish. Unless the server approves plans itself, the run waits for `approve` and says so.",
            json!({"task": task, "mode": {"type": "string", "enum": ["plan", "ask", "auto"], "description": "narrow the server's mode (never widen it)"}}),
            &["task"],
            false,
        ),
        tool(
            "runs_show",
            "A recorded run: its status, plan, steps with their results, answer and usage, as the JSON report and as text.",
            json!({"run_id": run_id}),
            &["run_id"],
            true,
        ),
        tool(
            "approve",
            "Approve what a waiting run waits for (its plan, or a step's call; or give the answer to a question it waits for), and let it go on here: its outcome as `run` gives it.",
            json!({"run_id": run_id, "step": {"type": "string", "description": "the step, when the run waits for one"},
                   "answer": {"type": "object", "description": "the answer, when the run waits for one (an object following the question's form, shown by runs_show)"}}),
            &["run_id"],
            false,
        ),
        tool(
            "reject",
            "Reject a waiting run's plan: the run ends `rejected` with the reason.",
            json!({"run_id": run_id, "reason": {"type": "string"}}),
            &["run_id"],
            false,
        ),
    ]
}

fn tool(name: &'static str, description: &'static str, properties: Value, required: &[&str], read_only: bool) -> Tool {
    let schema =
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    let schema: JsonObject = serde_json::from_value(schema).unwrap_or_default();
    let mut tool = Tool::new(name, description, schema);
    tool.annotations = Some(ToolAnnotations::from_raw(
        None,
        Some(read_only),
        Some(false),
        None,
        Some(false),
    ));
    tool
}

/// A required string argument, or what to send instead.
pub fn text(args: &JsonObject, name: &str) -> Result<String, String> {
    match args.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("`{name}` is empty: give it a value")),
        Some(other) => Err(format!("`{name}` must be a string, not {other}")),
        None => Err(format!("`{name}` is missing: this tool needs it")),
    }
}

/// An optional string argument.
pub fn optional(args: &JsonObject, name: &str) -> Result<Option<String>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text(args, name).map(Some),
    }
}
