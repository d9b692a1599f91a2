//! The tools port: what a step can call.
//!
//! A [`Tool`] has a name, a description, a JSON Schema for its arguments and an
//! [`Effect`] class. The [`ToolRegistry`] holds a run's tools with their compiled
//! argument validators; the planner sees it, validation checks plans against it,
//! and the executor calls through it. Built-in tools live in [`builtin`].

pub mod builtin;
mod calculator;
pub mod workspace;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use calculator::evaluate as evaluate_expression;

/// What running a tool does to the world. Decides confirmation and replay safety.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Only reads; safe to run twice.
    ReadOnly,
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
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    fn effect(&self) -> Effect;
    /// Whether running it twice with the same arguments has the same effect as
    /// once (reads are; so is writing the same content to the same file). A
    /// resumed run re-runs an idempotent step that was in flight at a crash
    /// without asking.
    fn idempotent(&self) -> bool {
        self.effect() == Effect::ReadOnly
    }
    /// Run the tool. `args` has already been checked against [`Tool::parameters`].
    async fn call(&self, args: Value) -> Result<Value, ToolError>;
}

/// A registered tool with its compiled argument validator.
pub struct ToolEntry {
    pub tool: Arc<dyn Tool>,
    validator: Option<jsonschema::Validator>,
}

impl ToolEntry {
    /// Problems with `args` against the tool's schema. With `allow_references`, a
    /// problem located at a string that still holds a `{{sN}}` reference is not
    /// counted: its value is only known once the step it names has run.
    pub fn check_args(&self, args: &Value, allow_references: bool) -> Vec<String> {
        let Some(validator) = &self.validator else {
            return Vec::new();
        };
        validator
            .iter_errors(args)
            .filter(|e| {
                !(allow_references
                    && e.instance()
                        .as_str()
                        .is_some_and(|s| !crate::plan::find_references(s).is_empty()))
            })
            .map(|e| {
                let at = e.instance_path().as_str().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect()
    }
}

/// The tools of a run, by name.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, ToolEntry>,
}

impl ToolRegistry {
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Add a tool, replacing any tool of the same name. Fails if its schema is not valid JSON Schema.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), String> {
        let schema = tool.parameters();
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| format!("tool `{}` has an invalid argument schema: {e}", tool.name()))?;
        self.tools.insert(
            tool.name().to_string(),
            ToolEntry {
                tool,
                validator: Some(validator),
            },
        );
        Ok(())
    }

    pub fn with(mut self, tool: Arc<dyn Tool>) -> Result<ToolRegistry, String> {
        self.register(tool)?;
        Ok(self)
    }

    /// Remove a tool; `false` if there was none of that name.
    pub fn remove(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.get(name)
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    pub fn entries(&self) -> impl Iterator<Item = &ToolEntry> {
        self.tools.values()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Whether the named tool may safely run twice (unknown tools are assumed not).
    pub fn is_idempotent(&self, name: &str) -> bool {
        self.get(name).is_some_and(|e| e.tool.idempotent())
    }

    /// Whether the named tool has side effects (unknown tools are assumed to).
    pub fn has_side_effects(&self, name: &str) -> bool {
        self.get(name).is_none_or(|e| e.tool.effect().has_side_effects())
    }
}
