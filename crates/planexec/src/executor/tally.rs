//! What one step's execution has done so far: its attempts, inner calls and
//! the arguments its tool was called with, for its result and the ledger.

use serde_json::Value;

use crate::result::StepResult;

/// What one step's execution has done so far.
#[derive(Default)]
pub(super) struct Tally {
    /// The plan version the step runs under (its inner calls are recorded with it).
    pub(super) version: u32,
    pub(super) attempts: u32,
    pub(super) model_calls: u32,
    pub(super) args: Option<Value>,
    pub(super) output: Option<Value>,
    /// Arguments the approver already said yes to for this step.
    pub(super) confirmed: Option<Value>,
    /// An agent step's inner calls.
    pub(super) calls: Vec<StepResult>,
    /// The step's own call was refused by policy.
    pub(super) refused: bool,
    /// Tokens and cost (USD, where the model's price is known) of the
    /// step's model calls, against an agent profile's step budget.
    pub(super) tokens: u64,
    pub(super) cost: f64,
    /// When an agent loop for the step began, for its time limit.
    pub(super) loop_started: Option<std::time::Instant>,
    /// The error of the step's own call, while a recovery of it runs: what
    /// the step failed with if the recovery is cut off by the step's time.
    pub(super) recovering_from: Option<String>,
}
