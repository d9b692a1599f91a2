//! The ledger port: where runs are recorded, so they can be listed, shown,
//! exported, and resumed after a crash without redoing finished steps.
//!
//! The agent writes through [`RunStore`] as the run goes: the run's header, every
//! plan version with its reason, each step's start (for steps with side effects,
//! before the tool is called) and result (before any dependent starts), and every
//! model exchange. A store must make each call durable before it returns: that is
//! what lets a killed process leave a ledger that is consistent at every instant.
//!
//! [`MemoryStore`] keeps runs in memory (tests, embedding without a database);
//! the `planexec-store` crate records them in SQLite or PostgreSQL.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::accounting::Usage;
use crate::llm::Role;
use crate::report::{Clarification, PlanVersion, RunReport, RunStatus};
pub use crate::report::{Waiting, WaitingCall};
use crate::result::{StepResult, StepStatus};
use crate::templates::PlanTemplate;

/// What kind of failure a store hit; decides what the user is told to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreErrorKind {
    /// No space left where the ledger lives.
    Full,
    /// The ledger's file or database cannot be written.
    ReadOnly,
    /// The file is not a database, or is damaged.
    Corrupt,
    /// A database that is not a planexec ledger.
    Foreign,
    /// Written by a newer planexec than this one.
    SchemaTooNew,
    /// Cannot be reached or opened.
    Unavailable,
    Other,
}

/// A ledger failure. The message says what went wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StoreError {
    pub kind: StoreErrorKind,
    pub message: String,
}

impl StoreError {
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> StoreError {
        StoreError {
            kind,
            message: message.into(),
        }
    }
}

/// A run as it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    pub run_id: String,
    pub task: String,
    /// The run's limits and settings, for the record.
    pub options: Value,
    /// Milliseconds since the Unix epoch.
    pub started_at: u64,
}

/// How a run (or one session of a resumed run) ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEnd {
    pub status: RunStatus,
    pub answer: Option<String>,
    pub error: Option<String>,
    pub finished_at: u64,
    /// Time spent running, summed over every session of the run.
    pub elapsed_ms: u64,
}

/// A step about to run. Written before a tool with side effects is called, so
/// that a crash leaves evidence that the effect may have happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepStart {
    /// Number of this execution within the run (a step re-run on resume gets a new one).
    pub seq: u64,
    pub plan_version: u32,
    pub step_id: String,
    pub tool: Option<String>,
    /// For an agent step: its agent profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Arguments with `{{sN}}` references resolved.
    pub args: Option<Value>,
    pub started_at: u64,
}

/// One model call: what was asked and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelExchange {
    pub seq: u64,
    pub role: Role,
    /// The step an executor call worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    pub model: String,
    /// The request as sent to the provider (a serialized `ChatRequest`; no credentials).
    pub request: Value,
    /// The reply (a serialized `ChatResponse`), or `None` when the call failed.
    pub response: Option<Value>,
    pub error: Option<String>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// USD, when a price was known.
    pub cost: Option<f64>,
    pub latency_ms: u64,
    pub at: u64,
}

impl ModelExchange {
    /// The call's tokens (the ledger keeps no prompt-cache split).
    pub fn tokens(&self) -> crate::llm::TokenUsage {
        crate::llm::TokenUsage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            ..Default::default()
        }
    }
}

/// One execution of a step, as the ledger holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredStep {
    pub seq: u64,
    pub plan_version: u32,
    /// `status` is [`StepStatus::Running`] for a step that started and never finished.
    pub result: StepResult,
}

/// Everything the ledger holds about a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    pub run_id: String,
    pub task: String,
    pub options: Value,
    pub status: RunStatus,
    pub started_at: u64,
    pub updated_at: u64,
    pub finished_at: Option<u64>,
    pub elapsed_ms: u64,
    pub answer: Option<String>,
    pub error: Option<String>,
    pub replans: u32,
    /// Times the run was resumed.
    pub resumes: u32,
    /// The plan version a person (or `--yes`) approved, if any.
    pub approved_version: Option<u32>,
    pub clarifications: Vec<Clarification>,
    pub plans: Vec<PlanVersion>,
    /// Step executions in the order they were started.
    pub steps: Vec<StoredStep>,
    /// Agent steps' inner tool calls (ids `<step>.<n>`), in the order they were started.
    #[serde(default)]
    pub calls: Vec<StoredStep>,
    pub exchanges: Vec<ModelExchange>,
    /// What the run waits for while it is [`RunStatus::AwaitingApproval`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// Approvals, rejections, edits, steering and cancels, in the order they were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
    /// The process executing the run, if one holds it (or held it and died).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
}

