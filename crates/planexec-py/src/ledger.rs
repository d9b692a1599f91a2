//! Decisions on runs recorded in a ledger, from any process (`planexec.approve`,
//! `reject`, `steer`, `answer`), a recorded run's report, and fetching the
//! embedded model (`planexec.pull_model`): the CLI's `approve`, `runs show`
//! and `model pull`, for Python; and the whole CLI, as the package's
//! `planexec` command.

use std::sync::Arc;

use planexec::{RunStore, StoreError};
use pyo3::prelude::*;

use crate::blocking;
use crate::errors::{self, DecisionError};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(approve, m)?)?;
    m.add_function(wrap_pyfunction!(answer, m)?)?;
    m.add_function(wrap_pyfunction!(reject, m)?)?;
    m.add_function(wrap_pyfunction!(steer, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(pull_model, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    Ok(())
}

async fn open(store: &str) -> Result<Arc<dyn RunStore>, String> {
    planexec_cli::runs::open(Some(store)).await
}

/// Approve what run `run_id` waits for (its plan, or with `step` that step's
/// call); answers what was approved. The run continues with `Agent.resume`.
#[pyfunction]
#[pyo3(signature = (store, run_id, step=None, by="python"))]
fn approve(py: Python<'_>, store: String, run_id: String, step: Option<String>, by: &str) -> PyResult<String> {
    let by = by.to_string();
    blocking::wait(py, None, async move {
        let store = open(&store).await.map_err(errors::config)?;
        planexec::decisions::approve(store.as_ref(), &run_id, step.as_deref(), &by)
            .await
            .map(|waited| waited.describe())
            .map_err(|e| DecisionError::new_err(e.to_string()))
    })?
}

/// Answer the question run `run_id` waits for (an MCP server's), as JSON.
#[pyfunction]
#[pyo3(signature = (store, run_id, answer, by="python"))]
fn answer(py: Python<'_>, store: String, run_id: String, answer: String, by: &str) -> PyResult<String> {
    let by = by.to_string();
    let answer: serde_json::Value =
        serde_json::from_str(&answer).map_err(|e| errors::config(format!("the answer is not JSON: {e}")))?;
    blocking::wait(py, None, async move {
        let store = open(&store).await.map_err(errors::config)?;
        planexec::decisions::answer(store.as_ref(), &run_id, answer, &by)
            .await
            .map(|waited| waited.describe())
            .map_err(|e| DecisionError::new_err(e.to_string()))
    })?
}

/// Reject the plan run `run_id` waits on: it ends `rejected` with `reason`.
#[pyfunction]
#[pyo3(signature = (store, run_id, reason, by="python"))]
fn reject(py: Python<'_>, store: String, run_id: String, reason: String, by: &str) -> PyResult<()> {
    let by = by.to_string();
    blocking::wait(py, None, async move {
        let store = open(&store).await.map_err(errors::config)?;
        planexec::decisions::reject(store.as_ref(), &run_id, &reason, &by)
            .await
            .map_err(|e| DecisionError::new_err(e.to_string()))
    })?
}

/// Steer run `run_id`: its replanner takes `message` into account at the next step.
#[pyfunction]
#[pyo3(signature = (store, run_id, message, by="python"))]
fn steer(py: Python<'_>, store: String, run_id: String, message: String, by: &str) -> PyResult<u64> {
    let by = by.to_string();
    blocking::wait(py, None, async move {
        let store = open(&store).await.map_err(errors::config)?;
        planexec::decisions::steer(store.as_ref(), &run_id, &message, &by)
            .await
            .map_err(|e| DecisionError::new_err(e.to_string()))
    })?
}

/// The report of a recorded run (as JSON), or `None` when there is no such run.
#[pyfunction]
fn report(py: Python<'_>, store: String, run_id: String) -> PyResult<Option<String>> {
    blocking::wait(py, None, async move {
        let store = open(&store).await.map_err(errors::config)?;
        let run = store
            .load_run(&run_id)
            .await
            .map_err(|e: StoreError| errors::config(e.to_string()))?;
        Ok(run.map(|run| serde_json::to_string(&run.report()).unwrap_or_default()))
    })?
}

/// Fetch the embedded model's weights (`default`: 1.5B, `small`: 0.5B) into
/// the same folder the CLI uses; quick when they are already there.
#[pyfunction]
#[pyo3(signature = (name="default", quiet=true))]
fn pull_model(py: Python<'_>, name: &str, quiet: bool) -> PyResult<()> {
    let wanted = name.to_string();
    let code = blocking::wait(py, None, async move {
        planexec_cli::model::pull(&wanted, None, quiet).await
    })?
    .map_err(|e| errors::config(e.0))?;
    if code != 0 {
        return Err(errors::config(format!("pulling model `{name}` failed")));
    }
    Ok(())
}

/// The `planexec` command-line program on `argv` (the Python package's
/// console script): its exit code. The GIL is released while it runs.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    let args: Vec<String> = std::iter::once("planexec".to_string())
        .chain(argv.into_iter().skip(1))
        .collect();
    py.detach(|| planexec_cli::run(args))
}
