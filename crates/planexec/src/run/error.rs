//! Why a run (or a planning call) could not go on.

use crate::llm::{LlmError, Role};
use crate::plan::PlanErrors;

/// Why a run (or a planning call) could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Model(#[from] LlmError),
    #[error("the {role} gave no usable plan after {attempts} attempts:\n{errors}\nits last reply was:\n{last_reply}")]
    Planning {
        role: Role,
        attempts: u32,
        errors: String,
        last_reply: String,
    },
    #[error("the plan is invalid:\n{0}")]
    InvalidPlan(PlanErrors),
    /// Sent back for its errors, the model wrote the same plan again: asking
    /// once more would go round in a circle.
    #[error("the {role} wrote the plan it was sent back for again (attempt {attempt}):\n{errors}")]
    Repeated { role: Role, attempt: u32, errors: String },
}

impl RunError {
    /// Whether replanning again would only go round in a circle.
    pub fn is_no_progress(&self) -> bool {
        matches!(self, RunError::Repeated { .. } | RunError::Planning { .. })
    }
}
