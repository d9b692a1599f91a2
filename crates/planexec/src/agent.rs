//! The agent: the whole plan → approve → execute → replan → synthesize loop,
//! in one readable function ([`Agent::drive`]).
//!
//! Build an [`Agent`] with a provider, tools and options, then call
//! [`Agent::run`] with a task (or [`Agent::run_plan`] with a plan you already
//! have). Every outcome, including failures, comes back as a [`RunReport`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::accounting::{Meter, Pricing};
use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::events::{Event, EventBus};
use crate::llm::{ChatModel, Role};
use crate::models::{ModelRef, Models};
use crate::plan::{self, Plan, Step};
use crate::policy::{self, Approval, Approver, AutoApprove, RunOptions};
use crate::replanner::{self, ReplanTrigger};
use crate::report::{Clarification, PlanVersion, RunReport, RunStatus};
use crate::result::{StepResult, StepStatus};
use crate::tools::ToolRegistry;
use crate::{executor, planner, schedule, synthesizer, RunError};

/// A configured plan-and-execute agent. Cheap to share; each run has its own state.
pub struct Agent {
    models: Models,
    tools: Arc<ToolRegistry>,
    options: RunOptions,
    pricing: Pricing,
    approver: Arc<dyn Approver>,
    events: EventBus,
}

/// Builder for [`Agent`].
pub struct AgentBuilder {
    models: Models,
    tools: ToolRegistry,
    options: RunOptions,
    pricing: Pricing,
    approver: Arc<dyn Approver>,
    events: EventBus,
}

impl AgentBuilder {
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }
    pub fn options(mut self, options: RunOptions) -> Self {
        self.options = options;
        self
    }
    pub fn pricing(mut self, pricing: Pricing) -> Self {
        self.pricing = pricing;
        self
    }
    /// Who approves plans before they run (default: approve all).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }
    /// Use another model (or provider) for one role.
    pub fn role_model(mut self, role: Role, model: ModelRef) -> Self {
        self.models.set(role, model);
        self
    }
    /// Send events to this bus (e.g. one shared by several agents).
    pub fn events(mut self, events: EventBus) -> Self {
        self.events = events;
        self
    }
    pub fn build(self) -> Agent {
        Agent {
            models: self.models,
            tools: Arc::new(self.tools),
            options: self.options,
            pricing: self.pricing,
            approver: self.approver,
            events: self.events,
        }
    }
}

/// The mutable record of one run as it goes.
struct RunState {
    run_id: String,
    task: String,
    started: Instant,
    plans: Vec<PlanVersion>,
    records: Vec<StepResult>,
    /// Outputs of succeeded steps, by id. Such steps never run again.
    done: HashMap<String, Value>,
    replans: u32,
    clarifications: Vec<Clarification>,
}

impl RunState {
    fn new(task: &str) -> RunState {
        RunState {
            run_id: new_run_id(),
            task: task.to_string(),
            started: Instant::now(),
            plans: Vec::new(),
            records: Vec::new(),
            done: HashMap::new(),
            replans: 0,
            clarifications: Vec::new(),
        }
    }

    fn add_plan(&mut self, events: &EventBus, plan: &Plan, reason: String) -> u32 {
        let version = self.plans.len() as u32 + 1;
        self.plans.push(PlanVersion {
            version,
            reason,
            plan: plan.clone(),
        });
        events.emit(Event::PlanProposed {
            version,
            plan: plan.clone(),
        });
        version
    }

    /// Completed steps of `plan` with their outputs, in plan order.
    fn completed(&self, plan: &Plan) -> Vec<(Step, Value)> {
        plan.steps
            .iter()
            .filter_map(|s| self.done.get(&s.id).map(|v| (s.clone(), v.clone())))
            .collect()
    }
}

impl Agent {
    /// Start building an agent whose roles all use `model` on `provider`.
    pub fn builder(provider: Arc<dyn ChatModel>, model: impl Into<String>) -> AgentBuilder {
        AgentBuilder {
            models: Models::uniform(ModelRef::new(provider, model)),
            tools: ToolRegistry::new(),
            options: RunOptions::default(),
            pricing: Pricing::default(),
            approver: Arc::new(AutoApprove),
            events: EventBus::new(),
        }
    }

