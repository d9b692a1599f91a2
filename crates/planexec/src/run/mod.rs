//! One run: its state as it goes ([`Run`]) and how it ends ([`Exit`]).
//!
//! A strategy drives a [`Run`] from its [`Start`] to `Ok(answer)` or an
//! [`Exit`]; every early exit is a value passed up with `?`, and
//! [`Run::finish`] turns the outcome into the ledger's last write, the last
//! event and the [`RunReport`]. The run's errors live here too: [`RunError`]
//! (a role could not go on) and, in [`resume`], why a resume did not start.

mod counted_apart;
pub(crate) mod data_format;
mod error;
pub(crate) mod form;
mod id;
mod left_out;
pub(crate) mod line_order;
pub(crate) mod line_parts;
pub(crate) mod listing_case;
pub(crate) mod name_written;
pub(crate) mod outputs;
pub(crate) mod owner;
mod repeats;
mod respelled;
pub(crate) mod resume;
pub(crate) mod two_ways;
pub(crate) mod whole_values;

use std::collections::HashMap;
use std::time::Instant;

use serde_json::Value;

use crate::context::{Control, RunContext};
use crate::events::Event;
use crate::ledger;
use crate::plan::{Plan, Step};
use crate::planner::Planned;
use crate::report::{Clarification, PlanVersion, RunReport, RunStatus};
use crate::result::{now_ms, StepResult};
use crate::store::{RunEnd, StoredRun, Waiting};

pub use error::RunError;
pub use id::new_run_id;

/// Where a run starts.
pub(crate) enum Start {
    /// A new run, with a plan made elsewhere or none (the planner makes one).
    New(Option<Plan>),
    /// A resumed run with the plan in force (already recorded as `version`).
    Resume { plan: Plan, version: u32, approved: bool },
}

/// Why a run ended without an answer. Success is `Ok(answer)`.
#[derive(Debug)]
pub(crate) enum Exit {
    /// Ended with this status, for this reason (failed, rejected, infeasible).
    /// A budget that ran out wins: the failure was its doing.
    Ended(RunStatus, String),
    /// Stopped from outside: cancelled, the budget, or a ledger that cannot be written.
    Stopped,
    /// Paused until a person decides (`approve later`): recorded, resumable.
    AwaitingApproval(Box<Waiting>),
}

impl Exit {
    pub fn failed(reason: impl std::fmt::Display) -> Exit {
        Exit::Ended(RunStatus::Failed, reason.to_string())
    }

    pub fn infeasible(reason: impl std::fmt::Display) -> Exit {
        Exit::Ended(RunStatus::Infeasible, reason.to_string())
    }
}

