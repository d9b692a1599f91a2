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
}
