//! Which model serves which role.
//!
//! Each role (planner, executor, replanner, synthesizer, agent) may use its own
//! provider and model name; by default they all share one.

use std::sync::Arc;

use crate::llm::{ChatModel, Role};

/// A provider and a model name on it.
#[derive(Clone)]
pub struct ModelRef {
    pub provider: Arc<dyn ChatModel>,
    pub model: String,
}

impl std::fmt::Debug for ModelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} on {}", self.model, self.provider.describe())
    }
}

impl ModelRef {
    pub fn new(provider: Arc<dyn ChatModel>, model: impl Into<String>) -> ModelRef {
        ModelRef {
            provider,
            model: model.into(),
        }
    }
}

/// The model of each role.
#[derive(Clone)]
pub struct Models {
    planner: ModelRef,
    executor: ModelRef,
    replanner: ModelRef,
    synthesizer: ModelRef,
    agent: ModelRef,
}

impl Models {
    /// Every role on the same model.
    pub fn uniform(model: ModelRef) -> Models {
        Models {
            planner: model.clone(),
            executor: model.clone(),
            replanner: model.clone(),
            synthesizer: model.clone(),
            agent: model,
        }
    }

    pub fn set(&mut self, role: Role, model: ModelRef) {
        *self.slot(role) = model;
    }

    pub fn get(&self, role: Role) -> &ModelRef {
        match role {
            Role::Planner => &self.planner,
            // A tool's model calls are the executor's to answer.
            Role::Executor | Role::Sampling => &self.executor,
            Role::Replanner => &self.replanner,
            Role::Synthesizer => &self.synthesizer,
            Role::Agent => &self.agent,
        }
    }

    fn slot(&mut self, role: Role) -> &mut ModelRef {
        match role {
            Role::Planner => &mut self.planner,
            Role::Executor | Role::Sampling => &mut self.executor,
            Role::Replanner => &mut self.replanner,
            Role::Synthesizer => &mut self.synthesizer,
            Role::Agent => &mut self.agent,
        }
    }
}
