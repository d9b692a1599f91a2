//! Tokens, cost and time per role.
//!
//! Every model call goes through [`Meter::record`], which adds its tokens and
//! latency to the role's tally and prices it when a [`Price`] is configured for
//! the model. The tally is what the report's `usage` shows.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::llm::{Role, TokenUsage};

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

/// Prices by model name, with an optional price for any other model.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Pricing {
    pub models: HashMap<String, Price>,
    pub default: Option<Price>,
}

impl Pricing {
    pub fn price_of(&self, model: &str) -> Option<Price> {
        self.models.get(model).copied().or(self.default)
    }
}

/// One role's tally.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleUsage {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// USD; `None` when no price is known for a model this role used.
    pub cost: Option<f64>,
    pub latency_ms: u64,
}

impl RoleUsage {
    /// Count one call; an unknown `cost` makes the total unknown.
    pub fn add(&mut self, prompt_tokens: u64, completion_tokens: u64, latency_ms: u64, cost: Option<f64>) {
        self.calls += 1;
        self.prompt_tokens += prompt_tokens;
        self.completion_tokens += completion_tokens;
        self.latency_ms += latency_ms;
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

/// Per-role tallies of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage(pub BTreeMap<Role, RoleUsage>);

impl Usage {
    pub fn role(&self, role: Role) -> RoleUsage {
        self.0.get(&role).cloned().unwrap_or_default()
    }

    pub fn total(&self) -> RoleUsage {
        let mut total = RoleUsage {
            cost: Some(0.0),
            ..RoleUsage::default()
        };
        for u in self.0.values() {
            total.calls += u.calls;
            total.prompt_tokens += u.prompt_tokens;
            total.completion_tokens += u.completion_tokens;
            total.latency_ms += u.latency_ms;
            total.cost = match (total.cost, u.cost) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
        total
    }
}

/// Shared tally of a run's model calls.
#[derive(Clone, Default)]
pub struct Meter {
    usage: Arc<Mutex<Usage>>,
    pricing: Arc<Pricing>,
}

impl Meter {
    pub fn new(pricing: Pricing) -> Meter {
        Meter {
            usage: Arc::default(),
            pricing: Arc::new(pricing),
        }
    }

    /// The cost of a call to `model` with these tokens, when its price is known.
    pub fn price(&self, model: &str, tokens: TokenUsage) -> Option<f64> {
        self.pricing.price_of(model).map(|p| {
            (tokens.prompt_tokens as f64 * p.input_per_million + tokens.completion_tokens as f64 * p.output_per_million)
                / 1_000_000.0
        })
    }

    /// Count a call; returns its cost when known.
    pub fn record(&self, role: Role, model: &str, tokens: TokenUsage, latency_ms: u64) -> Option<f64> {
        let cost = self.price(model, tokens);
        self.add(role, tokens, latency_ms, cost);
        cost
    }

    /// Count a call whose cost is already known (e.g. one recorded by an earlier session of the run).
    pub fn add(&self, role: Role, tokens: TokenUsage, latency_ms: u64, cost: Option<f64>) {
        let mut usage = self.usage.lock().unwrap();
        let entry = usage.0.entry(role).or_insert_with(|| RoleUsage {
            cost: Some(0.0),
            ..RoleUsage::default()
        });
        entry.add(tokens.prompt_tokens, tokens.completion_tokens, latency_ms, cost);
    }

    pub fn snapshot(&self) -> Usage {
        self.usage.lock().unwrap().clone()
    }
}