impl StoredRun {
    /// Tokens, cost and time per role, from the recorded exchanges.
    pub fn usage(&self) -> Usage {
        let mut usage = Usage::default();
        for x in &self.exchanges {
            usage.count(x.role, x.tokens(), x.latency_ms, x.cost);
        }
        usage
    }

    /// Move the rows of agent steps' inner calls from `steps` to `calls`
    /// (a store keeps both kinds of execution in one table; ids tell them apart).
    pub fn separate_calls(&mut self) {
        let (calls, steps) = std::mem::take(&mut self.steps)
            .into_iter()
            .partition(|s| s.result.is_inner_call());
        self.steps = steps;
        self.calls.extend(calls);
    }

    /// Steps and inner calls that started and never finished: in flight when the process stopped.
    pub fn in_flight(&self) -> Vec<&StoredStep> {
        let all = || self.steps.iter().chain(&self.calls);
        let settled: std::collections::HashSet<&str> = all()
            .filter(|s| s.result.status.is_done())
            .map(|s| s.result.id.as_str())
            .collect();
        all()
            .filter(|s| s.result.status == StepStatus::Running && !settled.contains(s.result.id.as_str()))
            .collect()
    }

    /// The run as a [`RunReport`]: the final plan, every execution, steps that
    /// never ran as pending or superseded.
    pub fn report(&self) -> RunReport {
        let plan = self.plans.last().map(|v| v.plan.clone());
        let mut steps: Vec<StepResult> = self.steps.iter().map(|s| s.result.clone()).collect();
        // Each agent step's execution gets its inner calls (those after its own start).
        for call in &self.calls {
            let owner = crate::result::step_of_inner_call(&call.result.id);
            let execution = self
                .steps
                .iter()
                .zip(steps.iter_mut())
                .filter(|(s, _)| s.result.id == owner && s.seq < call.seq)
                .last();
            if let Some((_, step)) = execution {
                if !step.calls.iter().any(|c| c.id == call.result.id) {
                    step.calls.push(call.result.clone());
                }
            }
        }
        crate::report::add_unrun_steps(&mut steps, plan.as_ref(), &self.plans);
        RunReport {
            fell_back: crate::report::fallback_reason(&self.plans),
            run_id: self.run_id.clone(),
            task: self.task.clone(),
            clarifications: self.clarifications.clone(),
            status: self.status,
            plan,
            plans: self.plans.clone(),
            steps,
            replans: self.replans,
            answer: self.answer.clone(),
            error: self.error.clone(),
            usage: self.usage(),
            elapsed_ms: self.elapsed_ms,
            budget: self
                .options
                .get("budget")
                .and_then(|b| serde_json::from_value(b.clone()).ok())
                .unwrap_or_default(),
            waiting: self.waiting.clone(),
        }
    }
}

/// One decision about a run, as the ledger keeps it (append-only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Its number within the run, given by the store (1, 2, …).
    #[serde(default)]
    pub seq: u64,
    /// Who decided: a user name, `api`, or the token's holder.
    pub by: String,
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    #[serde(flatten)]
    pub action: Action,
}

/// What was decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// The plan version (and, for a step, that call with these arguments) may run.
    Approve {
        version: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args: Option<Value>,
    },
    /// The run ends `rejected`, for this reason.
    Reject { reason: String },
    /// A person's plan replaced the pending one as this version (and is approved).
    Edit { version: u32 },
    /// A message for the replanner's next decision point.
    Steer { message: String },
    /// The run read steering message `steer` and revised its plan to `version`.
    SteerApplied { steer: u64, version: u32 },
    /// Stop the run (it ends `interrupted` and can be resumed).
    Cancel,
    /// A question a tool asked while step `step` ran (an MCP server's
    /// elicitation), and the answer given (`None`: declined, or nobody could answer).
    Answer {
        step: String,
        question: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<Value>,
    },
}

