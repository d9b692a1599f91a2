//! The plan's types: a [`Plan`] is a goal and a list of [`Step`]s; a step is a
//! tool call, a reasoning step or an agent step ([`StepKind`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A plan for one task: a DAG of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The task's goal in one sentence. A planner's reply without one gets
    /// the task's first line.
    #[serde(default)]
    pub goal: String,
    /// The steps, in any order; `depends_on` gives the order of execution.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Set (with `steps` empty) when the task cannot be done with the tools at hand: the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<String>,
    /// Questions for the user when the task is too ambiguous to plan (at most 3; `steps` then empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
    /// What the planner assumed where the task left something open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Unique id within the plan, e.g. `s1`.
    pub id: String,
    /// What this step does, for people and for the executor model.
    pub description: String,
    /// The tool to call, or `null` for a reasoning step done by the executor model
    /// (or an agent step, with `agent`).
    #[serde(default)]
    pub tool: Option<String>,
    /// For an agent step: the agent profile whose small tool-using loop carries
    /// the step out, seeing only the goal, this step and its dependencies'
    /// results (`tool` is then null). See [`crate::AgentProfile`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The tool's arguments. String values may contain `{{sN}}` or `{{sN.field}}`.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// Ids of the steps whose results this step needs.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// What a good result looks like; the executor model checks it when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

impl Plan {
    /// A plan of `steps` toward `goal`, with no questions or assumptions.
    pub fn new(goal: impl Into<String>, steps: Vec<Step>) -> Plan {
        Plan {
            goal: goal.into(),
            steps,
            infeasible: None,
            questions: Vec::new(),
            assumptions: Vec::new(),
        }
    }

    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    /// The plan as pretty JSON, the format users edit.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// What kind of step a [`Step`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind<'a> {
    /// A tool call, run directly with its arguments (no model).
    Tool(&'a str),
    /// A natural-language subtask carried out by a bounded tool-using loop of this agent profile.
    Agent(&'a str),
    /// One model call from the dependencies' results.
    Reasoning,
}

impl Step {
    /// A reasoning step has neither a tool nor an agent: one executor model call does it.
    pub fn is_reasoning(&self) -> bool {
        self.kind() == StepKind::Reasoning
    }

    pub fn kind(&self) -> StepKind<'_> {
        match (&self.tool, &self.agent) {
            (Some(tool), _) => StepKind::Tool(tool),
            (None, Some(agent)) => StepKind::Agent(agent),
            (None, None) => StepKind::Reasoning,
        }
    }

    /// What carries the step out, for people: the tool, `agent NAME`, or `reasoning`.
    pub fn actor(&self) -> String {
        match self.kind() {
            StepKind::Tool(tool) => tool.to_string(),
            StepKind::Agent(agent) => format!("agent {agent}"),
            StepKind::Reasoning => "reasoning".to_string(),
        }
    }
}
