//! Which strategy drives a run, and its [`Profile`]: the few questions the
//! roles ask of a strategy (may the executor call a model? must every step
//! call a tool? is the plan reviewed, streamed, revisited after each step?).
//! The roles read the profile; only `strategy/` matches on the strategy.

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

    /// What the roles ask of this strategy.
    pub fn profile(self) -> Profile {
        let plan_based = Profile {
            makes_plans: true,
            runs_models_between_tools: true,
            tools_only: false,
            reviews_plan: true,
            streams_plan: false,
            replans_after_each_step: false,
        };
        match self {
            Strategy::PlanExecute => plan_based,
            Strategy::ReplanEachStep => Profile {
                replans_after_each_step: true,
                ..plan_based
            },
            Strategy::Rewoo => Profile {
                runs_models_between_tools: false,
                tools_only: true,
                ..plan_based
            },
            Strategy::Compiler => Profile {
                reviews_plan: false,
                streams_plan: true,
                ..plan_based
            },
            Strategy::React => Profile {
                makes_plans: false,
                runs_models_between_tools: false,
                reviews_plan: false,
                ..plan_based
            },
        }
    }

    /// Whether the executor may call a model for a step (reasoning steps,
    /// repairing a failed call, checking `expected`). ReWOO's point is that no
    /// model runs between tools; in ReAct the one model sees every error itself.
    pub fn executor_uses_models(self) -> bool {
        self.profile().runs_models_between_tools
    }

    /// Whether plans may only have tool steps (ReWOO: all reasoning is the solver's).
    pub fn tools_only(self) -> bool {
        self.profile().tools_only
    }

    /// Whether a person can review the plan before it runs. A compiler run's
    /// steps start while the plan is still being written, and a ReAct run has
    /// no plan; the mode's per-call confirmations still apply to both.
    pub fn reviews_plan(self) -> bool {
        self.profile().reviews_plan
    }
}

/// What the roles ask of a strategy, as flags: the executor, the planner and
/// the policy read these instead of matching on the strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// A planner writes a plan (ReAct has none).
    pub makes_plans: bool,
    /// The executor may call a model for a step: reasoning steps, repairing a
    /// failed call, checking `expected`.
    pub runs_models_between_tools: bool,
    /// Every step must call a tool.
    pub tools_only: bool,
    /// A person may review the plan before it runs.
    pub reviews_plan: bool,
    /// The planner's reply streams in and steps start as they arrive.
    pub streams_plan: bool,
    /// One step at a time, and the replanner decides after each.
    pub replans_after_each_step: bool,
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