impl Decision {
    pub fn new(by: &str, action: Action) -> Decision {
        Decision {
            seq: 0,
            by: by.to_string(),
            at: crate::result::now_ms(),
            action,
        }
    }
}

/// The process executing a run, until `expires_at` (ms since the epoch)
/// unless its heartbeat renews it. A lease that expired was left by a process
/// that died and may be taken over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lease {
    pub owner: String,
    pub expires_at: u64,
}

/// A line of `planexec runs list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: String,
    pub task: String,
    pub status: RunStatus,
    pub started_at: u64,
    pub updated_at: u64,
    pub replans: u32,
    /// Steps that succeeded (or were taken as done on resume).
    pub steps_done: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Which runs to list: newest first, optionally of one status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFilter {
    pub status: Option<RunStatus>,
    /// At most this many (all when `None`).
    pub limit: Option<u32>,
}

/// A run ledger. Every write must be durable when it returns.
#[async_trait]
pub trait RunStore: Send + Sync {
    /// Where the ledger is, for messages (e.g. `sqlite:/home/me/.local/share/planexec/ledger.db`).
    fn describe(&self) -> String;
    async fn create_run(&self, run: &RunHeader) -> Result<(), StoreError>;
    /// A new plan version; `replans` is the run's replan count after it.
    async fn add_plan(&self, run_id: &str, version: &PlanVersion, replans: u32) -> Result<(), StoreError>;
    async fn approve_plan(&self, run_id: &str, version: u32) -> Result<(), StoreError>;
    async fn set_clarifications(&self, run_id: &str, clarifications: &[Clarification]) -> Result<(), StoreError>;
    async fn step_started(&self, run_id: &str, start: &StepStart) -> Result<(), StoreError>;
    /// The outcome of execution `seq` (inserted, or replacing its start record).
    async fn step_finished(
        &self,
        run_id: &str,
        seq: u64,
        plan_version: u32,
        result: &StepResult,
    ) -> Result<(), StoreError>;
    async fn record_exchange(&self, run_id: &str, exchange: &ModelExchange) -> Result<(), StoreError>;
    async fn finish_run(&self, run_id: &str, end: &RunEnd) -> Result<(), StoreError>;
    /// Mark a run as running again for a resume.
    async fn reopen_run(&self, run_id: &str) -> Result<(), StoreError>;
    async fn load_run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError>;
    async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError>;
    /// Delete a run and everything recorded for it; `false` if there was none.
    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError>;
    /// Record (or, with `None`, clear) what a paused run waits for.
    async fn set_waiting(&self, run_id: &str, waiting: Option<&Waiting>) -> Result<(), StoreError>;
    /// Append a decision; returns the number the store gave it (its `seq` is ignored).
    async fn add_decision(&self, run_id: &str, decision: &Decision) -> Result<u64, StoreError>;
    /// The run's decisions in order (cheaper than [`RunStore::load_run`]: read at every heartbeat).
    async fn load_decisions(&self, run_id: &str) -> Result<Vec<Decision>, StoreError>;
    /// Take or renew the run's lease for `lease.owner`, in one atomic step: it
    /// succeeds (`Ok(None)`) when no one holds it, the owner already does, or
    /// the holder's lease expired before `now`; else the holder is returned.
    async fn take_lease(&self, run_id: &str, lease: &Lease, now: u64) -> Result<Option<Lease>, StoreError>;
    /// Give the lease up, if `owner` holds it.
    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError>;
    /// Keep a plan template, replacing the one with its id.
    async fn save_template(&self, template: &PlanTemplate) -> Result<(), StoreError>;
    /// Every plan template, the most recently saved first.
    async fn list_templates(&self) -> Result<Vec<PlanTemplate>, StoreError>;
    /// Forget a plan template; `false` if there was none with this id.
    async fn delete_template(&self, id: &str) -> Result<bool, StoreError>;
}

