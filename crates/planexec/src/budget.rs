//! Hard limits on what one run may spend: tokens, cost and wall time.
//!
//! The runtime checks the [`Budget`] before every model call (with an estimate
//! of the call's prompt, so a call that would cross the limit is not made) and
//! before every step. The first check that fails records why, and stops the
//! run through its cancel token: running steps are dropped, finished ones
//! kept, and the run ends `budget_exhausted`, resumable with a larger budget.
//! Spend and time add up across a run's sessions, since a resumed run's meter
//! is rebuilt from the ledger.

use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::accounting::Meter;
use crate::cancel::CancelToken;
use crate::llm::{ChatRequest, Message};

/// Limits of one run; `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Prompt plus completion tokens of every model call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// USD, priced with the run's [`crate::accounting::Pricing`] (calls to a
    /// model with no known price count as free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// Wall time, in milliseconds, across sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_ms: Option<u64>,
}

impl Budget {
    pub fn is_unlimited(&self) -> bool {
        self.max_tokens.is_none() && self.max_cost.is_none() && self.max_time_ms.is_none()
    }
}

/// What a run has spent, to set against its [`Budget`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    pub tokens: u64,
    pub cost: f64,
    pub time_ms: u64,
}

/// A run's budget with what it has spent so far.
pub(crate) struct BudgetGuard {
    budget: Budget,
    meter: Meter,
    started: Instant,
    earlier_ms: u64,
    stop: CancelToken,
    exhausted: Mutex<Option<String>>,
}

/// Roughly four characters a token: enough to tell whether a call would cross a limit.
fn estimate_tokens(request: &ChatRequest) -> u64 {
    let text: usize = request
        .messages
        .iter()
        .map(|m| match m {
            Message::System { content } | Message::User { content } | Message::Tool { content, .. } => content.len(),
            Message::Assistant { content, tool_calls } => {
                content.as_deref().map_or(0, str::len)
                    + tool_calls.iter().map(|c| c.arguments.to_string().len()).sum::<usize>()
            }
        })
        .sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|t| t.parameters.to_string().len() + t.description.len())
        .sum();
    let schema = request
        .response_format
        .as_ref()
        .map_or(0, |f| f.schema.to_string().len());
    ((text + tools + schema) / 4) as u64
}

impl BudgetGuard {
    pub fn new(budget: Budget, meter: Meter, earlier_ms: u64, stop: CancelToken) -> BudgetGuard {
        BudgetGuard {
            budget,
            meter,
            started: Instant::now(),
            earlier_ms,
            stop,
            exhausted: Mutex::new(None),
        }
    }

    pub fn spend(&self) -> Spend {
        let total = self.meter.snapshot().total();
        Spend {
            tokens: total.prompt_tokens + total.completion_tokens,
            cost: self.meter.known_cost(),
            time_ms: self.earlier_ms + self.started.elapsed().as_millis() as u64,
        }
    }

    /// Why the run stopped for its budget, once it has.
    pub fn exhausted(&self) -> Option<String> {
        self.exhausted.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Record the first reason and stop the run.
    fn exhaust(&self, reason: String) -> String {
        let mut slot = self.exhausted.lock().unwrap_or_else(|e| e.into_inner());
        let reason = slot.get_or_insert(reason).clone();
        drop(slot);
        self.stop.cancel();
        reason
    }

    fn time_left(&self, spend: &Spend, before: &str) -> Result<(), String> {
        match self.budget.max_time_ms {
            Some(max) if spend.time_ms >= max => Err(self.exhaust(format!(
                "the time budget ({:.1} s) is used up: {:.1} s have passed, before {before}; resume the run with a larger budget",
                max as f64 / 1000.0,
                spend.time_ms as f64 / 1000.0
            ))),
            _ => Ok(()),
        }
    }

    /// Before a model call for `what` ("the planner call", ...): would it cross a limit?
    pub fn check_call(&self, request: &ChatRequest, model: &str, what: &str) -> Result<(), String> {
        if self.budget.is_unlimited() {
            return Ok(());
        }
        if let Some(reason) = self.exhausted() {
            return Err(reason);
        }
        let spend = self.spend();
        self.time_left(&spend, what)?;
        let next = estimate_tokens(request);
        if let Some(max) = self.budget.max_tokens {
            if spend.tokens + next > max {
                return Err(self.exhaust(format!(
                    "the token budget ({}) would be exceeded by {what}: {} tokens used and about {} more needed; resume the run with a larger budget",
                    crate::text::thousands(max),
                    crate::text::thousands(spend.tokens),
                    crate::text::thousands(next)
                )));
            }
        }
        if let Some(max) = self.budget.max_cost {
            let next_cost = self
                .meter
                .price(
                    model,
                    crate::llm::TokenUsage {
                        prompt_tokens: next,
                        ..Default::default()
                    },
                )
                .unwrap_or(0.0);
            if spend.cost + next_cost > max {
                return Err(self.exhaust(format!(
                    "the cost budget (${max:.4}) would be exceeded by {what}: ${:.4} spent and about ${next_cost:.4} more needed; resume the run with a larger budget",
                    spend.cost
                )));
            }
        }
        Ok(())
    }

    /// Before a step starts: is anything already used up?
    pub fn check_step(&self, step_id: &str) -> Result<(), String> {
        if self.budget.is_unlimited() {
            return Ok(());
        }
        if let Some(reason) = self.exhausted() {
            return Err(reason);
        }
        let spend = self.spend();
        let before = format!("step {step_id}");
        self.time_left(&spend, &before)?;
        if let Some(max) = self.budget.max_tokens.filter(|max| spend.tokens >= *max) {
            return Err(self.exhaust(format!(
                "the token budget ({}) is used up: {} tokens used, before {before}; resume the run with a larger budget",
                crate::text::thousands(max),
                crate::text::thousands(spend.tokens)
            )));
        }
        if let Some(max) = self.budget.max_cost.filter(|max| spend.cost >= *max) {
            return Err(self.exhaust(format!(
                "the cost budget (${max:.4}) is used up: ${:.4} spent, before {before}; resume the run with a larger budget",
                spend.cost
            )));
        }
        Ok(())
    }

    /// What is left, for the planner and replanner; `None` without a budget.
    pub fn remaining(&self) -> Option<String> {
        if self.budget.is_unlimited() {
            return None;
        }
        let spend = self.spend();
        let mut parts = Vec::new();
        if let Some(max) = self.budget.max_tokens {
            parts.push(format!(
                "{} tokens",
                crate::text::thousands(max.saturating_sub(spend.tokens))
            ));
        }
        if let Some(max) = self.budget.max_cost {
            parts.push(format!("${:.4}", (max - spend.cost).max(0.0)));
        }
        // Time left is left out: it differs on every call, and a replayed
        // cassette must see the requests it recorded.
        if parts.is_empty() {
            return None;
        }
        Some(format!(
            "Budget left for this whole run: {}. Every step that needs a model spends from it; plan as few such steps as the task allows.",
            parts.join(", ")
        ))
    }
}