    /// The bus this agent's runs report to.
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    pub fn options(&self) -> &RunOptions {
        &self.options
    }

    fn context(&self) -> RunContext {
        RunContext {
            models: self.models.clone(),
            meter: Meter::new(self.pricing.clone()),
            events: self.events.clone(),
            tools: self.tools.clone(),
            options: self.options.clone(),
            approver: self.approver.clone(),
            system: crate::context::system_prompt(&self.tools),
        }
    }

    /// Plan, putting the planner's clarifying questions to the approver while it
    /// can answer them; the answers are added to the task.
    async fn plan_with_questions(&self, ctx: &RunContext, run: &mut RunState) -> Result<Plan, RunError> {
        let mut task = run.task.clone();
        let mut rounds = 0;
        loop {
            let may_ask = self.approver.can_answer_questions() && rounds < self.options.max_question_rounds;
            let plan = planner::plan(ctx, &task, may_ask).await?;
            if plan.questions.is_empty() {
                return Ok(plan);
            }
            rounds += 1;
            self.events.emit(Event::QuestionsAsked {
                questions: plan.questions.clone(),
            });
            match self.approver.answer_questions(&plan.questions).await {
                Some(answers) => {
                    task.push_str(if run.clarifications.is_empty() {
                        "\n\nClarifications:"
                    } else {
                        ""
                    });
                    for (question, answer) in plan.questions.iter().zip(answers) {
                        task.push_str(&format!("\n- Q: {question}\n  A: {answer}"));
                        run.clarifications.push(Clarification {
                            question: question.clone(),
                            answer,
                        });
                    }
                }
                None => rounds = self.options.max_question_rounds,
            }
        }
    }

    /// Plan a task without running it. The plan is validated.
    pub async fn plan(&self, task: &str) -> Result<Plan, RunError> {
        let ctx = self.context();
        let mut run = RunState::new(task);
        self.plan_with_questions(&ctx, &mut run).await
    }

    /// Plan, approve, execute and answer a task.
    pub async fn run(&self, task: &str) -> RunReport {
        self.drive(task, None, &CancelToken::new()).await
    }

    /// Approve, execute and answer with a plan made elsewhere (e.g. a plan file).
    /// The planner is only called if a replan is needed.
    pub async fn run_plan(&self, task: &str, plan: Plan) -> RunReport {
        self.drive(task, Some(plan), &CancelToken::new()).await
    }

    /// [`Agent::run`] (or, with a plan, [`Agent::run_plan`]) that stops when `cancel`
    /// fires: running steps are dropped, finished ones kept, and the run ends `interrupted`.
    pub async fn run_cancellable(&self, task: &str, plan: Option<Plan>, cancel: &CancelToken) -> RunReport {
        self.drive(task, plan, cancel).await
    }

    /// A plan from outside the planner (a file, an edit) must be valid and must not ask questions.
    fn check_runnable(&self, plan: &Plan) -> Result<(), RunError> {
        plan::validate(plan, &self.tools, &self.options.plan_limits()).map_err(RunError::InvalidPlan)?;
        if !plan.questions.is_empty() {
            return Err(RunError::InvalidPlan(plan::PlanErrors(vec![
                plan::PlanError::QuestionsNotAllowed,
            ])));
        }
        Ok(())
    }