/// Summary of a stored run (shared by stores that hold whole [`StoredRun`]s).
pub fn summarize(run: &StoredRun) -> RunSummary {
    let usage = run.usage().total();
    RunSummary {
        run_id: run.run_id.clone(),
        task: run.task.clone(),
        status: run.status,
        started_at: run.started_at,
        updated_at: run.updated_at,
        replans: run.replans,
        steps_done: run.steps.iter().filter(|s| s.result.status.is_done()).count() as u32,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
    }
}

/// A ledger in memory: complete, fast, gone when the process ends.
#[derive(Default)]
pub struct MemoryStore {
    runs: Mutex<BTreeMap<String, StoredRun>>,
    /// Plan templates, in the order they were last saved.
    templates: Mutex<Vec<PlanTemplate>>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn with_run<T>(&self, run_id: &str, f: impl FnOnce(&mut StoredRun) -> T) -> Result<T, StoreError> {
        let mut runs = self.runs.lock().unwrap();
        let run = runs
            .get_mut(run_id)
            .ok_or_else(|| StoreError::new(StoreErrorKind::Other, format!("no run {run_id} in the ledger")))?;
        run.updated_at = crate::result::now_ms();
        Ok(f(run))
    }
}

#[async_trait]
impl RunStore for MemoryStore {
    fn describe(&self) -> String {
        "memory".to_string()
    }

    async fn create_run(&self, run: &RunHeader) -> Result<(), StoreError> {
        let mut runs = self.runs.lock().unwrap();
        if runs.contains_key(&run.run_id) {
            return Err(StoreError::new(
                StoreErrorKind::Other,
                format!("run {} is already in the ledger", run.run_id),
            ));
        }
        runs.insert(
            run.run_id.clone(),
            StoredRun {
                run_id: run.run_id.clone(),
                task: run.task.clone(),
                options: run.options.clone(),
                status: RunStatus::Running,
                started_at: run.started_at,
                updated_at: run.started_at,
                finished_at: None,
                elapsed_ms: 0,
                answer: None,
                error: None,
                replans: 0,
                resumes: 0,
                approved_version: None,
                clarifications: Vec::new(),
                plans: Vec::new(),
                steps: Vec::new(),
                calls: Vec::new(),
                exchanges: Vec::new(),
                waiting: None,
                decisions: Vec::new(),
                lease: None,
            },
        );
        Ok(())
    }

    async fn add_plan(&self, run_id: &str, version: &PlanVersion, replans: u32) -> Result<(), StoreError> {
        self.with_run(run_id, |r| {
            r.plans.retain(|p| p.version != version.version);
            r.plans.push(version.clone());
            r.replans = replans;
        })
    }

    async fn approve_plan(&self, run_id: &str, version: u32) -> Result<(), StoreError> {
        self.with_run(run_id, |r| r.approved_version = Some(version))
    }

    async fn set_clarifications(&self, run_id: &str, clarifications: &[Clarification]) -> Result<(), StoreError> {
        self.with_run(run_id, |r| r.clarifications = clarifications.to_vec())
    }

    async fn step_started(&self, run_id: &str, start: &StepStart) -> Result<(), StoreError> {
        self.with_run(run_id, |r| {
            r.steps.push(StoredStep {
                seq: start.seq,
                plan_version: start.plan_version,
                result: StepResult {
                    id: start.step_id.clone(),
                    tool: start.tool.clone(),
                    agent: start.agent.clone(),
                    status: StepStatus::Running,
                    attempts: 0,
                    args: start.args.clone(),
                    output: None,
                    error: None,
                    started_at: Some(start.started_at),
                    finished_at: None,
                    model_calls: 0,
                    calls: Vec::new(),
                    refused: false,
                    worker: None,
                },
            })
        })
    }

    async fn step_finished(
        &self,
        run_id: &str,
        seq: u64,
        plan_version: u32,
        result: &StepResult,
    ) -> Result<(), StoreError> {
        self.with_run(run_id, |r| match r.steps.iter_mut().find(|s| s.seq == seq) {
            Some(s) => s.result = result.clone(),
            None => r.steps.push(StoredStep {
                seq,
                plan_version,
                result: result.clone(),
            }),
        })
    }

