//! What running one step produced: the executor's half of the contract.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not run (yet): still waiting when the run stopped.
    Pending,
    Succeeded,
    Failed,
    /// Dropped from the plan by a replan before it ran.
    Superseded,
    /// Running when the run was cancelled.
    Interrupted,
    /// Started and not finished: still running, or in flight when the process died
    /// (only seen in a ledger).
    Running,
    /// In flight at a crash and, on resume, taken as done without running it again
    /// (a person said its side effect had happened). Its output is unknown:
    /// dependents see [`unknown_output`] in its place, never a made-up value.
    Skipped,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Succeeded => "succeeded",
            StepStatus::Failed => "failed",
            StepStatus::Superseded => "superseded",
            StepStatus::Interrupted => "interrupted",
            StepStatus::Running => "running",
            StepStatus::Skipped => "skipped",
        }
    }

    /// Whether the step counts as done: it succeeded, or was taken as done on resume.
    pub fn is_done(self) -> bool {
        matches!(self, StepStatus::Succeeded | StepStatus::Skipped)
    }

    pub fn parse(s: &str) -> Option<StepStatus> {
        [
            StepStatus::Pending,
            StepStatus::Succeeded,
            StepStatus::Failed,
            StepStatus::Superseded,
            StepStatus::Interrupted,
            StepStatus::Running,
            StepStatus::Skipped,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

/// The record of one step's execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// The step's id; an agent step's inner calls are `<step>.<n>`.
    pub id: String,
    pub tool: Option<String>,
    /// For an agent step: the agent profile that carried it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub status: StepStatus,
    /// Tool attempts plus executor model turns.
    pub attempts: u32,
    /// The arguments the tool ran with, after `{{sN}}` references were resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    pub output: Option<Value>,
    pub error: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub started_at: Option<u64>,
    pub finished_at: Option<u64>,
    /// Executor model calls this step made (0 when the tool ran directly).
    pub model_calls: u32,
    /// An agent step's tool calls, in order, each with its own record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<StepResult>,
    /// The step's call was refused by policy (the mode, a person who declined,
    /// a path outside the workspace): a decision, not a failure to work around.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// The worker that ran the step, on a durable engine that spreads
    /// steps over several (`None` in a local run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
}

/// The tool calls among `records` and their inner calls (an agent step's)
/// that succeeded, depth first: what the tools gave a run. A reasoning or
/// agent step's own answer is a model's, not a tool's, and is left out.
pub fn tool_calls_succeeded(records: &[StepResult]) -> Vec<&StepResult> {
    let mut calls = Vec::new();
    for record in records {
        if record.tool.is_some() && record.succeeded() {
            calls.push(record);
        }
        calls.extend(tool_calls_succeeded(&record.calls));
    }
    calls
}

/// The programs among `records` (and their inner calls) that ran and
/// succeeded: the `code` of each `python` call.
pub(crate) fn programs_ran(records: &[StepResult]) -> Vec<String> {
    tool_calls_succeeded(records)
        .into_iter()
        .filter(|call| call.tool.as_deref() == Some("python"))
        .filter_map(|call| call.args.as_ref()?.get("code")?.as_str())
        .map(str::to_string)
        .collect()
}

impl StepResult {
    /// The record of a step that did not run (or whose run was dropped).
    pub fn not_run(step: &crate::plan::Step, status: StepStatus) -> StepResult {
        StepResult {
            id: step.id.clone(),
            tool: step.tool.clone(),
            agent: step.agent.clone(),
            status,
            attempts: 0,
            args: None,
            output: None,
            error: None,
            started_at: None,
            finished_at: None,
            model_calls: 0,
            calls: Vec::new(),
            refused: false,
            worker: None,
        }
    }

    /// Whether this records an agent step's inner call (`<step>.<n>`), not a step.
    pub fn is_inner_call(&self) -> bool {
        is_inner_call_id(&self.id)
    }

    /// What the steps after a done one see as its output: the recorded
    /// output, or for a step taken as done on resume, [`unknown_output`].
    pub fn output_for_dependents(&self) -> Value {
        match (&self.output, self.status) {
            (Some(v), _) => v.clone(),
            (None, StepStatus::Skipped) => unknown_output(&self.id),
            (None, _) => Value::Null,
        }
    }

    /// Whether this records a call of `tool` with exactly `args`, whatever came of it.
    pub fn is_call_of(&self, tool: &str, args: &Value) -> bool {
        self.tool.as_deref() == Some(tool) && self.args.as_ref() == Some(args)
    }

    pub fn succeeded(&self) -> bool {
        self.status == StepStatus::Succeeded
    }

    pub fn elapsed_ms(&self) -> u64 {
        match (self.started_at, self.finished_at) {
            (Some(s), Some(f)) => f.saturating_sub(s),
            _ => 0,
        }
    }
}

/// The id of an agent step's `n`th tool call. A plan's step ids cannot hold
/// a `.`, so these never clash with a step.
pub fn inner_call_id(step: &str, n: usize) -> String {
    format!("{step}.{n}")
}

/// The stand-in for the output of step `id`, taken as done on resume when it
/// was in flight: what it returned was never recorded. A model reading it
/// sees why; a tool step whose arguments use it fails (see [`why_unknown`])
/// rather than being handed `null` or a guess.
pub fn unknown_output(id: &str) -> Value {
    serde_json::json!({ UNKNOWN_OUTPUT: format!(
        "{id} was in flight when the run stopped and was taken as done on resume; what it returned was never recorded"
    ) })
}

const UNKNOWN_OUTPUT: &str = "output_unknown";

/// The reason, when `value` is an [`unknown_output`].
pub fn why_unknown(value: &Value) -> Option<&str> {
    match value.as_object() {
        Some(map) if map.len() == 1 => map.get(UNKNOWN_OUTPUT)?.as_str(),
        _ => None,
    }
}

/// Whether `id` names an agent step's inner call.
pub fn is_inner_call_id(id: &str) -> bool {
    id.contains('.')
}

/// The step an inner call id belongs to.
pub fn step_of_inner_call(id: &str) -> &str {
    id.split('.').next().unwrap_or(id)
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Whether a step's output holds nothing: null, blank text, an empty list
/// or object (a glob or a search that matched nothing), or a program's
/// printed empty collection (`[]`, `{}`, `set()`, `None`: on held-out-10 a
/// program's `[]` of the RSS items it did not find was saved as the
/// latest post's title).
pub fn is_empty_output(output: &Value) -> bool {
    match output {
        Value::Null => true,
        Value::String(s) => ["", "[]", "{}", "()", "set()", "None", "''", "\"\""].contains(&s.trim()),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}