/// The state of one run as it goes.
pub(crate) struct Run {
    /// What the roles share: models, tools, options, the ledger, the budget, the stop token.
    pub ctx: RunContext,
    pub id: String,
    pub task: String,
    started: Instant,
    /// When the run first started (ms since the epoch; a resumed run's first session).
    pub started_at_ms: u64,
    /// Time spent in earlier sessions of a resumed run.
    earlier_ms: u64,
    pub plans: Vec<PlanVersion>,
    /// The plan in force, as the report shows it, and its version.
    pub plan: Option<Plan>,
    pub version: u32,
    pub records: Vec<StepResult>,
    /// Outputs of succeeded steps, by id. Such steps never run again.
    pub done: HashMap<String, Value>,
    pub replans: u32,
    pub clarifications: Vec<Clarification>,
    /// Why the plan in force is known to be incomplete (a streamed plan cut
    /// short): the rest is still to be planned.
    pub incomplete: Option<String>,
    /// Replans since a step last succeeded (the stall count of `stall_replans`).
    pub stalled: u32,
    /// What earlier plan versions still had to do when a step of theirs failed,
    /// by version: a revision that repeats one is going round in a circle.
    pub tried: Vec<(u32, Vec<String>)>,
    /// This process's lease on the run in the ledger (none without a ledger).
    pub owner: Option<owner::Owner>,
    /// The run was revised once already because files its task names were
    /// not written ([`outputs::unwritten`]).
    pub revised_for_outputs: bool,
    /// Steering messages taken from a durable engine so far (their numbers).
    pub steered_on_engine: u64,
    /// The files the task says to write that did not exist when this
    /// session of the run began: the ones it must write to succeed.
    pub new_outputs: Vec<String>,
    /// The files the task says to write that were there when this session
    /// began: files to change in place (or inputs named beside an output).
    pub old_outputs: Vec<String>,
    /// The files the task works in ([`crate::plan::absent_worked_in`]) that were
    /// not there when this session began: missing inputs, which the run is
    /// not to make ([`outputs::unwritten`]).
    pub absent_inputs: Vec<String>,
    /// What each of `old_outputs`, and each other file the task names,
    /// held when the run began, so that the check of an edit in place
    /// (`verify`) sees it before and after and can derive it again
    /// ([`outputs::one_output`]). Empty where that is not
    /// known (a resumed run, or one on an engine: its replay would read its
    /// own edits) or not wanted (a run that does not check its work).
    pub originals: Vec<(String, String)>,
    /// The plan template this run began with, when its first plan was reused.
    pub reused: Option<crate::templates::PlanTemplate>,
    /// The programs the check of the run's work wrote so far
    /// ([`crate::recompute`]): a check after a revision does not ask again.
    pub derivations: crate::recompute::Derivations,
    /// The file found wrong before the plan was revised for it, what it held
    /// then, and the finding: a revision that leaves it so has not done
    /// the work, whatever a later check says.
    pub found_wrong: Option<FoundWrong>,
}

/// A file found wrong: its path, what it held, and what was wrong with it.
pub struct FoundWrong {
    pub path: String,
    pub held: String,
    pub finding: String,
}

impl Run {
    pub fn new(mut ctx: RunContext, id: String, task: &str) -> Run {
        ctx.setting.task = task.to_string();
        let new_outputs = crate::plan::new_outputs(task, &ctx.setting.tools);
        let old_outputs = crate::plan::existing_outputs(task, &ctx.setting.tools);
        let absent_inputs = crate::plan::absent_worked_in(task, &ctx.setting.tools);
        // Every file the task names that is there: one it names with no
        // verb of writing may be edited in place too ("Remove the trailing
        // spaces in deploy.sh, editing the file in place").
        let mut named = old_outputs.clone();
        for path in crate::plan::paths_named_by(task) {
            if !named.contains(&path) {
                named.push(path);
            }
        }
        let originals = match ctx.setting.engine.is_none() && ctx.setting.options.verify {
            true => originals(&ctx.setting.tools, &named),
            false => Vec::new(),
        };
        Run {
            ctx,
            id,
            task: task.to_string(),
            started: Instant::now(),
            started_at_ms: now_ms(),
            earlier_ms: 0,
            plans: Vec::new(),
            plan: None,
            version: 0,
            records: Vec::new(),
            done: HashMap::new(),
            replans: 0,
            clarifications: Vec::new(),
            incomplete: None,
            stalled: 0,
            tried: Vec::new(),
            owner: None,
            revised_for_outputs: false,
            steered_on_engine: 0,
            new_outputs,
            old_outputs,
            absent_inputs,
            originals,
            reused: None,
            derivations: Default::default(),
            found_wrong: None,
        }
    }

    /// A run picked up from the ledger: its plans, finished steps, counters.
    pub fn restore(ctx: RunContext, stored: &StoredRun) -> Run {
        let mut run = Run::new(ctx, stored.run_id.clone(), &stored.task);
        // The files may hold what an earlier session wrote.
        run.originals.clear();
        run.earlier_ms = stored.elapsed_ms;
        run.started_at_ms = stored.started_at;
        run.plans = stored.plans.clone();
        run.replans = stored.replans;
        run.clarifications = stored.clarifications.clone();
        let mut ran_in = HashMap::new();
        for s in &stored.steps {
            if s.result.status == crate::result::StepStatus::Running {
                continue; // decided by the resume
            }
            if s.result.status.is_done() {
                run.done.insert(s.result.id.clone(), s.result.output_for_dependents());
                ran_in.insert(s.result.id.clone(), s.plan_version);
            }
            run.records.push(s.result.clone());
        }
        for id in redone(&run.plans, &run.done, &ran_in) {
            run.done.remove(&id);
        }
        run
    }

