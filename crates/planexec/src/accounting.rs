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
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
    /// Input read from a prompt cache (default: a tenth of `input_per_million`, Anthropic's rate).
    #[serde(default)]
    pub cache_read_per_million: Option<f64>,
    /// Input written to a prompt cache (default: 1.25 × `input_per_million`).
    #[serde(default)]
    pub cache_write_per_million: Option<f64>,
}

impl Price {
    /// USD for one call's tokens.
    pub fn cost(&self, t: TokenUsage) -> f64 {
        let cached = t.cache_read_tokens + t.cache_write_tokens;
        let plain = t.prompt_tokens.saturating_sub(cached) as f64 * self.input_per_million;
        let read = t.cache_read_tokens as f64 * self.cache_read_per_million.unwrap_or(self.input_per_million * 0.1);
        let write = t.cache_write_tokens as f64 * self.cache_write_per_million.unwrap_or(self.input_per_million * 1.25);
        (plain + read + write + t.completion_tokens as f64 * self.output_per_million) / 1_000_000.0
    }
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
    /// Of `prompt_tokens`, read from / written to a provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// USD; `None` when no price is known for a model this role used.
    pub cost: Option<f64>,
    pub latency_ms: u64,
}

impl RoleUsage {
    /// Count one call; an unknown `cost` makes the total unknown.
    pub fn add(&mut self, tokens: TokenUsage, latency_ms: u64, cost: Option<f64>) {
        self.calls += 1;
        self.prompt_tokens += tokens.prompt_tokens;
        self.completion_tokens += tokens.completion_tokens;
        self.cache_read_tokens += tokens.cache_read_tokens;
        self.cache_write_tokens += tokens.cache_write_tokens;
        self.latency_ms += latency_ms;
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

impl RoleUsage {
    /// A tally of no calls (whose cost, so far, is known: zero).
    pub fn none() -> RoleUsage {
        RoleUsage {
            cost: Some(0.0),
            ..RoleUsage::default()
        }
    }

    /// Add another tally of the same role (calls made elsewhere).
    pub fn merge(&mut self, other: &RoleUsage) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.latency_ms += other.latency_ms;
        self.cost = match (self.cost, other.cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

/// Per-role tallies of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage(pub BTreeMap<Role, RoleUsage>);

impl Usage {
    /// Count one call of `role`; an unknown `cost` makes the role's unknown.
    pub fn count(&mut self, role: Role, tokens: TokenUsage, latency_ms: u64, cost: Option<f64>) {
        self.0
            .entry(role)
            .or_insert_with(RoleUsage::none)
            .add(tokens, latency_ms, cost);
    }

    /// Add the tallies of `other`, role by role.
    pub fn merge(&mut self, other: &Usage) {
        for (role, tally) in &other.0 {
            self.0.entry(*role).or_insert_with(RoleUsage::none).merge(tally);
        }
    }

    pub fn role(&self, role: Role) -> RoleUsage {
        self.0.get(&role).cloned().unwrap_or_default()
    }

    pub fn total(&self) -> RoleUsage {
        let mut total = RoleUsage::none();
        for u in self.0.values() {
            total.merge(u);
        }
        total
    }
}

/// Shared tally of a run's model calls.
#[derive(Clone, Default)]
pub struct Meter {
    usage: Arc<Mutex<Usage>>,
    pricing: Arc<Pricing>,
    /// The sum of every cost that is known (the usage total is unknown as soon
    /// as one call's is; a budget still counts what it can).
    known_cost: Arc<Mutex<f64>>,
}

impl Meter {
    pub fn new(pricing: Pricing) -> Meter {
        Meter {
            usage: Arc::default(),
            pricing: Arc::new(pricing),
            known_cost: Arc::default(),
        }
    }

    /// The cost of a call to `model` with these tokens, when its price is known.
    pub fn price(&self, model: &str, tokens: TokenUsage) -> Option<f64> {
        self.pricing.price_of(model).map(|p| p.cost(tokens))
    }

    /// Count a call; returns its cost when known.
    pub fn record(&self, role: Role, model: &str, tokens: TokenUsage, latency_ms: u64) -> Option<f64> {
        let cost = self.price(model, tokens);
        self.add(role, tokens, latency_ms, cost);
        cost
    }

    /// Count a call whose cost is already known (e.g. one recorded by an earlier session of the run).
    pub fn add(&self, role: Role, tokens: TokenUsage, latency_ms: u64, cost: Option<f64>) {
        self.usage.lock().unwrap().count(role, tokens, latency_ms, cost);
        if let Some(c) = cost {
            *self.known_cost.lock().unwrap() += c;
        }
    }

    /// USD of every call whose price is known.
    pub fn known_cost(&self) -> f64 {
        *self.known_cost.lock().unwrap()
    }

    /// Count the calls tallied in `other`, made elsewhere (a step a durable
    /// engine ran on a worker), so the run's usage and budget include them.
    pub fn merge(&self, other: &Usage) {
        self.usage.lock().unwrap().merge(other);
        let known: f64 = other.0.values().filter_map(|u| u.cost).sum();
        *self.known_cost.lock().unwrap() += known;
    }

    pub fn snapshot(&self) -> Usage {
        self.usage.lock().unwrap().clone()
    }
}
