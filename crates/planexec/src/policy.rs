//! Run policy: limits, replanning bounds and the no-progress rule, and plan approval.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use serde::{Deserialize, Serialize};

use crate::plan::{Plan, PlanErrors, PlanLimits, Step};
use crate::tools::Effect;

/// Limits and knobs of a run. The defaults are the CLI's defaults.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Most steps a plan (or a revision's new steps) may have.
    pub max_steps: usize,
    /// Most replans after failures.
    pub max_replans: u32,
    /// Most steps running at once.
    pub parallelism: usize,
    /// Time limit for one step, tool retries and model turns included.
    pub step_timeout: Duration,
    /// Retries of a tool call that failed with a retryable error.
    pub tool_retries: u32,
    /// First retry delay; doubles each retry.
    pub retry_backoff: Duration,
    /// Most executor model turns for one step.
    pub executor_max_turns: u32,
    /// Times the planner is asked again with validation errors.
    pub max_reasks: u32,
    /// Characters of one dependency's output an executor model sees.
    pub dependency_budget: usize,
    /// Characters of one step's output the synthesizer and replanner see.
    pub result_budget: usize,
    /// Which tools may run and which need the [`Approver`]'s confirmation first.
    pub mode: Mode,
    /// Irreversible tools that [`Mode::Auto`] runs without asking.
    pub allow_irreversible: Vec<String>,
    /// Hard limits on the run's tokens, cost and time.
    pub budget: crate::budget::Budget,
    /// Size caps applied to every tool's output before anyone sees it.
    pub output_caps: crate::tools::output::OutputCaps,
    /// Rounds of clarifying questions before the planner must plan with assumptions.
    pub max_question_rounds: u32,
    /// How the run is driven: plan-execute, replan-each-step, rewoo, compiler or react.
    pub strategy: crate::strategy::Strategy,
    /// The agents agent steps may name (the built-in `worker` unless set).
    pub agents: Vec<crate::agents::AgentProfile>,
    /// Replans in a row after which, with no step succeeding in between, the
    /// run stops (or falls back, see `fallback`) instead of replanning again.
    pub stall_replans: u32,
    /// What a run that stopped making progress does.
    pub fallback: Fallback,
    /// Whether the run's plans get the small-model help (worked plans and
    /// plan rewrite rules, [`crate::mends`]): `auto` for a planner model that
    /// asks for it (the embedded model).
    pub mend: crate::help::MendMode,
    /// What happens when a tool step fails: an agent step of the built-in
    /// `recover` profile tries to do the step another way first (`agent`),
    /// or the replanner revises the plan at once (`replan`).
    pub recover: Recover,
    /// Before a run says `succeeded`, the synthesizer checks what it
    /// produced (the files its task names, the answer) against the task; a
    /// run whose work does not fit is revised once, then fails. (Missing or
    /// empty files the task names are checked whatever this says.)
    pub verify: bool,
    /// How the run's prompts are laid out: one long prefix shared by every
    /// call, or compact prompts per role ([`PromptStyle`]).
    pub prompt_style: PromptStyle,
    /// Whether a run may start from the stored plan of an earlier run of the
    /// same shape instead of a planner call ([`PlanReuse`]).
    pub plan_reuse: PlanReuse,
    /// Whether an MCP server's sampling request is answered in plan mode
    /// (it is refused there unless this says so).
    pub sampling_in_plan_mode: bool,
    /// How long a run's lease on the ledger lasts without a heartbeat (renewed
    /// every third of it): a run left by a killed process can be taken over
    /// after this long.
    pub lease_ttl: Duration,
}

/// What a run does after `stall_replans` replans in a row without progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    /// End the run as failed, saying so.
    #[default]
    Stop,
    /// Hand the remaining goal to one ReAct loop (one model, every tool, the results so far).
    React,
}

impl Fallback {
    pub fn as_str(self) -> &'static str {
        match self {
            Fallback::Stop => "stop",
            Fallback::React => "react",
        }
    }

    pub fn parse(text: &str) -> Result<Fallback, String> {
        match text.trim() {
            "stop" => Ok(Fallback::Stop),
            "react" => Ok(Fallback::React),
            other => Err(format!("unknown fallback `{other}`: use stop or react")),
        }
    }
}

