//! Strategies: how the same core (planner, scheduler, executor, replanner,
//! synthesizer, tools, limits, ledger) is driven. A strategy is a policy over
//! that core, chosen with [`crate::RunOptions::strategy`]; [`crate::Agent`]'s
//! one loop reads it at the few points where the strategies differ.
//!
//! | strategy | planner | between tools | after the steps |
//! |---|---|---|---|
//! | `plan-execute` | once | executor model only for reasoning steps, repairs and `expected` checks | replan on failure |
//! | `replan-each-step` | once | the replanner after every step decides: keep, revise or finish | as plan-execute |
//! | `rewoo` | once, tools only, every output bound to `{{id}}` | no model at all | one solver call |
//! | `compiler` | streamed: steps start as they are parsed | as plan-execute | a joiner answers or asks to replan |
//! | `react` | none | one model sees the whole history and calls one tool per turn | the same model answers |

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a run is driven. See the module documentation for the differences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Plan once, run the DAG, replan only on a failure or an unmet `expected`.
    #[default]
    PlanExecute,
    /// After every completed step the replanner decides to finish or revise.
    ReplanEachStep,
    /// ReWOO: tool steps only, no model between tools, one solver call at the end.
    Rewoo,
    /// LLMCompiler: the plan is streamed and each step dispatched as soon as it
    /// is parsed and its dependencies are done; a joiner answers or replans.
    Compiler,
    /// The baseline: one model, the whole growing history, one tool call per turn.
    React,
}

impl Strategy {
    pub const ALL: [Strategy; 5] = [
        Strategy::PlanExecute,
        Strategy::ReplanEachStep,
        Strategy::Rewoo,
        Strategy::Compiler,
        Strategy::React,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::PlanExecute => "plan-execute",
            Strategy::ReplanEachStep => "replan-each-step",
            Strategy::Rewoo => "rewoo",
            Strategy::Compiler => "compiler",
            Strategy::React => "react",
        }
    }

    /// Parse a strategy name; the error lists the names.
    pub fn parse(name: &str) -> Result<Strategy, String> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        Strategy::ALL
            .into_iter()
            .find(|s| s.as_str() == wanted || (wanted == "llmcompiler" && *s == Strategy::Compiler))
            .ok_or_else(|| {
                format!(
                    "unknown strategy `{name}`; use one of {}",
                    Strategy::ALL.map(|s| s.as_str()).join(", ")
                )
            })
    }

    /// Whether the executor may call a model for a step (reasoning steps,
    /// repairing a failed call, checking `expected`). ReWOO's point is that no
    /// model runs between tools; in ReAct the one model sees every error itself.
    pub fn executor_uses_models(self) -> bool {
        !matches!(self, Strategy::Rewoo | Strategy::React)
    }

    /// Whether plans may only have tool steps (ReWOO: all reasoning is the solver's).
    pub fn tools_only(self) -> bool {
        self == Strategy::Rewoo
    }

    /// Whether a person can review the plan before it runs. A compiler run's
    /// steps start while the plan is still being written, and a ReAct run has
    /// no plan; the mode's per-call confirmations still apply to both.
    pub fn reviews_plan(self) -> bool {
        !matches!(self, Strategy::Compiler | Strategy::React)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::parse(s.as_str()), Ok(s));
            assert_eq!(serde_json::to_value(s).unwrap(), serde_json::json!(s.as_str()));
        }
        assert_eq!(Strategy::parse("LLMCompiler"), Ok(Strategy::Compiler));
        assert_eq!(Strategy::parse("replan_each_step"), Ok(Strategy::ReplanEachStep));
        let err = Strategy::parse("tree-of-thought").unwrap_err();
        assert!(
            err.contains("plan-execute, replan-each-step, rewoo, compiler, react"),
            "{err}"
        );
    }
}
