//! The agent: the whole plan → approve → execute → replan → synthesize loop,
//! in one readable function ([`Agent::drive`]).
//!
//! Build an [`Agent`] with a provider, tools and options, then call
//! [`Agent::run`] with a task (or [`Agent::run_plan`] with a plan you already
//! have). Every outcome, including failures, comes back as a [`RunReport`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::accounting::{Meter, Pricing};
use crate::cancel::CancelToken;
use crate::context::RunContext;
use crate::events::{Event, EventBus};
use crate::ledger::{self, Ledger};
use crate::llm::{ChatModel, Role};
use crate::models::{ModelRef, Models};
use crate::plan::{self, Plan, Step};
use crate::policy::{self, Approval, Approver, AutoApprove, ResumeOptions, RunOptions};
use crate::replanner::{self, ReplanTrigger};
use crate::report::{Clarification, PlanVersion, RunReport, RunStatus};
use crate::result::{now_ms, StepResult, StepStatus};
use crate::store::{RunEnd, RunHeader, RunStore, StepStart, StoredRun};
use crate::strategy::Strategy;
use crate::synthesizer::Joined;
use crate::tools::ToolRegistry;
use crate::{executor, planner, react, schedule, synthesizer, InflightStep, ResumeError, RunError};

/// A configured plan-and-execute agent. Cheap to share; each run has its own state.
pub struct Agent {
    models: Models,
    tools: Arc<ToolRegistry>,
    options: RunOptions,
    pricing: Pricing,
    approver: Arc<dyn Approver>,
    events: EventBus,
    store: Option<Arc<dyn RunStore>>,
    run_info: serde_json::Map<String, Value>,
}

/// Builder for [`Agent`].
pub struct AgentBuilder {
    models: Models,
    tools: Arc<ToolRegistry>,
    options: RunOptions,
    pricing: Pricing,
    approver: Arc<dyn Approver>,
    events: EventBus,
    store: Option<Arc<dyn RunStore>>,
    run_info: serde_json::Map<String, Value>,
}

impl AgentBuilder {
    /// Record `value` under `key` with every run (e.g. the CLI records its
    /// workspace, so a resume can find it again).
    pub fn run_info(mut self, key: &str, value: Value) -> Self {
        self.run_info.insert(key.to_string(), value);
        self
    }

    /// Record every run in this ledger (needed for [`Agent::resume`]).
    pub fn store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.store = Some(store);
        self
    }
    /// The run's tools: a registry, or a shared one that something else (an MCP
    /// client) keeps up to date.
    pub fn tools(mut self, tools: impl Into<Arc<ToolRegistry>>) -> Self {
        self.tools = tools.into();
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
            tools: self.tools,
            options: self.options,
            pricing: self.pricing,
            approver: self.approver,
            events: self.events,
            store: self.store,
            run_info: self.run_info,
        }
    }
}