    /// What `path` held when the run began, when it is one of
    /// [`Run::originals`].
    pub fn original(&self, path: &str) -> Option<&str> {
        self.originals
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, text)| text.as_str())
    }

    /// What the check found wrong with `path` before the plan was revised
    /// for it, when it found `path` wrong.
    pub fn found_wrong_at(&self, path: &str) -> Option<&FoundWrong> {
        self.found_wrong.as_ref().filter(|wrong| wrong.path == path)
    }

    /// The plan in force (a strategy that runs steps has one).
    pub fn plan(&self) -> &Plan {
        self.plan.as_ref().expect("the run has a plan in force")
    }

    /// Record `planned` (a plan, with what the runtime changed in it) as the
    /// next version, in force from now on.
    pub async fn adopt(&mut self, planned: impl Into<Planned>, reason: String) {
        let Planned { plan, mends } = planned.into();
        let version = self.plans.len() as u32 + 1;
        self.plans.push(PlanVersion {
            version,
            reason,
            plan: plan.clone(),
            mends: mends.clone(),
        });
        let recorded = self.plans.last().expect("just pushed");
        self.ctx.recording.ledger.plan(recorded, self.replans).await;
        self.ctx.recording.events.emit(Event::PlanProposed {
            version,
            plan: plan.clone(),
            mends,
        });
        self.plan = Some(plan);
        self.version = version;
    }

    /// Record a revised plan as a new version, counted against the replan bound.
    pub async fn adopt_revision(&mut self, revised: impl Into<Planned>, reason: String) {
        self.replans += 1;
        self.adopt(revised, reason.clone()).await;
        self.ctx.recording.events.emit(Event::Replanned {
            version: self.version,
            reason,
            replans: self.replans,
        });
    }

    /// Completed steps of `plan` with their outputs, in plan order.
    pub fn completed(&self, plan: &Plan) -> Vec<(Step, Value)> {
        plan.steps
            .iter()
            .filter_map(|s| self.done.get(&s.id).map(|v| (s.clone(), v.clone())))
            .collect()
    }

    /// `args` with the `{{id}}` references to finished steps filled in (as they
    /// stand where a reference cannot be resolved yet).
    pub fn resolved(&self, args: &serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
        crate::plan::resolve_args(args, &|id: &str| self.done.get(id).cloned()).unwrap_or_else(|_| args.clone())
    }

    /// Whether the run already handed its goal to the fallback loop.
    pub fn fell_back(&self) -> bool {
        crate::report::fallback_reason(&self.plans).is_some()
    }

    /// Whether the replan bound still allows a revision.
    pub fn may_replan(&self) -> bool {
        self.replans < self.ctx.setting.options.max_replans
    }

    /// `fut`, unless the run is stopped first.
    pub async fn guard<T>(control: &Control, fut: impl std::future::Future<Output = T>) -> Result<T, Exit> {
        control.stop.guard(fut).await.ok_or(Exit::Stopped)
    }

    /// The status, answer and error an outcome comes to.
    fn verdict(&self, outcome: Result<String, Exit>) -> (RunStatus, Option<String>, Option<String>) {
        let budget_or = |status: RunStatus, reason: String| match self.ctx.calls.budget.exhausted() {
            Some(spent) => (RunStatus::BudgetExhausted, None, Some(spent)),
            None => (status, None, Some(reason)),
        };
        match outcome {
            Ok(answer) => (RunStatus::Succeeded, Some(answer), None),
            Err(Exit::Ended(status, reason)) => budget_or(status, reason),
            Err(Exit::AwaitingApproval(waiting)) => (
                RunStatus::AwaitingApproval,
                None,
                Some(format!("waits for {}", waiting.describe())),
            ),
            // A ledger that cannot be written is the problem to fix, whatever the budget says.
            Err(Exit::Stopped) => match (
                self.ctx.recording.ledger.failure(),
                self.ctx.control.inbox.cancelled_by(),
            ) {
                (Some(e), _) => (RunStatus::Failed, None, Some(ledger::failure_message(&e, &self.id))),
                (None, Some(by)) => (RunStatus::Interrupted, None, Some(format!("cancelled by {by}"))),
                (None, None) => budget_or(RunStatus::Interrupted, "interrupted".to_string()),
            },
        }
    }

    /// What plan reuse keeps of the run ([`crate::templates::after_run`]): a
    /// run that succeeded with the plan it was given for its task teaches it
    /// (not a ReAct trace, a fallback, or a plan revised, recovered or
    /// clarified on the way: those hold what this run saw); one that began
    /// with a reused plan and had to change it, failed or was rejected marks
    /// that template. Runs that stopped for other reasons say nothing of it.
    async fn keep_template(&self, status: RunStatus, error: Option<&str>) {
        let Some(store) = self.ctx.recording.ledger.store() else {
            return;
        };
        let off = self.ctx.setting.options.plan_reuse == crate::policy::PlanReuse::Off;
        if off || self.fell_back() || self.plans.is_empty() {
            return;
        }
        let recovered = self.records.iter().any(|r| r.agent.is_none() && !r.calls.is_empty());
        let changed = self.plans.first().map(|v| &v.plan) != self.plan.as_ref();
        let outcome = match status {
            RunStatus::Succeeded => Ok(changed || recovered || !self.clarifications.is_empty()),
            RunStatus::Failed | RunStatus::Rejected => Err(error.unwrap_or(status.as_str()).to_string()),
            _ => return,
        };
        // Resumed: the template it began with is named in its first version.
        let reused = match &self.reused {
            Some(t) => Some(t.clone()),
            None => match crate::templates::reused_in(&self.plans[0].reason) {
                Some(id) => crate::templates::load(store.as_ref(), id).await,
                None => None,
            },
        };
        let tools = &self.ctx.setting.tools;
        let (run, plan) = (
            (self.task.as_str(), self.id.as_str(), tools.as_ref()),
            self.plan.as_ref(),
        );
        crate::templates::after_run(store.as_ref(), run, plan, reused.as_ref(), outcome).await;
    }

    /// End the run: the ledger's last write, the last event, the report.
    pub async fn finish(mut self, outcome: Result<String, Exit>) -> RunReport {
        let waiting = match &outcome {
            Err(Exit::AwaitingApproval(w)) => Some(w.as_ref().clone()),
            _ => None,
        };
        let (status, answer, mut error) = self.verdict(outcome);
        if let Some(w) = &waiting {
            self.ctx.recording.ledger.waiting(w).await;
        }
        self.keep_template(status, error.as_deref()).await;
        let elapsed_ms = self.earlier_ms + self.started.elapsed().as_millis() as u64;
        let mut steps = self.records;
        crate::report::add_unrun_steps(&mut steps, self.plan.as_ref(), &self.plans);
        let end = RunEnd {
            status,
            answer: answer.clone(),
            error: error.clone(),
            finished_at: now_ms(),
            elapsed_ms,
        };
        if let Err(e) = self.ctx.recording.ledger.finish(&end).await {
            let note = format!("the ledger could not record the end of the run: {e}");
            error = Some(match error {
                Some(err) if !err.contains(&e.message) => format!("{err}; {note}"),
                Some(err) => err,
                None => note,
            });
        }
        if let Some(owner) = self.owner.take() {
            owner.release().await;
        }
        self.ctx.recording.events.emit(Event::RunFinished {
            status: status.as_str().to_string(),
            elapsed_ms,
        });
        RunReport {
            fell_back: crate::report::fallback_reason(&self.plans),
            run_id: self.id,
            task: self.task,
            clarifications: self.clarifications,
            status,
            plan: self.plan,
            plans: self.plans,
            steps,
            replans: self.replans,
            answer,
            error,
            usage: self.ctx.calls.meter.snapshot(),
            elapsed_ms,
            budget: self.ctx.setting.options.budget,
            waiting,
        }
    }
}