/// How a run's prompts are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptStyle {
    /// Shared when the planner's model keeps prompt state between calls (the
    /// embedded model: its KV cache evaluates the prefix once), compact
    /// otherwise (a hosted provider is paid per token sent).
    #[default]
    Auto,
    /// Every call starts with the same system prompt: the tool catalogue
    /// with guidance, the plan format and worked examples.
    Shared,
    /// Per role: the planner and replanner get the plan format and one-line
    /// tool signatures, every other call only its own instructions.
    Compact,
}

impl PromptStyle {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptStyle::Auto => "auto",
            PromptStyle::Shared => "shared",
            PromptStyle::Compact => "compact",
        }
    }

    pub fn parse(text: &str) -> Result<PromptStyle, String> {
        match text.trim() {
            "auto" => Ok(PromptStyle::Auto),
            "shared" => Ok(PromptStyle::Shared),
            "compact" => Ok(PromptStyle::Compact),
            other => Err(format!("unknown prompt style `{other}`: use auto, shared or compact")),
        }
    }

    /// Whether a run whose planner model `keeps_prompt_state` gets compact prompts.
    pub fn is_compact(self, keeps_prompt_state: bool) -> bool {
        match self {
            PromptStyle::Auto => !keeps_prompt_state,
            PromptStyle::Shared => false,
            PromptStyle::Compact => true,
        }
    }
}

/// Whether a run may start from a stored plan ([`crate::templates`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanReuse {
    /// Always ask the planner.
    Off,
    /// Reuse a plan only for the same task (the same words and literals).
    Exact,
    /// Reuse a plan for a task of the same shape: the same words, with
    /// other literals (file names, numbers, words an argument is) in their places.
    #[default]
    Similar,
}

impl PlanReuse {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanReuse::Off => "off",
            PlanReuse::Exact => "exact",
            PlanReuse::Similar => "similar",
        }
    }

    pub fn parse(text: &str) -> Result<PlanReuse, String> {
        match text.trim() {
            "off" => Ok(PlanReuse::Off),
            "exact" => Ok(PlanReuse::Exact),
            "similar" => Ok(PlanReuse::Similar),
            other => Err(format!(
                "unknown plan reuse setting `{other}`: use off, exact or similar"
            )),
        }
    }
}

/// What happens first when a tool step fails (after its retries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recover {
    /// An agent step of the built-in `recover` profile gets the failed call,
    /// its error and the step, and does the step with tools; only if it fails
    /// is the replanner asked.
    #[default]
    Agent,
    /// The replanner revises the plan at once.
    Replan,
}

impl Recover {
    pub fn as_str(self) -> &'static str {
        match self {
            Recover::Agent => "agent",
            Recover::Replan => "replan",
        }
    }

    pub fn parse(text: &str) -> Result<Recover, String> {
        match text.trim() {
            "agent" => Ok(Recover::Agent),
            "replan" => Ok(Recover::Replan),
            other => Err(format!("unknown recover setting `{other}`: use agent or replan")),
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_steps: 8,
            max_replans: 2,
            parallelism: 4,
            step_timeout: Duration::from_secs(120),
            tool_retries: 2,
            retry_backoff: Duration::from_millis(250),
            executor_max_turns: 4,
            max_reasks: 2,
            dependency_budget: 4000,
            result_budget: 2000,
            mode: Mode::Ask,
            allow_irreversible: Vec::new(),
            output_caps: Default::default(),
            budget: Default::default(),
            max_question_rounds: 2,
            strategy: Default::default(),
            agents: vec![crate::agents::AgentProfile::worker()],
            stall_replans: 2,
            fallback: Fallback::Stop,
            mend: crate::help::MendMode::Auto,
            recover: Recover::Agent,
            verify: false,
            prompt_style: PromptStyle::Auto,
            plan_reuse: PlanReuse::Similar,
            sampling_in_plan_mode: false,
            lease_ttl: Duration::from_secs(30),
        }
    }
}