/// The mutable record of one run as it goes.
struct RunState {
    run_id: String,
    task: String,
    started: Instant,
    /// Time spent in earlier sessions of a resumed run.
    earlier_ms: u64,
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
            earlier_ms: 0,
            plans: Vec::new(),
            records: Vec::new(),
            done: HashMap::new(),
            replans: 0,
            clarifications: Vec::new(),
        }
    }

    /// A run picked up from the ledger: its plans, finished steps, counters.
    fn restore(stored: &StoredRun) -> RunState {
        let mut run = RunState::new(&stored.task);
        run.run_id = stored.run_id.clone();
        run.earlier_ms = stored.elapsed_ms;
        run.plans = stored.plans.clone();
        run.replans = stored.replans;
        run.clarifications = stored.clarifications.clone();
        for s in &stored.steps {
            if s.result.status == StepStatus::Running {
                continue; // decided by the resume
            }
            if s.result.status.is_done() {
                run.done
                    .insert(s.result.id.clone(), s.result.output.clone().unwrap_or(Value::Null));
            }
            run.records.push(s.result.clone());
        }
        run
    }

    async fn add_plan(&mut self, ctx: &RunContext, plan: &Plan, reason: String) -> u32 {
        let version = self.plans.len() as u32 + 1;
        self.plans.push(PlanVersion {
            version,
            reason,
            plan: plan.clone(),
        });
        ctx.ledger.plan(self.plans.last().unwrap(), self.replans).await;
        ctx.events.emit(Event::PlanProposed {
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
            tools: Arc::new(ToolRegistry::new()),
            options: RunOptions::default(),
            pricing: Pricing::default(),
            approver: Arc::new(AutoApprove),
            events: EventBus::new(),
            store: None,
            run_info: Default::default(),
        }
    }

    /// The ledger runs are recorded in, if any.
    pub fn store(&self) -> Option<&Arc<dyn RunStore>> {
        self.store.as_ref()
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

    /// A run's context. `stop` is the run's own cancel token (the budget fires
    /// it); `earlier_ms` is the time earlier sessions of the run took.
    fn context(&self, ledger: Ledger, stop: CancelToken, earlier_ms: u64) -> RunContext {
        let meter = Meter::new(self.pricing.clone());
        RunContext {
            budget: crate::budget::BudgetGuard::new(self.options.budget, meter.clone(), earlier_ms, stop),
            models: self.models.clone(),
            meter,
            events: self.events.clone(),
            tools: self.tools.clone(),
            options: self.options.clone(),
            approver: self.approver.clone(),
            ledger: Arc::new(ledger),
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
                    ctx.ledger.clarifications(&run.clarifications).await;
                }
                None => rounds = self.options.max_question_rounds,
            }
        }
    }

    /// Plan a task without running it. The plan is validated.
    pub async fn plan(&self, task: &str) -> Result<Plan, RunError> {
        let mut run = RunState::new(task);
        let ctx = self.context(
            Ledger::new(None, &run.run_id, CancelToken::new(), 0, 0),
            CancelToken::new(),
            0,
        );
        self.plan_with_questions(&ctx, &mut run).await
    }

    /// Plan, approve, execute and answer a task.
    pub async fn run(&self, task: &str) -> RunReport {
        self.run_cancellable(task, None, &CancelToken::new()).await
    }

    /// Approve, execute and answer with a plan made elsewhere (e.g. a plan file).
    /// The planner is only called if a replan is needed.
    pub async fn run_plan(&self, task: &str, plan: Plan) -> RunReport {
        self.run_cancellable(task, Some(plan), &CancelToken::new()).await
    }

    /// [`Agent::run`] (or, with a plan, [`Agent::run_plan`]) that stops when `cancel`
    /// fires: running steps are dropped, finished ones kept, and the run ends `interrupted`.
    pub async fn run_cancellable(&self, task: &str, plan: Option<Plan>, cancel: &CancelToken) -> RunReport {
        let run = RunState::new(task);
        let stop = cancel.child();
        let ctx = self.context(
            Ledger::new(self.store.clone(), &run.run_id, stop.clone(), 0, 0),
            stop.clone(),
            0,
        );
        self.events.emit(Event::RunStarted {
            run_id: run.run_id.clone(),
            task: task.to_string(),
        });
        ctx.ledger
            .create(&RunHeader {
                run_id: run.run_id.clone(),
                task: task.to_string(),
                options: {
                    let mut options = self.options.to_json();
                    if let Some(obj) = options.as_object_mut() {
                        obj.extend(self.run_info.clone());
                    }
                    options
                },
                started_at: now_ms(),
            })
            .await;
        self.drive(ctx, run, Start::New(plan), &stop).await
    }

    /// Continue a run recorded in the ledger after a crash, Ctrl-C or failure.
    /// Finished steps are taken from the ledger and not run again; the plan in
    /// force, the replan count and the spend so far carry over. A step with side
    /// effects that was running when the run stopped is run again or taken as
    /// done as `options` (or the approver) decide; read-only ones run again.
    ///
    /// Errors (nothing is changed): no ledger, no such run, a run that already
    /// finished, an undecided in-flight step.
    pub async fn resume(
        &self,
        run_id: &str,
        options: &ResumeOptions,
        cancel: &CancelToken,
    ) -> Result<RunReport, ResumeError> {
        let store = self.store.clone().ok_or(ResumeError::NoStore)?;
        let stored = store
            .load_run(run_id)
            .await
            .map_err(ResumeError::Store)?
            .ok_or_else(|| ResumeError::NotFound {
                run_id: run_id.to_string(),
                store: store.describe(),
            })?;
        if !stored.status.resumable() {
            return Err(ResumeError::Finished {
                run_id: run_id.to_string(),
                status: stored.status,
            });
        }

        // Decide every in-flight step before changing anything.
        let mut decided = Vec::new();
        let mut undecided = Vec::new();
        for s in stored.in_flight() {
            let id = &s.result.id;
            let step = stored
                .plans
                .iter()
                .rev()
                .find_map(|v| v.plan.step(id).cloned())
                .unwrap_or_else(|| Step {
                    id: id.clone(),
                    description: String::new(),
                    tool: s.result.tool.clone(),
                    args: Default::default(),
                    depends_on: Vec::new(),
                    expected: None,
                });
            // Reads and other idempotent tools are simply run again.
            let safe_again = step.tool.as_deref().is_none_or(|t| self.tools.is_idempotent(t));
            let (rerun, skip) = (options.rerun_inflight.contains(id), options.skip_inflight.contains(id));
            let choice = if safe_again {
                Some(true)
            } else if rerun && skip {
                return Err(ResumeError::Conflict { step_id: id.clone() });
            } else if rerun || skip {
                Some(rerun)
            } else {
                self.approver.rerun_inflight(&step, s.result.args.as_ref()).await
            };
            match choice {
                Some(rerun) => decided.push((s.clone(), rerun)),
                None => undecided.push(InflightStep {
                    step_id: id.clone(),
                    tool: step.tool.clone(),
                    args: s.result.args.clone(),
                }),
            }
        }
        if !undecided.is_empty() {
            return Err(ResumeError::InflightUndecided {
                run_id: run_id.to_string(),
                steps: undecided,
            });
        }

        let mut run = RunState::restore(&stored);
        let stop = cancel.child();
        let last_seq = stored.steps.iter().map(|s| s.seq).max().unwrap_or(0);
        let ctx = self.context(
            Ledger::new(
                Some(store),
                run_id,
                stop.clone(),
                last_seq,
                stored.exchanges.len() as u64,
            ),
            stop.clone(),
            stored.elapsed_ms,
        );
        for x in &stored.exchanges {
            ctx.meter.add(x.role, x.tokens(), x.latency_ms, x.cost);
        }
        ctx.ledger.reopen().await;
        for (s, rerun) in decided {
            let (status, note) = if rerun {
                (
                    StepStatus::Interrupted,
                    "in flight when the run stopped; run again on resume",
                )
            } else {
                (
                    StepStatus::Skipped,
                    "in flight when the run stopped; taken as done on resume (its output is unknown)",
                )
            };
            let result = StepResult {
                status,
                error: Some(note.to_string()),
                finished_at: Some(now_ms()),
                ..s.result.clone()
            };
            ctx.ledger.step_finished(s.seq, s.plan_version, &result).await;
            if !rerun {
                run.done.insert(result.id.clone(), Value::Null);
            }
            run.records.push(result);
        }
        self.events.emit(Event::RunResumed {
            run_id: run.run_id.clone(),
            task: run.task.clone(),
            steps_done: run.done.len() as u32,
        });
        let start = match stored.plans.last() {
            None => Start::New(None),
            Some(v) => Start::Resume {
                plan: v.plan.clone(),
                version: v.version,
                approved: stored.approved_version == Some(v.version),
            },
        };
        Ok(self.drive(ctx, run, start, &stop).await)
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

    /// The whole loop. Every exit goes through `finish`, so the report is always
    /// complete. `cancel` also fires when the ledger cannot be written.
    async fn drive(&self, ctx: RunContext, mut run: RunState, start: Start, cancel: &CancelToken) -> RunReport {
        let task = run.task.clone();
        let task = task.as_str();
        // A failure caused by the budget (a model call it refused) ends the run
        // as budget_exhausted, with the budget's own reason.
        macro_rules! stop {
            ($status:expr, $plan:expr, $error:expr) => {
                return match ctx.budget.exhausted() {
                    Some(reason) => {
                        self.finish(&ctx, run, RunStatus::BudgetExhausted, $plan, None, Some(reason))
                            .await
                    }
                    None => {
                        self.finish(&ctx, run, $status, $plan, None, Some($error.to_string()))
                            .await
                    }
                }
            };
        }
        // Stopped from outside (Ctrl-C) or by a ledger that cannot be written.
        macro_rules! stopped {
            ($plan:expr) => {
                match ctx.ledger.failure() {
                    Some(e) => {
                        // Not `stop!`: a ledger that cannot be written is the
                        // problem to fix, whatever the budget says.
                        let message = ledger::failure_message(&e, &run.run_id);
                        return self
                            .finish(&ctx, run, RunStatus::Failed, $plan, None, Some(message))
                            .await;
                    }
                    None => stop!(RunStatus::Interrupted, $plan, "interrupted"),
                }
            };
        }
        // Await `$fut` unless the run is stopped first.
        macro_rules! guarded {
            ($fut:expr, $plan:expr) => {{
                let outcome = cancel.guard($fut).await;
                match outcome {
                    Some(v) => v,
                    None => stopped!($plan),
                }
            }};
        }
        if cancel.is_cancelled() {
            stopped!(None);
        }

        if let (Strategy::React, Start::New(Some(given))) = (self.options.strategy, &start) {
            stop!(
                RunStatus::Failed,
                Some(given.clone()),
                "the react strategy makes no plan, so it cannot run a given one; run the plan with another strategy (e.g. plan-execute)"
            );
        }
        if self.options.strategy == Strategy::React {
            // ReAct, the baseline: no plan. One model sees the task and everything
            // so far and calls one tool per turn; each call runs as a step of its
            // own, through the same executor, permissions and ledger. A failed
            // call goes back to the model, counted against the replan bound.
            let mut plan = Plan::new(task, Vec::new());
            let mut history = react::opening(&ctx, task);
            for record in &run.records {
                if let Some(call) = react::call_of(record) {
                    react::remember(&mut history, call, &react::result_text(&ctx, record));
                }
            }
            let mut calls = run.records.len();
            loop {
                let may_call = calls < self.options.max_steps;
                let (step, call) = match guarded!(react::turn(&ctx, &history, calls + 1, may_call), Some(plan)) {
                    Err(e) => stop!(RunStatus::Failed, Some(plan), e),
                    Ok(react::Turn::Answer(answer)) if answer.is_empty() => {
                        stop!(RunStatus::Failed, Some(plan), "the model ended without an answer")
                    }
                    Ok(react::Turn::Answer(answer)) => {
                        return self
                            .finish(&ctx, run, RunStatus::Succeeded, Some(plan), Some(answer), None)
                            .await
                    }
                    Ok(react::Turn::Unknown { call }) => {
                        let message = format!("there is no tool `{}`", call.name);
                        (None, (call, message))
                    }
                    Ok(react::Turn::Call { step, call }) => (Some(step), (call, String::new())),
                };
                calls += 1;
                let (call, mut error) = call;
                if let Some(step) = step {
                    plan.steps.push(step.clone());
                    let result = guarded!(self.execute_recorded(&ctx, &plan, 0, step, Vec::new()), Some(plan));
                    if result.succeeded() {
                        run.done
                            .insert(result.id.clone(), result.output.clone().unwrap_or(Value::Null));
                    } else {
                        error = result.error.clone().unwrap_or_else(|| "failed".to_string());
                    }
                    react::remember(&mut history, call.clone(), &react::result_text(&ctx, &result));
                    run.records.push(result);
                } else {
                    react::remember(&mut history, call.clone(), &format!("error: {error}"));
                }
                if !error.is_empty() {
                    if run.replans >= self.options.max_replans {
                        stop!(
                            RunStatus::Failed,
                            Some(plan),
                            format!(
                                "turn {calls} ({}) failed: {error}; the limit of failures a run may recover from ({}) is reached",
                                call.name, self.options.max_replans
                            )
                        );
                    }
                    run.replans += 1;
                }
            }
        }

        // 1. Plan (a resumed run has one already). With the compiler strategy the
        // plan streams in and its steps start as they arrive: `first_pass` is what they did.
        let mut first_pass: Option<schedule::DagOutcome> = None;
        let mut unreadable: Option<String> = None;
        let (mut plan, mut version, approved) = match start {
            Start::Resume {
                plan,
                version,
                approved,
            } => (plan, version, approved),
            Start::New(given) => {
                let (plan, origin) = match given {
                    Some(p) => match self.check_runnable(&p) {
                        Ok(()) => (p, "given plan"),
                        Err(e) => stop!(RunStatus::Failed, Some(p), e),
                    },
                    None if self.options.strategy == Strategy::Compiler => {
                        let (streamed, outcome) = self.plan_and_dispatch(&ctx, task, &run.done, cancel).await;
                        let streamed = match streamed {
                            Ok(streamed) => streamed,
                            Err(e) => {
                                run.records.extend(outcome.results);
                                if cancel.is_cancelled() {
                                    stopped!(None);
                                }
                                stop!(RunStatus::Failed, None, e)
                            }
                        };
                        let nothing_ran = outcome.results.is_empty() && outcome.interrupted.is_empty();
                        match streamed.plan {
                            Ok(p) => {
                                first_pass = Some(outcome);
                                (p, "initial plan (streamed)")
                            }
                            // Nothing started: plan again the ordinary way, with the errors shown.
                            Err(_) if nothing_ran => match guarded!(self.plan_with_questions(&ctx, &mut run), None) {
                                Ok(p) => (p, "initial plan"),
                                Err(e) => stop!(RunStatus::Failed, None, e),
                            },
                            Err(problem) => {
                                first_pass = Some(outcome);
                                unreadable = Some(problem);
                                let goal = streamed.goal.unwrap_or_else(|| task.to_string());
                                let partial = Plan::new(goal, streamed.dispatched);
                                (partial, "initial plan (streamed, cut short)")
                            }
                        }
                    }
                    None => match guarded!(self.plan_with_questions(&ctx, &mut run), None) {
                        Ok(p) => (p, "initial plan"),
                        Err(e) => stop!(RunStatus::Failed, None, e),
                    },
                };
                let version = run.add_plan(&ctx, &plan, origin.to_string()).await;
                (plan, version, false)
            }
        };
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
        if !approved && first_pass.is_some() {
            // Its steps started while it streamed in: nothing left to review.
            // Each call's side effects are still confirmed as the mode says.
            ctx.ledger.approved(version).await;
            self.events.emit(Event::PlanApproved { version });
        } else if !approved {
            loop {
                let approval = guarded!(self.approver.review(&plan, &check), Some(plan));
                match approval {
                    Approval::Approve => {
                        ctx.ledger.approved(version).await;
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
                        version = run.add_plan(&ctx, &plan, format!("user feedback: {feedback}")).await;
                    }
                    Approval::Edit(edited) => {
                        if let Err(e) = self.check_runnable(&edited) {
                            stop!(RunStatus::Failed, Some(edited), e);
                        }
                        plan = edited;
                        version = run.add_plan(&ctx, &plan, "edited by the user".to_string()).await;
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
        }

        // 3. Execute; on failure, replan the rest within the bound.
        let strategy = self.options.strategy;
        let dispatch = match strategy {
            // One step at a time, so the replanner sees every result before the next step.
            Strategy::ReplanEachStep => schedule::Dispatch {
                parallelism: 1,
                max_steps: 1,
            },
            _ => schedule::Dispatch::parallel(self.options.parallelism),
        };
        // Revise the plan for `$trigger` (recorded with `$reason`) and go on with
        // the revision, or stop if replanning fails or finds the task infeasible.
        macro_rules! revise {
            ($trigger:expr, $reason:expr) => {
                match guarded!(self.revise(&ctx, &mut run, &plan, $trigger, $reason), Some(plan)) {
                    Ok((revised, v)) => (plan, version) = (revised, v),
                    Err(e) => stop!(RunStatus::Failed, Some(plan), format!("replanning failed: {e}")),
                }
                if let Some(reason) = plan.infeasible.clone() {
                    stop!(
                        RunStatus::Infeasible,
                        Some(plan),
                        format!("the replanner found the task infeasible: {reason}")
                    );
                }
            };
        }
        'run: loop {
            loop {
                let outcome = match first_pass.take() {
                    // The compiler's steps already ran while the plan streamed in.
                    Some(outcome) => outcome,
                    None => {
                        let current = &plan;
                        let step_ctx = &ctx;
                        let steps = futures::stream::iter(plan.steps.clone());
                        schedule::run_steps(steps, &run.done, dispatch, cancel, |step, deps| {
                            self.execute_recorded(step_ctx, current, version, step, deps)
                        })
                        .await
                    }
                };
                let interrupted = outcome.interrupted.clone();
                let ran: Vec<String> = outcome.results.iter().map(|r| r.id.clone()).collect();
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
                    stopped!(Some(plan));
                }
                let Some(failed) = failed else {
                    // The streamed plan was cut short: plan the rest.
                    if let Some(problem) = unreadable.take() {
                        if run.replans >= self.options.max_replans {
                            stop!(
                                RunStatus::Failed,
                                Some(plan),
                                format!(
                                    "the streamed plan was cut short:\n{problem}\nand the replan limit ({}) is reached",
                                    self.options.max_replans
                                )
                            );
                        }
                        revise!(
                            ReplanTrigger::Unreadable(&problem),
                            format!("the streamed plan was cut short: {problem}")
                        );
                        continue;
                    }
                    let remaining = plan.steps.iter().any(|s| !run.done.contains_key(&s.id));
                    if strategy == Strategy::ReplanEachStep && remaining && !ran.is_empty() {
                        // Keep, revise or finish: the replanner decides after every step, within the bound.
                        if run.replans < self.options.max_replans {
                            let just_done = plan.step(&ran[0]).cloned().expect("a step that ran is in its plan");
                            let completed = run.completed(&plan);
                            let trigger = ReplanTrigger::StepDone { step: &just_done };
                            let revised =
                                match guarded!(replanner::replan(&ctx, task, &plan, &completed, trigger), Some(plan)) {
                                    Ok(revised) => revised,
                                    Err(e) => stop!(
                                        RunStatus::Failed,
                                        Some(plan),
                                        format!("replanning after step {} failed: {e}", just_done.id)
                                    ),
                                };
                            let still_to_do = |p: &Plan| -> Vec<Step> {
                                p.steps
                                    .iter()
                                    .filter(|s| !run.done.contains_key(&s.id))
                                    .cloned()
                                    .collect()
                            };
                            if still_to_do(&revised) != still_to_do(&plan) {
                                let reason = match still_to_do(&revised).is_empty() {
                                    true => format!("after step {}, the replanner found the task done", just_done.id),
                                    false => format!("revised after step {}", just_done.id),
                                };
                                version = self.record_revision(&ctx, &mut run, &revised, reason).await;
                                if let Some(reason) = revised.infeasible.clone() {
                                    stop!(
                                        RunStatus::Infeasible,
                                        Some(revised),
                                        format!("the replanner found the task infeasible: {reason}")
                                    );
                                }
                                plan = revised;
                            }
                        }
                        continue;
                    }
                    break;
                };

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
                // This revision plans all the rest, including what a cut-short stream left out.
                unreadable = None;
                let trigger = ReplanTrigger::StepFailed {
                    step: &failed_step,
                    error: &error,
                };
                let revised = match guarded!(self.revise(&ctx, &mut run, &plan, trigger, failure.clone()), Some(plan)) {
                    Ok((revised, v)) => {
                        version = v;
                        revised
                    }
                    Err(e) => stop!(
                        RunStatus::Failed,
                        Some(plan),
                        format!("{failure}; replanning failed: {e}")
                    ),
                };
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

            // 4. Answer. The compiler's joiner may instead say what is missing, and the plan is revised.
            let results = run.completed(&plan);
            let answer = if strategy == Strategy::Compiler {
                let may_replan = run.replans < self.options.max_replans;
                match guarded!(synthesizer::join(&ctx, task, &results, may_replan), Some(plan)) {
                    Ok(Joined::Answer(answer)) => Ok(answer),
                    Ok(Joined::Replan(missing)) => {
                        revise!(
                            ReplanTrigger::Unanswered(&missing),
                            format!("the joiner found the results incomplete: {missing}")
                        );
                        continue 'run;
                    }
                    Err(e) => Err(e),
                }
            } else {
                guarded!(synthesizer::synthesize(&ctx, task, &results), Some(plan))
            };
            return match answer {
                Ok(answer) => {
                    self.finish(&ctx, run, RunStatus::Succeeded, Some(plan), Some(answer), None)
                        .await
                }
                Err(e) => stop!(RunStatus::Failed, Some(plan), format!("writing the answer failed: {e}")),
            };
        }
    }

    /// Record a revised plan as a new version (counted against the replan bound).
    async fn record_revision(&self, ctx: &RunContext, run: &mut RunState, revised: &Plan, reason: String) -> u32 {
        run.replans += 1;
        let version = run.add_plan(ctx, revised, reason.clone()).await;
        self.events.emit(Event::Replanned {
            version,
            reason,
            replans: run.replans,
        });
        version
    }

    /// Ask the replanner to revise `plan`, and record the revision.
    async fn revise(
        &self,
        ctx: &RunContext,
        run: &mut RunState,
        plan: &Plan,
        trigger: ReplanTrigger<'_>,
        reason: String,
    ) -> Result<(Plan, u32), RunError> {
        let completed = run.completed(plan);
        let task = run.task.clone();
        let revised = replanner::replan(ctx, &task, plan, &completed, trigger).await?;
        let version = self.record_revision(ctx, run, &revised, reason).await;
        Ok((revised, version))
    }

    /// The compiler strategy's start: one streamed planner call, each step
    /// dispatched as soon as it is parsed and its dependencies are done.
    async fn plan_and_dispatch(
        &self,
        ctx: &RunContext,
        task: &str,
        done: &HashMap<String, Value>,
        cancel: &CancelToken,
    ) -> (Result<planner::StreamedPlan, RunError>, schedule::DagOutcome) {
        // The plan as streamed so far: what a dispatched step's executor sees.
        let partial = std::sync::Mutex::new(Plan::new(task, Vec::new()));
        let (tx, rx) = futures::channel::mpsc::unbounded::<Step>();
        let partial = &partial;
        let planning = async move {
            let on_step = |step: Step| {
                partial
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .steps
                    .push(step.clone());
                let _ = tx.unbounded_send(step);
            };
            let planned = cancel.guard(planner::plan_streaming(ctx, task, &on_step)).await;
            drop(tx); // the scheduler ends once the dispatched steps are done
            planned.unwrap_or_else(|| Err(RunError::Model(crate::llm::LlmError::Connection("interrupted".into()))))
        };
        let dispatch = schedule::Dispatch::parallel(self.options.parallelism);
        let execution = schedule::run_steps(rx, done, dispatch, cancel, |step, deps| {
            let snapshot = partial.lock().unwrap_or_else(|e| e.into_inner()).clone();
            async move { self.execute_recorded(ctx, &snapshot, 1, step, deps).await }
        });
        tokio::join!(planning, execution)
    }

    /// Run one step, recording it in the ledger: a step with side effects is
    /// recorded as started before its tool is called (so a crash leaves evidence
    /// that its effect may have happened), and every step's result is committed
    /// before the scheduler may start its dependents.
    async fn execute_recorded(
        &self,
        ctx: &RunContext,
        plan: &Plan,
        version: u32,
        step: Step,
        deps: schedule::DependencyOutputs,
    ) -> StepResult {
        if let Err(reason) = ctx.budget.check_step(&step.id) {
            return StepResult {
                error: Some(reason),
                ..StepResult::not_run(&step, StepStatus::Interrupted)
            };
        }
        let seq = ctx.ledger.next_step_seq();
        // Only a step that must not silently run twice needs its start on record.
        let needs_start = step.tool.as_deref().is_some_and(|t| !self.tools.is_idempotent(t));
        if ctx.ledger.is_enabled() && needs_start {
            let lookup = |id: &str| executor::dep_output(&deps, id);
            let args = plan::resolve_args(&step.args, &lookup).ok().map(Value::Object);
            let start = StepStart {
                seq,
                plan_version: version,
                step_id: step.id.clone(),
                tool: step.tool.clone(),
                args,
                started_at: now_ms(),
            };
            if !ctx.ledger.step_started(&start).await {
                return StepResult {
                    error: Some("not started: the ledger could not record its start".to_string()),
                    ..StepResult::not_run(&step, StepStatus::Interrupted)
                };
            }
        }
        let result = executor::execute_step(ctx, plan, step, deps).await;
        ctx.ledger.step_finished(seq, version, &result).await;
        result
    }

    async fn finish(
        &self,
        ctx: &RunContext,
        run: RunState,
        status: RunStatus,
        plan: Option<Plan>,
        answer: Option<String>,
        mut error: Option<String>,
    ) -> RunReport {
        let elapsed_ms = run.earlier_ms + run.started.elapsed().as_millis() as u64;
        let mut steps = run.records;
        crate::report::add_unrun_steps(&mut steps, plan.as_ref(), &run.plans);
        let end = RunEnd {
            status,
            answer: answer.clone(),
            error: error.clone(),
            finished_at: now_ms(),
            elapsed_ms,
        };
        if let Err(e) = ctx.ledger.finish(&end).await {
            let note = format!("the ledger could not record the end of the run: {e}");
            error = Some(match error {
                Some(err) if !err.contains(&e.message) => format!("{err}; {note}"),
                Some(err) => err,
                None => note,
            });
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
            budget: self.options.budget,
        }
    }
}

/// Where [`Agent::drive`] starts.
enum Start {
    /// A new run, with a plan made elsewhere or none (the planner makes one).
    New(Option<Plan>),
    /// A resumed run with the plan in force (already recorded as `version`).
    Resume { plan: Plan, version: u32, approved: bool },
}

/// A run id that sorts by time: `run-<unix ms, hex>-<random>`.
fn new_run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(crate::result::now_ms());
    format!("run-{:011x}-{:04x}", crate::result::now_ms(), h.finish() & 0xffff)
}
