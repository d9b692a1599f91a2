//! What a tool is: the [`Tool`] trait a step calls through, the [`Effect`]
//! class that decides confirmation and replay safety, and the [`ToolError`] a
//! call fails with.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What running a tool does to the world. Decides confirmation and replay safety.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Only reads; safe to run twice.
    ReadOnly,
    /// Reads from the network: safe to run twice, but the request itself (a
    /// URL) can carry workspace data out, so it is not read-only.
    Network,
    /// Writes files inside the workspace.
    WritesWorkspace,
    /// Changes something outside the workspace (network calls with effects, processes).
    External,
    /// Cannot be undone.
    Irreversible,
}

impl Effect {
    pub fn has_side_effects(self) -> bool {
        self != Effect::ReadOnly
    }

    /// The name used in configuration and listings: `read_only`, `writes_workspace`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::ReadOnly => "read_only",
            Effect::Network => "network",
            Effect::WritesWorkspace => "writes_workspace",
            Effect::External => "external",
            Effect::Irreversible => "irreversible",
        }
    }

    /// Parse a configuration value; the error lists the accepted names.
    pub fn parse(text: &str) -> Result<Effect, String> {
        match text.trim().replace('-', "_").as_str() {
            "read_only" | "readonly" => Ok(Effect::ReadOnly),
            "network" => Ok(Effect::Network),
            "writes_workspace" => Ok(Effect::WritesWorkspace),
            "external" => Ok(Effect::External),
            "irreversible" => Ok(Effect::Irreversible),
            other => Err(format!(
                "unknown effect class `{other}`: use read_only, network, writes_workspace, external or irreversible"
            )),
        }
    }
}

impl std::fmt::Display for Effect {
    /// As a phrase: "is read-only", "writes inside the workspace", ...
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Effect::ReadOnly => "is read-only",
            Effect::Network => "reaches the network (a URL can carry data out)",
            Effect::WritesWorkspace => "writes inside the workspace",
            Effect::External => "has effects outside the workspace",
            Effect::Irreversible => "cannot be undone",
        })
    }
}

/// How a tool call failed, which decides what the executor does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    /// The arguments are wrong; a model may fix them.
    InvalidArgs,
    /// What the arguments point at does not exist; a model may fix them.
    NotFound,
    /// Refused by policy (e.g. a path outside the workspace). Not retried, not patched around.
    Denied,
    /// A transient failure (timeout, 5xx, 429, connection reset): retried with backoff.
    Retryable,
    /// Any other failure.
    Failed,
}

/// A failed tool call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct ToolError {
    pub kind: ToolErrorKind,
    pub message: String,
}

impl ToolError {
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
        }
    }
    pub fn invalid_args(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolErrorKind::InvalidArgs, message)
    }
    pub fn not_found(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolErrorKind::NotFound, message)
    }
    pub fn denied(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolErrorKind::Denied, message)
    }
    pub fn retryable(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolErrorKind::Retryable, message)
    }
    pub fn failed(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolErrorKind::Failed, message)
    }

    /// Whether an executor model, shown the error, could plausibly fix the call.
    pub fn model_fixable(&self) -> bool {
        matches!(self.kind, ToolErrorKind::InvalidArgs | ToolErrorKind::NotFound)
    }
}

/// Something a step can call.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// What the tool does, in one short line: a compact prompt's tool
    /// signature shows this instead of the description (a hosted model
    /// needs no guidance written for a small one). Default: the
    /// description's first sentence.
    fn summary(&self) -> &str {
        first_sentence(self.description())
    }
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// The tool's effect class, whatever its arguments.
    fn effect(&self) -> Effect;
    /// The effect of one call with these (resolved) arguments. Most tools have
    /// one class; `shell` is read-only only for commands on its allowlist.
    fn effect_for(&self, _args: &Value) -> Effect {
        self.effect()
    }
    /// For a tool that is read-only only for some arguments: which rule made
    /// this call not read-only, for the refusal message.
    fn why_not_read_only(&self, _args: &Value) -> Option<String> {
        None
    }
    /// A problem with a planned call that its schema cannot express (checked
    /// when a plan is validated, so the planner is asked again with it), e.g.
    /// the calculator given a whole text to "evaluate". `None`: no problem.
    fn plan_check(&self, _args: &Value) -> Option<String> {
        None
    }
    /// Whether running it twice with the same arguments has the same effect as
    /// once (reads are; so is writing the same content to the same file). A
    /// resumed run re-runs an idempotent step that was in flight at a crash
    /// without asking.
    fn idempotent(&self) -> bool {
        self.effect() == Effect::ReadOnly
    }
    /// The argument under which the executor hands this tool the results of
    /// the step's dependencies, as `{"s1": <output>, …}`, beside the
    /// arguments the plan wrote (after they were checked and confirmed, so
    /// neither shows them): a program reads `s1` as a value instead of a
    /// `{{s1}}` spliced into its code. `None` (the default): no such argument.
    fn inputs_argument(&self) -> Option<&'static str> {
        None
    }
    /// Run the tool. `args` has already been checked against [`Tool::parameters`].
    async fn call(&self, args: Value) -> Result<Value, ToolError>;
    /// [`Tool::call`] for a tool that may ask the run something while it
    /// runs (an MCP server's sampling or elicitation request): `asker`
    /// answers for the run. The executor calls this; the default ignores it.
    async fn call_asking(&self, args: Value, asker: &dyn super::asking::Asker) -> Result<Value, ToolError> {
        let _ = asker;
        self.call(args).await
    }
}

/// A text's first sentence: up to the first stop followed by a capital
/// ("e.g. x" and "1. x" go on), or all of it.
pub fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let mut from = 0;
    while let Some(at) = text[from..].find(". ") {
        let end = from + at + 1;
        if text[end..].trim_start().chars().next().is_some_and(char::is_uppercase) {
            return &text[..end];
        }
        from = end;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn a_description_is_cut_to_its_first_sentence() {
        assert_eq!(
            first_sentence("Read a file, e.g. notes.txt. The path may be a pattern."),
            "Read a file, e.g. notes.txt."
        );
        assert_eq!(first_sentence("Sum 1. 2 and 3"), "Sum 1. 2 and 3");
    }
}
