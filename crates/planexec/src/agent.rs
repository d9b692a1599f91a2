//! The agent: what a library user builds and calls. It holds the provider,
//! tools, options, approver, events and ledger; each call makes a [`Run`] and
//! hands it to its strategy (see [`crate::strategy`]), which drives it from
//! plan to answer.
//!
//! Build an [`Agent`] with a provider, tools and options, then call
//! [`Agent::run`] with a task (or [`Agent::run_plan`] with a plan you already
//! have). Every outcome, including failures, comes back as a [`RunReport`].

use std::sync::Arc;

use serde_json::Value;

use crate::accounting::{Meter, Pricing};
use crate::cancel::CancelToken;
use crate::context::{Control, ModelCalls, Recording, RunContext, Setting};
use crate::decisions::{self, DecisionError};
use crate::events::{Event, EventBus};
use crate::help::PlanHelp;
use crate::ledger::Ledger;
use crate::llm::{ChatModel, LlmError, Prepared, Role};
use crate::models::{ModelRef, Models};
use crate::plan::{Plan, Step};
use crate::planner;
use crate::policy::{Approver, AutoApprove, ResumeOptions, RunOptions};
use crate::report::RunReport;
use crate::result::{now_ms, StepResult};
use crate::run::owner::{Claim, Owner};
use crate::run::resume::{self, ResumeError};
use crate::run::{new_run_id, Run, RunError, Start};
use crate::store::{RunHeader, RunStore, Waiting, WaitingCall};
use crate::strategy::{self, Drive};
use crate::tools::ToolRegistry;