    async fn record_exchange(&self, run_id: &str, exchange: &ModelExchange) -> Result<(), StoreError> {
        self.with_run(run_id, |r| r.exchanges.push(exchange.clone()))
    }

    async fn finish_run(&self, run_id: &str, end: &RunEnd) -> Result<(), StoreError> {
        self.with_run(run_id, |r| {
            r.status = end.status;
            r.answer = end.answer.clone();
            r.error = end.error.clone();
            r.finished_at = Some(end.finished_at);
            r.elapsed_ms = end.elapsed_ms;
        })
    }

    async fn reopen_run(&self, run_id: &str) -> Result<(), StoreError> {
        self.with_run(run_id, |r| {
            r.status = RunStatus::Running;
            r.resumes += 1;
            r.finished_at = None;
        })
    }

    async fn load_run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError> {
        let mut run = self.runs.lock().unwrap().get(run_id).cloned();
        if let Some(r) = &mut run {
            r.steps.sort_by_key(|s| s.seq);
            r.separate_calls();
        }
        Ok(run)
    }

    async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let runs = self.runs.lock().unwrap();
        let mut list: Vec<RunSummary> = runs
            .values()
            .filter(|r| filter.status.is_none_or(|s| r.status == s))
            .map(summarize)
            .collect();
        list.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(b.run_id.cmp(&a.run_id)));
        if let Some(limit) = filter.limit {
            list.truncate(limit as usize);
        }
        Ok(list)
    }

    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError> {
        Ok(self.runs.lock().unwrap().remove(run_id).is_some())
    }

    async fn set_waiting(&self, run_id: &str, waiting: Option<&Waiting>) -> Result<(), StoreError> {
        self.with_run(run_id, |r| r.waiting = waiting.cloned())
    }

    async fn add_decision(&self, run_id: &str, decision: &Decision) -> Result<u64, StoreError> {
        self.with_run(run_id, |r| {
            let seq = r.decisions.len() as u64 + 1;
            r.decisions.push(Decision {
                seq,
                ..decision.clone()
            });
            seq
        })
    }

    async fn load_decisions(&self, run_id: &str) -> Result<Vec<Decision>, StoreError> {
        let runs = self.runs.lock().unwrap();
        Ok(runs.get(run_id).map(|r| r.decisions.clone()).unwrap_or_default())
    }

    async fn take_lease(&self, run_id: &str, lease: &Lease, now: u64) -> Result<Option<Lease>, StoreError> {
        // A lease is not a change to the run's record: `updated_at` stays.
        let mut runs = self.runs.lock().unwrap();
        let run = runs
            .get_mut(run_id)
            .ok_or_else(|| StoreError::new(StoreErrorKind::Other, format!("no run {run_id} in the ledger")))?;
        match &run.lease {
            Some(held) if held.owner != lease.owner && held.expires_at >= now => Ok(Some(held.clone())),
            _ => {
                run.lease = Some(lease.clone());
                Ok(None)
            }
        }
    }

    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError> {
        let mut runs = self.runs.lock().unwrap();
        if let Some(run) = runs.get_mut(run_id) {
            if run.lease.as_ref().is_some_and(|l| l.owner == owner) {
                run.lease = None;
            }
        }
        Ok(())
    }
    async fn save_template(&self, template: &PlanTemplate) -> Result<(), StoreError> {
        let mut templates = self.templates.lock().unwrap();
        templates.retain(|t| t.id != template.id);
        templates.insert(0, template.clone());
        Ok(())
    }

    async fn list_templates(&self) -> Result<Vec<PlanTemplate>, StoreError> {
        Ok(self.templates.lock().unwrap().clone())
    }

    async fn delete_template(&self, id: &str) -> Result<bool, StoreError> {
        let mut templates = self.templates.lock().unwrap();
        let before = templates.len();
        templates.retain(|t| t.id != id);
        Ok(templates.len() < before)
    }
}
