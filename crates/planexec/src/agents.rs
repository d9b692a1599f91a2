//! Agent profiles: who carries out an agent step.
//!
//! An agent step is a natural-language subtask (`{"agent": "worker", ...}`)
//! that a small, bounded tool-using loop carries out, seeing only the task's
//! goal, its step and its dependencies' results. The [`AgentProfile`] it names
//! says what the planner is told about it (`description`), its system prompt
//! (`instructions`), which of the run's tools it may call (`tools`: names or
//! globs such as `fs.*`), which model runs it, and how many turns it has.
//! The built-in [`AgentProfile::worker`] may use every tool of the run.

use std::fmt;

use crate::budget::Budget;
use crate::models::ModelRef;

/// Name of the profile every run has unless configured otherwise.
pub const WORKER: &str = "worker";

/// Name of the built-in loop a run falls back to when its plan stops making
/// progress (`fallback = "react"`): every tool, as many calls as a react run.
pub const REACT: &str = "react";

/// Name of the built-in loop that recovers a failed tool step (`recover =
/// "agent"`): the failed call, its error and the step, the tools of the
/// step's kind, a few turns.
pub const RECOVER: &str = "recover";

/// A named agent that plan steps can hand a subtask to.
#[derive(Clone)]
pub struct AgentProfile {
    pub name: String,
    /// What the planner reads when it picks an agent for a step.
    pub description: String,
    /// The loop's system prompt.
    pub instructions: String,
    /// The run's tools it may call: names or globs (`*` matches any text, so
    /// `fs.*` is every tool of the MCP server `fs`, `*` every tool).
    pub tools: Vec<String>,
    /// The model its turns use (default: the run's agent-role model).
    pub model: Option<ModelRef>,
    /// Most model turns for one step, the last of which must answer.
    pub max_turns: u32,
    pub temperature: Option<f32>,
    /// What one step of this agent may spend (tokens, cost, time); the run's
    /// budget still bounds the whole run. A step that reaches a limit fails
    /// with what it spent, and the run goes on (recovery or replan).
    pub step_budget: Budget,
}

impl fmt::Debug for AgentProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentProfile")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("tools", &self.tools)
            .field("model", &self.model.as_ref().map(|m| m.model.as_str()))
            .field("max_turns", &self.max_turns)
            .field("temperature", &self.temperature)
            .field("step_budget", &self.step_budget)
            .finish()
    }
}

const DEFAULT_INSTRUCTIONS: &str = "You carry out one step of a larger plan with the tools you are given. Look before you act: list or read what you need, then do the step. Call one tool at a time and read its result. When the step is done, reply with its result only: the value, text or short summary the step asks for, in plain text, with no tool call.";

const FALLBACK_INSTRUCTIONS: &str = "A plan for this task stopped making progress; you finish the task with tools. The step says why the plan stopped and what earlier steps found. Do not repeat what failed: try another tool or other arguments. Call one tool at a time and read its result. When the task is done, reply with its answer in a few sentences and no tool call.";

const RECOVER_INSTRUCTIONS: &str = "A call of one step of a plan failed, and you do that step another way. Read the error: it often says exactly what to change (a column's real name, a file that exists, one file at a time). Call the step's tool again with corrected arguments, or look first (list or read files) if you need to. Call one tool at a time.";

impl AgentProfile {
    /// A profile with every tool of the run, 6 turns and the default instructions.
    pub fn new(name: impl Into<String>) -> AgentProfile {
        AgentProfile {
            name: name.into(),
            description: "carries out a step with tools, looking before it acts".to_string(),
            instructions: DEFAULT_INSTRUCTIONS.to_string(),
            tools: vec!["*".to_string()],
            model: None,
            max_turns: 6,
            temperature: None,
            step_budget: Budget::default(),
        }
    }

    /// The built-in `worker`: the run's read and write tools, 6 turns.
    pub fn worker() -> AgentProfile {
        AgentProfile::new(WORKER).description(
            "does a step that needs looking before acting or judgement with tools: finds which file holds something, reads and transforms what it finds, counts, filters, picks fields, then writes the result",
        )
    }

    /// The built-in `react` loop that takes over the rest of a goal when a
    /// plan stops making progress: every tool, `max_calls` calls and an answer.
    pub fn fallback(max_calls: usize) -> AgentProfile {
        AgentProfile::new(REACT)
            .description("takes over what is left of the task when the plan stopped making progress")
            .instructions(FALLBACK_INSTRUCTIONS)
            .max_turns(max_calls as u32 + 1)
    }

    /// The built-in `recover` loop, which does a failed tool step another way
    /// before the replanner is asked: 4 turns; its tools are chosen per
    /// step (see [`crate::RunOptions::recover`]).
    pub fn recovery() -> AgentProfile {
        AgentProfile::new(RECOVER)
            .description("does a tool step whose call failed another way, from the call's error")
            .instructions(RECOVER_INSTRUCTIONS)
            .max_turns(4)
    }

    pub fn description(mut self, description: impl Into<String>) -> AgentProfile {
        self.description = description.into();
        self
    }

    pub fn instructions(mut self, instructions: impl Into<String>) -> AgentProfile {
        self.instructions = instructions.into();
        self
    }

    /// The tools it may call: names or globs.
    pub fn tools<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> AgentProfile {
        self.tools = tools.into_iter().map(Into::into).collect();
        self
    }

    pub fn model(mut self, model: ModelRef) -> AgentProfile {
        self.model = Some(model);
        self
    }

    pub fn max_turns(mut self, turns: u32) -> AgentProfile {
        self.max_turns = turns.max(1);
        self
    }

    pub fn temperature(mut self, temperature: f32) -> AgentProfile {
        self.temperature = Some(temperature);
        self
    }

    /// Limits for one step of this agent: `max_tokens`, `max_cost` (USD),
    /// `max_time_ms`.
    pub fn step_budget(mut self, budget: Budget) -> AgentProfile {
        self.step_budget = budget;
        self
    }

    /// Whether it may call the tool `name`.
    pub fn allows(&self, name: &str) -> bool {
        self.tools.iter().any(|pattern| glob_matches(pattern, name))
    }
}

/// `*` matches any text (also none); everything else matches itself.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_and_servers() {
        assert!(glob_matches("*", "anything"));
        assert!(glob_matches("fs.*", "fs.read_text_file"));
        assert!(!glob_matches("fs.*", "git.status"));
        assert!(glob_matches("read_file", "read_file"));
        assert!(!glob_matches("read_file", "read_files"));
        assert!(glob_matches("*_file", "write_file"));
        assert!(glob_matches("a*b*c", "aXbYc"));
        assert!(!glob_matches("a*b*c", "aXc"));
        assert!(!glob_matches("ab*ba", "aba"), "the ends may not overlap");
        let reader = AgentProfile::new("reader").tools(["read_file", "list_dir"]);
        assert!(reader.allows("list_dir") && !reader.allows("write_file"));
        assert!(AgentProfile::worker().allows("shell"));
    }
}