    /// The whole loop. Every exit goes through `finish`, so the report is always complete.
    async fn drive(&self, task: &str, given: Option<Plan>, cancel: &CancelToken) -> RunReport {
        let ctx = self.context();
        let mut run = RunState::new(task);
        self.events.emit(Event::RunStarted {
            run_id: run.run_id.clone(),
            task: task.to_string(),
        });
        macro_rules! stop {
            ($status:expr, $plan:expr, $error:expr) => {
                return self.finish(&ctx, run, $status, $plan, None, Some($error.to_string()))
            };
        }
        // Await `$fut` unless the run is cancelled first.
        macro_rules! guarded {
            ($fut:expr, $plan:expr) => {{
                let outcome = cancel.guard($fut).await;
                match outcome {
                    Some(v) => v,
                    None => stop!(RunStatus::Interrupted, $plan, "interrupted"),
                }
            }};
        }

        // 1. Plan.
        let (mut plan, origin) = match given {
            Some(p) => match self.check_runnable(&p) {
                Ok(()) => (p, "given plan"),
                Err(e) => stop!(RunStatus::Failed, Some(p), e),
            },
            None => match guarded!(self.plan_with_questions(&ctx, &mut run), None) {
                Ok(p) => (p, "initial plan"),
                Err(e) => stop!(RunStatus::Failed, None, e),
            },
        };
        let mut version = run.add_plan(&self.events, &plan, origin.to_string());
        if let Some(reason) = plan.infeasible.clone() {
            stop!(
                RunStatus::Infeasible,
                Some(plan),
                format!("the planner found the task infeasible: {reason}")
            );
        }

        // 2. Approve (or revise with feedback, or take an edited plan).
        let limits = self.options.plan_limits();
        let check = |p: &Plan| plan::validate(p, &self.tools, &limits);
        loop {
            let approval = guarded!(self.approver.review(&plan, &check), Some(plan));
            match approval {
                Approval::Approve => {
                    self.events.emit(Event::PlanApproved { version });
                    break;
                }
                Approval::Reject => {
                    self.events.emit(Event::PlanRejected { version });
                    stop!(RunStatus::Rejected, Some(plan), "the plan was rejected");
                }
                Approval::Feedback(feedback) => {
                    let revised = guarded!(
                        replanner::replan(&ctx, task, &plan, &[], ReplanTrigger::Feedback(&feedback)),
                        Some(plan)
                    );
                    match revised {
                        Ok(revised) => plan = revised,
                        Err(e) => stop!(RunStatus::Failed, Some(plan), e),
                    }
                    version = run.add_plan(&self.events, &plan, format!("user feedback: {feedback}"));
                }
                Approval::Edit(edited) => {
                    if let Err(e) = self.check_runnable(&edited) {
                        stop!(RunStatus::Failed, Some(edited), e);
                    }
                    plan = edited;
                    version = run.add_plan(&self.events, &plan, "edited by the user".to_string());
                }
            }
            if let Some(reason) = plan.infeasible.clone() {
                stop!(
                    RunStatus::Infeasible,
                    Some(plan),
                    format!("the task is infeasible: {reason}")
                );
            }
        }

        // 3. Execute; on failure, replan the rest within the bound.
        loop {
            let current = &plan;
            let outcome = schedule::run_dag(current, &run.done, self.options.parallelism, cancel, |step, deps| {
                executor::execute_step(&ctx, current, step, deps)
            })
            .await;
            let interrupted = outcome.interrupted.clone();
            for r in &outcome.results {
                if r.succeeded() {
                    run.done.insert(r.id.clone(), r.output.clone().unwrap_or(Value::Null));
                }
            }
            let failed = outcome
                .failed
                .first()
                .and_then(|id| outcome.results.iter().find(|r| &r.id == id))
                .cloned();
            run.records.extend(outcome.results);
            if cancel.is_cancelled() {
                for id in interrupted {
                    let step = plan.step(&id).expect("an interrupted step is in its plan");
                    run.records.push(StepResult {
                        error: Some("interrupted".to_string()),
                        ..StepResult::not_run(step, StepStatus::Interrupted)
                    });
                }
                stop!(RunStatus::Interrupted, Some(plan), "interrupted");
            }
            let Some(failed) = failed else { break };

            let error = failed.error.clone().unwrap_or_else(|| "failed".to_string());
            let failure = format!("step {} failed: {error}", failed.id);
            if run.replans >= self.options.max_replans {
                stop!(
                    RunStatus::Failed,
                    Some(plan),
                    format!("{failure}; the replan limit ({}) is reached", self.options.max_replans)
                );
            }
            let failed_step = plan.step(&failed.id).cloned().expect("a failed step is in its plan");
            let completed = run.completed(&plan);
            let revised = guarded!(
                replanner::replan(
                    &ctx,
                    task,
                    &plan,
                    &completed,
                    ReplanTrigger::StepFailed {
                        step: &failed_step,
                        error: &error,
                    },
                ),
                Some(plan)
            );
            let revised = match revised {
                Ok(p) => p,
                Err(e) => stop!(
                    RunStatus::Failed,
                    Some(plan),
                    format!("{failure}; replanning failed: {e}")
                ),
            };
            run.replans += 1;
            version = run.add_plan(&self.events, &revised, failure.clone());
            self.events.emit(Event::Replanned {
                version,
                reason: failure.clone(),
                replans: run.replans,
            });
            if let Some(reason) = revised.infeasible.clone() {
                stop!(
                    RunStatus::Infeasible,
                    Some(revised),
                    format!("after {failure}, the replanner found the task infeasible: {reason}")
                );
            }
            // No progress: the revision runs the failed step again unchanged.
            let done = &run.done;
            let resolve = |args: &serde_json::Map<String, Value>| {
                plan::resolve_args(args, &|id: &str| done.get(id).cloned()).unwrap_or_else(|_| args.clone())
            };
            let failed_args = resolve(&failed_step.args);
            let new_steps: Vec<Step> = revised
                .steps
                .iter()
                .filter(|s| !done.contains_key(&s.id))
                .cloned()
                .collect();
            if let Some(same) = policy::repeats_failed_step(&failed_step, &failed_args, &new_steps, &resolve) {
                let reason = format!(
                    "no progress: the revised plan repeats the failed step {} unchanged as {} (same tool, same arguments)",
                    failed.id, same.id
                );
                stop!(RunStatus::Failed, Some(revised), reason);
            }
            plan = revised;
        }

        // 4. Answer.
        let results = run.completed(&plan);
        let answer = guarded!(synthesizer::synthesize(&ctx, task, &results), Some(plan));
        match answer {
            Ok(answer) => self.finish(&ctx, run, RunStatus::Succeeded, Some(plan), Some(answer), None),
            Err(e) => stop!(RunStatus::Failed, Some(plan), format!("writing the answer failed: {e}")),
        }
    }