impl RunOptions {
    /// The options as the ledger records them with a run.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "max_steps": self.max_steps,
            "max_replans": self.max_replans,
            "parallelism": self.parallelism,
            "step_timeout_ms": self.step_timeout.as_millis() as u64,
            "tool_retries": self.tool_retries,
            "executor_max_turns": self.executor_max_turns,
            "max_reasks": self.max_reasks,
            "mode": self.mode.as_str(),
            "allow_irreversible": self.allow_irreversible,
            "budget": self.budget,
            "strategy": self.strategy,
            "agents": self.agents.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            "fallback": self.fallback.as_str(),
            "mend": self.mend.as_str(),
            "recover": self.recover.as_str(),
            "verify": self.verify,
            "prompt_style": self.prompt_style.as_str(),
            "plan_reuse": self.plan_reuse.as_str(),
            "stall_replans": self.stall_replans,
        })
    }

    pub fn plan_limits(&self) -> PlanLimits {
        PlanLimits {
            max_steps: self.max_steps,
            read_only: self.mode == Mode::Plan,
            tools_only: self.strategy.profile().tools_only,
            agents: self.agent_names(),
        }
    }

    /// The names a plan's agent steps may use: the profiles, and the fallback
    /// loop when the run may fall back to it (its steps are in the plan then).
    fn agent_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.agents.iter().map(|a| a.name.clone()).collect();
        if self.fallback == Fallback::React && !names.iter().any(|n| n == crate::agents::REACT) {
            names.push(crate::agents::REACT.to_string());
        }
        names
    }

    /// The agents the planner may hand steps to: none for a strategy whose
    /// steps all call tools (rewoo), else every profile.
    pub fn plannable_agents(&self) -> &[crate::agents::AgentProfile] {
        if self.strategy.profile().tools_only {
            &[]
        } else {
            &self.agents
        }
    }

    /// The agent profile named `name`; `react` is the built-in fallback loop
    /// and `recover` the built-in recovery loop, unless a profile of that
    /// name is configured.
    pub fn agent(&self, name: &str) -> Option<crate::agents::AgentProfile> {
        use crate::agents::{AgentProfile, REACT, RECOVER};
        let configured = self.agents.iter().find(|a| a.name == name).cloned();
        configured.or_else(|| match name {
            REACT => Some(AgentProfile::fallback(self.max_steps)),
            RECOVER => Some(AgentProfile::recovery()),
            _ => None,
        })
    }

    /// What the runtime does before a call of `tool` whose effect is `effect`.
    /// This is the one place the modes are decided, and the executor asks it
    /// for every call, including calls a model repaired.
    pub fn permission(&self, tool: &str, effect: Effect) -> Permission {
        match (self.mode, effect) {
            (_, Effect::ReadOnly) => Permission::Run,
            (Mode::Plan, _) => Permission::Refuse,
            (Mode::Ask, _) => Permission::Confirm,
            (Mode::Auto, Effect::Irreversible) if !self.allow_irreversible.iter().any(|t| t == tool) => {
                Permission::Confirm
            }
            (Mode::Auto, _) => Permission::Run,
        }
    }
}

/// How much a run may do without a person: the runtime enforces it, whatever
/// the plan says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Only read-only tools run; plans using others are refused.
    Plan,
    /// Every step with side effects is confirmed before it runs.
    #[default]
    Ask,
    /// Steps run without asking, except irreversible ones not explicitly allowed.
    Auto,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Ask => "ask",
            Mode::Auto => "auto",
        }
    }

    pub fn parse(text: &str) -> Result<Mode, String> {
        match text.trim() {
            "plan" => Ok(Mode::Plan),
            "ask" => Ok(Mode::Ask),
            "auto" => Ok(Mode::Auto),
            other => Err(format!("unknown mode `{other}`: use plan, ask or auto")),
        }
    }
}

/// What [`RunOptions::permission`] decided for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Run,
    Confirm,
    Refuse,
}

/// Resolves a step's `{{sN}}` references against finished steps' outputs.
pub type ArgResolver<'r> = &'r dyn Fn(&Map<String, Value>) -> Map<String, Value>;

/// Whether a revised plan just repeats the step that failed: same tool and same
/// resolved arguments (and, for a reasoning step, the same description). Returns
/// the repeating step's id.
pub fn repeats_failed_step<'a>(
    failed: &Step,
    failed_args: &Map<String, Value>,
    revised: &'a [Step],
    resolve: ArgResolver<'_>,
) -> Option<&'a Step> {
    revised.iter().find(|s| {
        s.tool == failed.tool
            && s.agent == failed.agent
            && &resolve(&s.args) == failed_args
            && (failed.tool.is_some() || s.description.trim() == failed.description.trim())
    })
}

/// A person's (or a program's) answer to a proposed plan.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    Approve,
    Reject,
    /// Revise the plan with this feedback, then ask again.
    Feedback(String),
    /// Use this plan instead (it is validated again).
    Edit(Plan),
}

/// Validates a plan against the run's tools and limits (given to approvers that edit plans).
pub type PlanCheck<'a> = &'a (dyn Fn(&Plan) -> Result<(), PlanErrors> + Send + Sync);