/// Most bytes of a file to change whose content is kept when the run begins.
const ORIGINAL_BYTES: u64 = 64 * 1024;

/// What each of `paths` (files of the workspace of `tools`) holds now, for
/// the text files of at most [`ORIGINAL_BYTES`].
fn originals(tools: &crate::tools::ToolRegistry, paths: &[String]) -> Vec<(String, String)> {
    let Some(workspace) = tools.workspace() else {
        return Vec::new();
    };
    paths
        .iter()
        .filter_map(|path| {
            let full = workspace.resolve(path).ok()?;
            let small = std::fs::metadata(&full).ok()?.len() <= ORIGINAL_BYTES;
            let text = small.then(|| std::fs::read_to_string(&full).ok()).flatten()?;
            Some((path.clone(), text))
        })
        .collect()
}

/// The finished steps (`done`, each run in plan version `ran_in`) that no
/// longer stand for the step of their id in the last of `plans`: a revision
/// wrote it again differently (a step redone after the file it made was
/// found wrong), or it depends on one that is not done.
fn redone(plans: &[PlanVersion], done: &HashMap<String, Value>, ran_in: &HashMap<String, u32>) -> Vec<String> {
    let Some(last) = plans.last().map(|v| &v.plan) else {
        return Vec::new();
    };
    let as_ran = |id: &str| {
        let version = ran_in.get(id)?;
        plans.iter().find(|v| v.version == *version)?.plan.step(id)
    };
    let mut stale: Vec<String> = last
        .steps
        .iter()
        .filter(|s| done.contains_key(&s.id) && as_ran(&s.id).is_some_and(|ran| ran != *s))
        .map(|s| s.id.clone())
        .collect();
    // In plan order, a step comes after the steps it depends on.
    for step in &last.steps {
        let stands = |d: &String| done.contains_key(d) && !stale.contains(d);
        if done.contains_key(&step.id) && !step.depends_on.iter().all(stands) && !stale.contains(&step.id) {
            stale.push(step.id.clone());
        }
    }
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(version: u32, steps: serde_json::Value) -> PlanVersion {
        let plan: Plan = serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap();
        PlanVersion {
            version,
            reason: String::new(),
            plan,
            mends: Vec::new(),
        }
    }

    /// A step written again differently after it ran, and the step that
    /// depends on it, are not done on resume; a step written again as it
    /// was, and one that ran in the last plan, are.
    #[test]
    fn a_step_redone_differently_is_not_done_on_resume() {
        let step = |id: &str, code: &str, deps: &[&str]| serde_json::json!({"id": id, "description": id, "tool": "python", "args": {"code": code}, "depends_on": deps});
        let plans = [
            version(
                1,
                serde_json::json!([
                    step("s1", "read", &[]),
                    step("s2", "lines[1]", &["s1"]),
                    step("s3", "write", &["s2"])
                ]),
            ),
            version(
                2,
                serde_json::json!([
                    step("s1", "read", &[]),
                    step("s2", "sorted[-2]", &["s1"]),
                    step("s3", "write", &["s2"]),
                    step("s4", "x", &[])
                ]),
            ),
        ];
        let done: HashMap<String, Value> = ["s1", "s2", "s3", "s4"]
            .iter()
            .map(|id| (id.to_string(), Value::Null))
            .collect();
        let ran_in: HashMap<String, u32> = [("s1", 1), ("s2", 1), ("s3", 1), ("s4", 2)]
            .iter()
            .map(|(id, v)| (id.to_string(), *v))
            .collect();
        assert_eq!(redone(&plans, &done, &ran_in), ["s2", "s3"]);
    }
}
