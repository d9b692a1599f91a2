//! A Python function as a planexec tool.
//!
//! The Python half (`planexec.tool`) wraps each function in an object with
//! its name, description, JSON Schema and effect class, and two entry points
//! that speak JSON text: `_invoke(args)` for a plain function, and
//! `_invoke_async(args, done)` for a coroutine function, which schedules it on
//! an event loop (the caller's, for `arun`) and calls `done` when it ends.
//! Both answer `(ok, text, kind)`: the result as JSON, or the exception's
//! message and the kind of failure it is. A plain function runs on one of
//! planexec's Python threads ([`crate::threads`]), so parallel steps really run in parallel whenever the
//! function releases the GIL (I/O, `time.sleep`, native code).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use planexec::tools::ToolErrorKind;
use planexec::{Effect, Tool, ToolError};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyTuple};
use serde_json::Value;

use crate::errors::BadSettings;
use crate::threads;

/// What a Python tool call answered: ok, the text, the kind of failure.
type Outcome = (bool, String, String);

pub struct PythonTool {
    name: String,
    description: String,
    parameters: Value,
    effect: Effect,
    asynchronous: bool,
    adapter: Arc<Py<PyAny>>,
}

impl PythonTool {
    /// Read a `planexec.Tool` object's declaration.
    pub fn from_python(adapter: &Bound<'_, PyAny>) -> Result<PythonTool, BadSettings> {
        let text = |attr: &str| -> Result<String, BadSettings> {
            adapter.getattr(attr).and_then(|v| v.extract::<String>()).map_err(|e| {
                BadSettings(format!(
                    "a tool has no usable `{attr}`: {e}; make tools with @planexec.tool"
                ))
            })
        };
        let name = text("name")?;
        let parameters: Value = serde_json::from_str(&text("parameters_json")?)
            .map_err(|e| BadSettings(format!("tool `{name}`: its parameters are not a JSON Schema: {e}")))?;
        let effect = Effect::parse(&text("effect")?).map_err(|e| BadSettings(format!("tool `{name}`: {e}")))?;
        let asynchronous = adapter
            .getattr("is_async")
            .and_then(|v| v.extract::<bool>())
            .unwrap_or(false);
        Ok(PythonTool {
            description: text("description")?,
            name,
            parameters,
            effect,
            asynchronous,
            adapter: Arc::new(adapter.clone().unbind()),
        })
    }

    /// A plain function, on a Python thread.
    async fn call_sync(&self, args: String) -> Result<Outcome, String> {
        let adapter = self.adapter.clone();
        threads::call(move |py| {
            adapter
                .call_method1(py, "_invoke", (args,))
                .and_then(|r| r.extract::<Outcome>(py))
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|_| "planexec could not start a thread to call Python".to_string())?
    }

    /// A coroutine function, scheduled on an event loop; `done` is called from
    /// the loop's thread when it ends. A call dropped before then (the step
    /// timed out, the run was cancelled) cancels the coroutine: nothing of a
    /// step that no longer runs goes on running.
    async fn call_async(&self, args: String) -> Result<Outcome, String> {
        let (sender, receiver) = tokio::sync::oneshot::channel::<Outcome>();
        let sender = Arc::new(Mutex::new(Some(sender)));
        let adapter = self.adapter.clone();
        let scheduled = threads::call(move |py| {
            let done = PyCFunction::new_closure(py, None, None, move |args: &Bound<'_, PyTuple>, _kwargs| {
                let outcome: Outcome = args.extract()?;
                if let Some(sender) = sender.lock().ok().and_then(|mut s| s.take()) {
                    let _ = sender.send(outcome);
                }
                PyResult::Ok(())
            })?;
            adapter.call_method1(py, "_invoke_async", (args, done))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        let mut running = CancelOnDrop(Some(scheduled));
        let outcome = receiver.await;
        running.0 = None;
        outcome.map_err(|_| "the event loop running the tool stopped before it finished".to_string())
    }
}

/// The future of a scheduled coroutine (as `asyncio.run_coroutine_threadsafe`
/// gives it), cancelled if it is dropped still set.
struct CancelOnDrop(Option<Py<PyAny>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(future) = self.0.take() {
            threads::spawn(move |py| {
                if !future.is_none(py) {
                    let _ = future.call_method0(py, "cancel");
                }
            });
        }
    }
}

#[async_trait]
impl Tool for PythonTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn effect(&self) -> Effect {
        self.effect
    }

    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let args = args.to_string();
        let answered = if self.asynchronous {
            self.call_async(args).await
        } else {
            self.call_sync(args).await
        };
        let (ok, text, kind) = answered.map_err(ToolError::failed)?;
        if !ok {
            return Err(ToolError::new(error_kind(&kind), text));
        }
        // The Python half sends JSON; a value it could not encode comes as text.
        Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }
}

/// The kind of failure the Python half named (from the exception's class).
fn error_kind(kind: &str) -> ToolErrorKind {
    match kind {
        "invalid_args" => ToolErrorKind::InvalidArgs,
        "not_found" => ToolErrorKind::NotFound,
        "denied" => ToolErrorKind::Denied,
        "retryable" => ToolErrorKind::Retryable,
        _ => ToolErrorKind::Failed,
    }
}