/// The person (or program) in the loop: approves plans, answers clarifying
/// questions, and confirms steps with side effects.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decide on a proposed plan. `check` validates an edited plan before returning it.
    async fn review(&self, plan: &Plan, check: PlanCheck<'_>) -> Approval;

    /// Whether the person deciding is not here now: instead of asking, a run
    /// that needs a plan approved or a call confirmed pauses in the ledger
    /// (`awaiting_approval`) until someone decides (see [`crate::decisions`]).
    fn decides_later(&self) -> bool {
        false
    }

    /// Whether clarifying questions can be put to someone. When not, the planner
    /// is told to state its assumptions and plan instead of asking.
    fn can_answer_questions(&self) -> bool {
        false
    }

    /// Answers to the planner's questions, in order; `None` to let it assume.
    async fn answer_questions(&self, _questions: &[String]) -> Option<Vec<String>> {
        None
    }

    /// Confirm one tool call with side effects right before it runs, with its
    /// resolved arguments and effect class (asked as [`RunOptions::mode`] says).
    async fn confirm_step(&self, _step: &Step, _args: &Value, _effect: Effect) -> bool {
        true
    }

    /// A question a tool asks while `step` runs (an MCP server's
    /// elicitation): the answer, an object following `question.schema`, or
    /// `None` to decline. The default declines: nobody is there to answer.
    async fn elicit(&self, _step: &Step, _question: &crate::tools::asking::Question) -> Option<Value> {
        None
    }

    /// On resume: a step with side effects was running when the run stopped, so
    /// its effect may or may not have happened. `Some(true)` runs it again,
    /// `Some(false)` takes it as done; `None` (the default) cannot decide, and
    /// the resume stops and names the step.
    async fn rerun_inflight(&self, _step: &Step, _args: Option<&Value>) -> Option<bool> {
        None
    }
}

/// A set of in-flight step ids: none, all, or the ones named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StepSelection {
    #[default]
    None,
    All,
    Only(Vec<String>),
}

impl StepSelection {
    pub fn contains(&self, id: &str) -> bool {
        match self {
            StepSelection::None => false,
            StepSelection::All => true,
            StepSelection::Only(ids) => ids.iter().any(|i| i == id),
        }
    }
}

/// How a resume treats steps with side effects that were in flight when the run
/// stopped. Read-only steps are always run again; steps in neither set go to
/// [`Approver::rerun_inflight`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResumeOptions {
    /// Run these again (`--rerun-inflight`).
    pub rerun_inflight: StepSelection,
    /// Take these as done (`--skip-inflight`).
    pub skip_inflight: StepSelection,
}

/// Approves every plan and step, asks nothing (the CLI's `--yes`, and the library's default).
pub struct AutoApprove;

#[async_trait]
impl Approver for AutoApprove {
    async fn review(&self, _plan: &Plan, _check: PlanCheck<'_>) -> Approval {
        Approval::Approve
    }
}

/// Decides nothing now: a run that needs a person pauses in the ledger and the
/// process can exit (the CLI's `--approve later`, the server's default).
/// Clarifying questions are not asked: the planner states its assumptions.
pub struct ApproveLater;

#[async_trait]
impl Approver for ApproveLater {
    /// Not called: [`Approver::decides_later`] pauses the run before a review.
    async fn review(&self, _plan: &Plan, _check: PlanCheck<'_>) -> Approval {
        Approval::Reject
    }

    fn decides_later(&self) -> bool {
        true
    }

    async fn confirm_step(&self, _step: &Step, _args: &Value, _effect: Effect) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, description: &str, agent: Option<&str>) -> Step {
        serde_json::from_value(serde_json::json!({
            "id": id, "description": description, "agent": agent, "depends_on": []
        }))
        .unwrap()
    }

    #[test]
    fn a_step_of_another_kind_is_not_a_repeat() {
        let failed = step("s1", "find the supplier", Some("worker"));
        let same = |args: &Map<String, Value>| args.clone();
        let as_reasoning = [step("s2", "find the supplier", None)];
        assert!(repeats_failed_step(&failed, &Map::new(), &as_reasoning, &same).is_none());
        let again = [step("s2", "find the supplier", Some("worker"))];
        assert_eq!(
            repeats_failed_step(&failed, &Map::new(), &again, &same).map(|s| s.id.as_str()),
            Some("s2")
        );
    }
}
