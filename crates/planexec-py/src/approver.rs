//! A Python user's approval callbacks as a planexec [`Approver`].
//!
//! The Python half passes an object with `_review(plan_json)`, answering
//! `(verdict, payload)` (`approve`, `reject` with a reason, `feedback` with
//! text, `edit` with a plan as JSON), and `_confirm(step_json, args_json,
//! effect)`, answering whether a call with side effects may run. Callbacks
//! run on planexec's Python threads: a person may take their time.

use std::sync::Arc;

use async_trait::async_trait;
use planexec::policy::PlanCheck;
use planexec::{Approval, Approver, Effect, Plan, Step};
use pyo3::prelude::*;
use serde_json::Value;

pub struct PythonApprover {
    callbacks: Arc<Py<PyAny>>,
}

impl PythonApprover {
    pub fn new(callbacks: Py<PyAny>) -> PythonApprover {
        PythonApprover {
            callbacks: Arc::new(callbacks),
        }
    }

    async fn ask<T: Send + 'static>(
        &self,
        call: impl FnOnce(Python<'_>, &Py<PyAny>) -> PyResult<T> + Send + 'static,
    ) -> Result<T, String> {
        let callbacks = self.callbacks.clone();
        crate::threads::call(move |py| call(py, &callbacks).map_err(|e| e.to_string()))
            .await
            .map_err(|e| e.to_string())?
    }
}

#[async_trait]
impl Approver for PythonApprover {
    async fn review(&self, plan: &Plan, _check: PlanCheck<'_>) -> Approval {
        let plan = serde_json::to_string(plan).unwrap_or_default();
        let answered = self
            .ask(move |py, callbacks| {
                callbacks
                    .call_method1(py, "_review", (plan,))?
                    .extract::<(String, String)>(py)
            })
            .await;
        match answered {
            Ok((verdict, payload)) => verdict_of(&verdict, payload),
            Err(error) => {
                // A callback that raised decides nothing: the plan is not approved.
                tracing::warn!("the approval callback raised: {error}");
                Approval::Reject
            }
        }
    }

    async fn confirm_step(&self, step: &Step, args: &Value, effect: Effect) -> bool {
        let step = serde_json::to_string(step).unwrap_or_default();
        let args = args.to_string();
        let effect = effect.as_str();
        self.ask(move |py, callbacks| {
            callbacks
                .call_method1(py, "_confirm", (step, args, effect))?
                .extract::<bool>(py)
        })
        .await
        .unwrap_or(false)
    }
}

fn verdict_of(verdict: &str, payload: String) -> Approval {
    match verdict {
        "approve" => Approval::Approve,
        "feedback" => Approval::Feedback(payload),
        "edit" => match serde_json::from_str::<Plan>(&payload) {
            Ok(plan) => Approval::Edit(plan),
            Err(_) => Approval::Reject,
        },
        _ => Approval::Reject,
    }
}
