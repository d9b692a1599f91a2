//! The exceptions a Python user catches. Every one carries planexec's own
//! message, which says what was wrong and what to do.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(planexec, PlanexecError, PyException, "Base class of planexec's errors.");
create_exception!(
    planexec,
    ConfigError,
    PlanexecError,
    "Bad settings: an unknown model, a missing key, an invalid option value."
);
create_exception!(
    planexec,
    PlanError,
    PlanexecError,
    "The planner's plan (or a plan given to execute) is not valid, or no plan could be made."
);
create_exception!(
    planexec,
    RunFailed,
    PlanexecError,
    "A run ended without doing its task."
);
create_exception!(
    planexec,
    BudgetExceeded,
    RunFailed,
    "A run stopped at its token, cost or time budget."
);
create_exception!(planexec, Rejected, RunFailed, "The plan was rejected.");
create_exception!(
    planexec,
    DecisionError,
    PlanexecError,
    "A decision on a recorded run was refused: no such run, or it waits for something else."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PlanexecError", py.get_type::<PlanexecError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("RunFailed", py.get_type::<RunFailed>())?;
    m.add("BudgetExceeded", py.get_type::<BudgetExceeded>())?;
    m.add("Rejected", py.get_type::<Rejected>())?;
    m.add("DecisionError", py.get_type::<DecisionError>())?;
    Ok(())
}

/// A configuration problem as [`ConfigError`]. Where the CLI's message
/// names `planexec model pull`, a Python user is told their way too (a
/// `pip install` brings no `planexec` command).
pub fn config(message: impl Into<String>) -> PyErr {
    let mut message = message.into();
    if message.contains("planexec model pull") {
        message.push_str(" (from Python: planexec.pull_model(\"default\") or planexec.pull_model(\"small\"))");
    }
    ConfigError::new_err(message)
}

impl From<BadSettings> for PyErr {
    fn from(e: BadSettings) -> PyErr {
        config(e.0)
    }
}

/// A bad setting or a setup step that failed, said as the CLI says it.
pub struct BadSettings(pub String);

impl From<planexec_cli::outcome::BadInput> for BadSettings {
    fn from(e: planexec_cli::outcome::BadInput) -> BadSettings {
        BadSettings(e.0)
    }
}

impl From<String> for BadSettings {
    fn from(e: String) -> BadSettings {
        BadSettings(e)
    }
}

/// Why a resume did not start, as the exception a caller can act on: no
/// such run or no store is a setting to fix; a run that waits needs a
/// decision; one that finished or is owned elsewhere cannot go on.
pub fn resume(e: planexec::ResumeError) -> PyErr {
    use planexec::ResumeError as R;
    let message = e.to_string();
    match e {
        R::NoStore | R::NotFound { .. } => config(message),
        R::AwaitingApproval { .. } => DecisionError::new_err(message),
        _ => RunFailed::new_err(message),
    }
}