    fn finish(
        &self,
        ctx: &RunContext,
        run: RunState,
        status: RunStatus,
        plan: Option<Plan>,
        answer: Option<String>,
        error: Option<String>,
    ) -> RunReport {
        let elapsed_ms = run.started.elapsed().as_millis() as u64;
        let mut steps = run.records;
        // Steps that never ran: pending in the final plan, superseded in earlier ones.
        let mut listed: HashSet<String> = steps.iter().map(|s| s.id.clone()).collect();
        let final_ids: HashSet<&str> = plan
            .iter()
            .flat_map(|p| p.steps.iter().map(|s| s.id.as_str()))
            .collect();
        let mut not_run = |s: &Step, status: StepStatus| {
            if listed.insert(s.id.clone()) {
                steps.push(StepResult::not_run(s, status));
            }
        };
        if let Some(p) = &plan {
            p.steps.iter().for_each(|s| not_run(s, StepStatus::Pending));
        }
        for version in &run.plans {
            for s in &version.plan.steps {
                if !final_ids.contains(s.id.as_str()) {
                    not_run(s, StepStatus::Superseded);
                }
            }
        }
        self.events.emit(Event::RunFinished {
            status: status.as_str().to_string(),
            elapsed_ms,
        });
        RunReport {
            run_id: run.run_id,
            task: run.task,
            clarifications: run.clarifications,
            status,
            plan,
            plans: run.plans,
            steps,
            replans: run.replans,
            answer,
            error,
            usage: ctx.meter.snapshot(),
            elapsed_ms,
        }
    }
}

/// A run id that sorts by time: `run-<unix ms, hex>-<random>`.
fn new_run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(crate::result::now_ms());
    format!("run-{:011x}-{:04x}", crate::result::now_ms(), h.finish() & 0xffff)
}