/// A run to make on a durable engine ([`Agent::run_on`]).
pub struct EngineRun {
    /// The run's id: the engine's key for it, the same on every replay.
    pub run_id: String,
    pub task: String,
    /// A plan made elsewhere; `None`: the planner makes one.
    pub plan: Option<Plan>,
    pub engine: Arc<dyn crate::engine::RunEngine>,
    /// Who reviews the plan and confirms calls; `None`: the agent's approver.
    pub approver: Option<Arc<dyn Approver>>,
}

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
    help: Arc<dyn PlanHelp>,
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
    help: Arc<dyn PlanHelp>,
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
    /// The model-specific help runs get when their `mend` setting gives it
    /// (default: planexec's own, [`crate::mends::SmallModelHelp`]).
    pub fn plan_help(mut self, help: Arc<dyn PlanHelp>) -> Self {
        self.help = help;
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
            help: self.help,
        }
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
            help: Arc::new(crate::mends::SmallModelHelp),
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

    /// A run's context. `stop` is the run's own cancel token (the budget and
    /// the ledger fire it); `earlier_ms` is the time earlier sessions of the run took.
    fn context(&self, ledger: Ledger, stop: CancelToken, earlier_ms: u64) -> RunContext {
        let meter = Meter::new(self.pricing.clone());
        let ledger = Arc::new(ledger);
        RunContext {
            calls: ModelCalls {
                budget: crate::budget::BudgetGuard::new(self.options.budget, meter.clone(), earlier_ms, stop.clone()),
                models: self.models.clone(),
                meter,
                events: self.events.clone(),
                ledger: ledger.clone(),
                engine: None,
            },
            setting: Setting {
                tools: self.tools.clone(),
                options: self.options.clone(),
                help: self.wants_help().then(|| self.help.clone()),
                compact: self.compact_prompts(),
                engine: None,
                task: String::new(),
            },
            recording: Recording {
                events: self.events.clone(),
                ledger,
                journal: Default::default(),
            },
            control: Control {
                stop,
                inbox: Default::default(),
                approver: self.approver.clone(),
            },
        }
    }

    /// Whether this agent's runs get its plan help: as the `mend` setting
    /// says, for the planner's model.
    fn wants_help(&self) -> bool {
        let wants = self.models.get(Role::Planner).provider.wants_plan_help();
        self.options.mend.applies(wants)
    }

    /// Whether this agent's runs get compact prompts: as the `prompt_style`
    /// setting says, for the planner's model.
    fn compact_prompts(&self) -> bool {
        let keeps = self.models.get(Role::Planner).provider.keeps_prompt_state();
        self.options.prompt_style.is_compact(keeps)
    }

    /// Evaluate the system prompt every call of this agent's runs starts
    /// with (its tools, mode and agent profiles) on each of its models that
    /// keep prompt state, and keep that state: the embedded model saves it
    /// on disk, so the first call of the next run, in this process or
    /// another, starts from it instead of evaluating it. Providers that keep
    /// nothing do nothing. What the models kept, added up.
    pub async fn prepare(&self) -> Result<Prepared, LlmError> {
        let system = if self.compact_prompts() {
            crate::prompt::compact::planning_system(&self.tools, &self.options)
        } else {
            crate::prompt::system_prompt(&self.tools, &self.options)
        };
        let mut providers: Vec<&Arc<dyn ChatModel>> = Vec::new();
        for role in [Role::Planner, Role::Executor, Role::Replanner, Role::Synthesizer] {
            let provider = &self.models.get(role).provider;
            if !providers.iter().any(|p| Arc::ptr_eq(p, provider)) {
                providers.push(provider);
            }
        }
        let mut total = Prepared::default();
        for provider in providers {
            let prepared = provider.prepare(&system).await?;
            total.kept_tokens += prepared.kept_tokens;
            total.evaluated_tokens += prepared.evaluated_tokens;
        }
        Ok(total)
    }

    /// Plan a task without running it. The plan is validated.
    pub async fn plan(&self, task: &str) -> Result<Plan, RunError> {
        let run_id = new_run_id();
        let ctx = self.context(
            Ledger::new(None, &run_id, CancelToken::new(), 0, 0),
            CancelToken::new(),
            0,
        );
        planner::plan_with_questions(&ctx, task, &mut Vec::new())
            .await
            .map(|planned| planned.plan)
    }

    /// Run one step of `plan` (its version `version`) on its own, given its
    /// dependencies' outputs: what a worker does with a step a durable engine
    /// sends it. The step is executed as in a run (the mode's permission,
    /// retries, recovery of a failed call, an agent step's loop), but nothing
    /// is written to a ledger and no decision waits: the agent's approver
    /// decides at once. The result says what happened; the usage is the
    /// model calls the step made (for the run to count).
    pub async fn run_step(
        &self,
        plan: &Plan,
        version: u32,
        step: &Step,
        deps: crate::schedule::DependencyOutputs,
        cancel: &CancelToken,
    ) -> (StepResult, crate::accounting::Usage) {
        let stop = cancel.child();
        let ctx = self.context(Ledger::new(None, &new_run_id(), stop.clone(), 0, 0), stop, 0);
        let result = crate::executor::run_step(&ctx, plan, version, step.clone(), deps).await;
        (result, ctx.calls.meter.snapshot())
    }

    /// Whether running `step` twice could do twice what it does (a call that
    /// is not idempotent, an agent step): such a step's start is recorded
    /// before it runs, and one found started and unfinished after a crash is
    /// not run again blindly.
    pub fn must_not_repeat(&self, step: &Step) -> bool {
        crate::executor::must_not_repeat(&self.tools, step)
    }

    /// The call a person must confirm before `step` runs under this agent's
    /// mode, given its dependencies' outputs, if any: a tool step's call
    /// (arguments resolved as far as they can be), or for an agent step the
    /// step itself when its profile may call a tool the mode would confirm.
    /// A durable engine asks for this before it sends the step to a worker,
    /// where nobody is there to confirm it.
    pub fn confirmation_for(&self, step: &Step, deps: &crate::schedule::DependencyOutputs) -> Option<WaitingCall> {
        let confirms = |name: &str, args: &Value| {
            self.tools.get(name).is_some_and(|entry| {
                self.options.permission(name, entry.effect(args)) == crate::policy::Permission::Confirm
            })
        };
        match step.kind() {
            crate::plan::StepKind::Tool(tool) => {
                let lookup = |id: &str| crate::executor::dep_output(deps, id);
                let args = crate::plan::resolve_args(&step.args, &lookup)
                    .map(Value::Object)
                    .unwrap_or_else(|_| Value::Object(step.args.clone()));
                confirms(tool, &args).then(|| WaitingCall {
                    step_id: step.id.clone(),
                    tool: tool.to_string(),
                    args,
                })
            }
            crate::plan::StepKind::Agent(name) => {
                let profile = self.options.agents.iter().find(|a| a.name == name)?;
                let mut tools = self.tools.names().into_iter().filter(|t| profile.allows(t));
                tools.any(|t| confirms(&t, &Value::Null)).then(|| WaitingCall {
                    step_id: step.id.clone(),
                    tool: format!("agent {name}"),
                    args: serde_json::json!({ "task": step.description }),
                })
            }
            crate::plan::StepKind::Reasoning => None,
        }
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
        self.run_driven(strategy::driver(self.options.strategy), task, plan, cancel)
            .await
    }

    /// A new run driven by `driver`.
    pub(crate) async fn run_driven(
        &self,
        driver: &dyn Drive,
        task: &str,
        plan: Option<Plan>,
        cancel: &CancelToken,
    ) -> RunReport {
        if plan.is_some() {
            // No planner call comes first to evaluate the system prompt: the
            // first step's model call would, inside the step's time limit.
            if let Some(Err(e)) = cancel.guard(self.prepare()).await {
                tracing::warn!(error = %e, "the model could not prepare the system prompt; the first call will");
            }
        }
        let run_id = new_run_id();
        let stop = cancel.child();
        let ledger = Ledger::new(self.store.clone(), &run_id, stop.clone(), 0, 0);
        let ctx = self.context(ledger, stop, 0);
        self.start_record(&ctx, &run_id, task, &self.options).await;
        let owner = match &self.store {
            Some(store) => self.claim(store, &run_id, &ctx.control, 0).await.ok().flatten(),
            None => None,
        };
        let mut run = Run::new(ctx, run_id, task);
        run.owner = owner;
        let outcome = strategy::drive(driver, &mut run, Start::New(plan)).await;
        run.finish(outcome).await
    }

    /// Announce a new run and create its record in the ledger.
    async fn start_record(&self, ctx: &RunContext, run_id: &str, task: &str, options: &RunOptions) {
        self.events.emit(Event::RunStarted {
            run_id: run_id.to_string(),
            task: task.to_string(),
        });
        let mut recorded = options.to_json();
        if let Some(obj) = recorded.as_object_mut() {
            obj.extend(self.run_info.clone());
        }
        let header = RunHeader {
            run_id: run_id.to_string(),
            task: task.to_string(),
            options: recorded,
            started_at: now_ms(),
        };
        ctx.recording.ledger.create(&header).await;
    }

    /// Run a task on a durable engine ([`crate::engine`]) as run `run_id`:
    /// the same loop as [`Agent::run`], with the run's model calls kept by
    /// the engine and its passes run by it, and `approver` (if given) in
    /// place of the agent's. Called again with the same id after a crash,
    /// on an engine that replays, it makes the same run: the ledger's record
    /// of the run is written again from the start (its rows are the
    /// engine's, replayed). No fallback loop runs (its calls would be
    /// neither kept nor replayable); a strategy the engine cannot drive is
    /// an error, before anything is recorded.
    pub async fn run_on(&self, on: EngineRun) -> Result<RunReport, String> {
        if let Some(why) = crate::engine::unsupported(self.options.strategy) {
            return Err(why);
        }
        if let Some(store) = &self.store {
            store.delete_run(&on.run_id).await.map_err(|e| e.to_string())?;
        }
        let stop = CancelToken::new();
        let ledger = Ledger::new(self.store.clone(), &on.run_id, stop.clone(), 0, 0);
        let mut ctx = self.context(ledger, stop, 0);
        ctx.setting.options.fallback = crate::policy::Fallback::Stop;
        ctx.setting.engine = Some(on.engine.clone());
        ctx.calls.engine = Some(on.engine);
        if let Some(approver) = on.approver {
            ctx.control.approver = approver;
        }
        let options = ctx.setting.options.clone();
        self.start_record(&ctx, &on.run_id, &on.task, &options).await;
        let mut run = Run::new(ctx, on.run_id, &on.task);
        let driver = strategy::driver(self.options.strategy);
        let outcome = strategy::drive(driver, &mut run, Start::New(on.plan)).await;
        Ok(run.finish(outcome).await)
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
        // Calls approved while others of their pass still wait run now;
        // with nothing decided, there is nothing to go on with.
        if let Some(waits) = crate::decisions::undecided(&stored) {
            return Err(ResumeError::AwaitingApproval {
                run_id: run_id.to_string(),
                waits: waits.describe(),
            });
        }
        let stop = cancel.child();
        // Agent steps' inner calls share the sequence with the steps.
        let last_seq = stored
            .steps
            .iter()
            .chain(&stored.calls)
            .map(|s| s.seq)
            .max()
            .unwrap_or(0);
        let exchanges = stored.exchanges.len() as u64;
        let ledger = Ledger::new(Some(store.clone()), run_id, stop.clone(), last_seq, exchanges);
        let ctx = self.context(ledger, stop, stored.elapsed_ms);
        let seen = stored.decisions.iter().map(|d| d.seq).max().unwrap_or(0);
        // One owner at a time: taken before anything changes, given back if the resume does not start.
        let owner = self.claim(&store, run_id, &ctx.control, seen).await?;
        // Decide every in-flight step before changing anything.
        let decided = match resume::decide_inflight(&stored, &self.tools, self.approver.as_ref(), options).await {
            Ok(decided) => decided,
            Err(e) => {
                if let Some(owner) = owner {
                    owner.release().await;
                }
                return Err(e);
            }
        };
        for (seq, message) in crate::decisions::pending_steers(&stored.decisions) {
            ctx.control.inbox.steer(seq, message);
        }
        ctx.control
            .inbox
            .approve_calls(crate::decisions::approved_calls(&stored.decisions));
        ctx.control
            .inbox
            .give_answers(crate::decisions::given_answers(&stored.decisions));
        for x in &stored.exchanges {
            ctx.calls.meter.add(x.role, x.tokens(), x.latency_ms, x.cost);
        }
        ctx.recording.ledger.reopen().await;
        if stored.waiting.is_some() {
            // Resumed with calls approved while others of their wave still wait.
            ctx.recording.ledger.clear_waiting().await;
        }
        let mut run = Run::restore(ctx, &stored);
        run.owner = owner;
        run.ctx.recording.journal.load(stored.calls.iter().map(|c| &c.result));
        resume::settle_inflight(&mut run, decided).await;
        self.events.emit(Event::RunResumed {
            run_id: run.id.clone(),
            task: run.task.clone(),
            steps_done: run.done.len() as u32,
        });
        let driver = strategy::driver(self.options.strategy);
        let outcome = strategy::drive(driver, &mut run, resume::start_of(&stored)).await;
        Ok(run.finish(outcome).await)
    }

    /// Take the run's lease for this process, with a heartbeat that renews it
    /// and feeds the run's inbox. `Ok(None)` when the ledger cannot say (the
    /// run goes on without a lease: the ledger's own write errors stop it).
    async fn claim(
        &self,
        store: &Arc<dyn RunStore>,
        run_id: &str,
        control: &Control,
        seen: u64,
    ) -> Result<Option<Owner>, ResumeError> {
        let claim = Claim {
            store: store.clone(),
            run_id: run_id.to_string(),
            ttl: self.options.lease_ttl,
            inbox: control.inbox.clone(),
            stop: control.stop.clone(),
            seen,
        };
        match Owner::take(claim).await {
            Ok(Ok(owner)) => Ok(Some(owner)),
            Ok(Err(holder)) => Err(ResumeError::Owned {
                run_id: run_id.to_string(),
                owner: holder.owner,
                expires_in_s: holder.expires_at.saturating_sub(now_ms()).div_ceil(1000),
            }),
            Err(e) => {
                tracing::warn!("could not take the lease on run {run_id}: {e}");
                Ok(None)
            }
        }
    }

    fn ledger(&self) -> Result<&dyn RunStore, DecisionError> {
        self.store.as_deref().ok_or(DecisionError::NoStore)
    }

    /// Approve what a paused run waits for (its plan, or the call of `step`);
    /// [`Agent::resume`] then continues it. `by` is recorded with the decision.
    pub async fn approve(&self, run_id: &str, step: Option<&str>, by: &str) -> Result<Waiting, DecisionError> {
        decisions::approve(self.ledger()?, run_id, step, by).await
    }

    /// Reject what a paused run waits for: it ends `rejected`, with `reason`.
    pub async fn reject(&self, run_id: &str, reason: &str, by: &str) -> Result<(), DecisionError> {
        decisions::reject(self.ledger()?, run_id, reason, by).await
    }

    /// Replace a paused run's pending plan with `plan` (validated against this
    /// agent's tools and limits); returns the new version, approved.
    pub async fn edit(&self, run_id: &str, plan: Plan, by: &str) -> Result<u32, DecisionError> {
        let limits = self.options.plan_limits();
        let check = |p: &Plan| crate::plan::validate(p, &self.tools, &limits);
        decisions::edit(self.ledger()?, run_id, plan, &check, by).await
    }

    /// Leave a steering message for a running or paused run's replanner.
    pub async fn steer(&self, run_id: &str, message: &str, by: &str) -> Result<u64, DecisionError> {
        decisions::steer(self.ledger()?, run_id, message, by).await
    }

    /// Cancel a run: a running one stops at its next heartbeat, a paused one now.
    pub async fn cancel(&self, run_id: &str, by: &str) -> Result<(), DecisionError> {
        decisions::cancel(self.ledger()?, run_id, by).await
    }
}
