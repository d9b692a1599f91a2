//! `run`, `exec`, `plan` and `resume`: plan (unless given), review, execute,
//! answer; with the person at the terminal (or the flags standing in for them).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use planexec::render::{self, Format};
use planexec::{
    Agent, Approver, AutoApprove, CancelToken, Effect, Plan, ResumeError, ResumeOptions, RunReport, RunStatus,
};

use crate::args::{CommonArgs, LedgerArgs, RunFlags, TaskSource};
use crate::config::Config;
use crate::display::init_logging;
use crate::display::Display;
use crate::outcome::{BadInput, EXIT_INTERRUPTED, EXIT_OK, EXIT_RUN_FAILED};
use crate::review::TerminalReviewer;
use crate::runs;
use crate::setup::{self, build_agent, cassette, open_tools, side_effect_tools, Cassette, Recorded};

/// `run` and `exec`: plan (unless given), review, execute, answer.
pub async fn execute(
    task: TaskSource,
    given: Option<(PathBuf, Plan)>,
    flags: RunFlags,
    common: CommonArgs,
    ledger: LedgerArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let interactive = std::io::stdin().is_terminal();
    let config = Config::load(&common.workspace(), &flags.with(common.flags()))?;
    let later = flags.later(&config)?;
    // Never hang waiting for an answer nobody can give, and never assume yes.
    if !flags.yes && !interactive && !later {
        return Err(BadInput(
            "the plan needs your approval, but standard input is not a terminal; pass --yes to approve it without asking, or --approve later (or approval = \"later\" in planexec.toml) to record the run and decide with `planexec approve`".to_string(),
        ));
    }
    let options = config.run_options()?;
    let tools = open_tools(&common.workspace(), &config, &common.mcp).await?;
    let display = Display::new(quiet, side_effect_tools(&tools.registry));
    init_logging(verbose, &display);
    let task = tools.or_shutdown(tools.task(task).await).await?;

    if let Some((path, plan)) = &given {
        let valid = planexec::plan::validate(plan, &tools.registry, &options.plan_limits())
            .map_err(|e| BadInput(format!("{} is not a valid plan:\n{e}", path.display())));
        tools.or_shutdown(valid).await?;
    }

    let approver = approver_for(&flags, later, flags.yes, interactive, &display);
    let ready = async {
        let store = runs::open(ledger.db.as_deref()).await?;
        let recorded = Recorded {
            store,
            workspace: common.workspace(),
        };
        let agent = build_agent(
            &display,
            &config,
            tools.registry.clone(),
            approver,
            Some(recorded),
            &cassette(&flags),
        )?;
        let tracing = setup::traces(&agent)?;
        Ok((agent, tracing))
    }
    .await;
    let (agent, tracing) = tools.or_shutdown(ready).await?;
    let report = run_with_ctrl_c(&agent, &display, |cancel| {
        let agent = &agent;
        async move { agent.run_cancellable(&task, given.map(|(_, p)| p), &cancel).await }
    })
    .await;
    tools.shutdown().await;
    setup::flush_traces(tracing).await;
    finish(&display, &report, flags.json);
    Ok(exit_code(&report))
}

/// The person at the terminal (or `--yes` standing in), or with `--approve
/// later` nobody now: the run pauses in the ledger when it needs a decision.
fn approver_for(
    flags: &RunFlags,
    later: bool,
    approve_plan: bool,
    interactive: bool,
    display: &Arc<Display>,
) -> Arc<dyn Approver> {
    if later {
        return Arc::new(planexec::ApproveLater);
    }
    Arc::new(CliApprover {
        approve_plan,
        yes: flags.yes,
        terminal: interactive.then(|| TerminalReviewer {
            display: display.clone(),
        }),
        display: display.clone(),
    })
}

pub(crate) fn exit_code(report: &RunReport) -> u8 {
    match report.status {
        // Paused as asked: the process did what it was told.
        RunStatus::Succeeded | RunStatus::AwaitingApproval => EXIT_OK,
        RunStatus::Interrupted => EXIT_INTERRUPTED,
        _ => EXIT_RUN_FAILED,
    }
}

/// Show the run's events, and turn Ctrl-C into a cancellation of the run.
async fn run_with_ctrl_c<F, Fut, T>(agent: &Agent, display: &Arc<Display>, run: F) -> T
where
    F: FnOnce(CancelToken) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let sink = display.clone();
    agent.events().on_event(move |event| sink.handle(event));
    let cancel = CancelToken::new();
    let on_signal = cancel.clone();
    let signal_display = display.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.cancel();
            signal_display.println("interrupting: cancelling the running steps (Ctrl-C again to quit at once)");
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(EXIT_INTERRUPTED as i32);
            }
        }
    });

    run(cancel).await
}

pub(crate) fn finish(display: &Display, report: &RunReport, json: bool) {
    if json {
        outln!("{}", serde_json::to_string_pretty(report).unwrap_or_default());
    } else if let Some(answer) = &report.answer {
        outln!("{answer}");
    }
    display.summary(report);
    if let Some(waiting) = &report.waiting {
        display.println(&runs::how_to_decide(&report.run_id, waiting));
    } else if report.status.resumable() {
        let finished = report.steps.iter().filter(|s| s.succeeded()).count();
        let larger = if report.status == RunStatus::BudgetExhausted {
            " with a larger --max-tokens, --max-cost or --max-time"
        } else {
            ""
        };
        display.println(&format!(
            "{finished} step(s) had finished and are kept in the ledger; continue with: planexec resume {}{larger}",
            report.run_id
        ));
    }
}

/// The person at the terminal, or the flags standing in for them.
///
/// `--yes` approves the plan. A step the mode says to confirm is asked on the
/// terminal; with no terminal, `--yes` stands in for a "yes" too, except for an
/// irreversible tool, which only a person (or `allow = true` in the config with
/// `--mode auto`) can let run.
struct CliApprover {
    approve_plan: bool,
    /// `--yes`: with no terminal, stands in for a "yes" to a step with side effects.
    yes: bool,
    terminal: Option<TerminalReviewer>,
    display: Arc<Display>,
}

#[async_trait::async_trait]
impl Approver for CliApprover {
    async fn review(&self, plan: &Plan, check: planexec::policy::PlanCheck<'_>) -> planexec::Approval {
        match &self.terminal {
            Some(terminal) if !self.approve_plan => terminal.review(plan, check).await,
            _ => planexec::Approval::Approve,
        }
    }
    fn can_answer_questions(&self) -> bool {
        self.terminal.is_some() && !self.approve_plan
    }
    async fn answer_questions(&self, questions: &[String]) -> Option<Vec<String>> {
        match &self.terminal {
            Some(terminal) => terminal.answer_questions(questions).await,
            None => None,
        }
    }
    async fn confirm_step(&self, step: &planexec::Step, args: &serde_json::Value, effect: Effect) -> bool {
        if let Some(terminal) = &self.terminal {
            return terminal.confirm_step(step, args, effect).await;
        }
        if self.yes && effect != Effect::Irreversible {
            return true;
        }
        let tool = step.tool.as_deref().unwrap_or("?");
        self.display.println(&format!(
            "step {} needs a person's confirmation to run `{tool}`, which {effect}, but standard input is not a terminal: not run. {}",
            step.id,
            if effect == Effect::Irreversible {
                format!("To let it run unattended, set `[tools.\"{tool}\"] allow = true` in planexec.toml and use --mode auto")
            } else {
                "Pass --yes, or use --mode auto".to_string()
            }
        ));
        false
    }
    async fn elicit(
        &self,
        step: &planexec::Step,
        question: &planexec::tools::asking::Question,
    ) -> Option<serde_json::Value> {
        self.terminal.as_ref()?.elicit(step, question).await
    }

    async fn rerun_inflight(&self, step: &planexec::Step, args: Option<&serde_json::Value>) -> Option<bool> {
        match &self.terminal {
            Some(terminal) => terminal.rerun_inflight(step, args).await,
            None => None,
        }
    }
}

/// `plan`: plan and validate, then print or save.
pub async fn plan_only(
    task: String,
    output: Option<PathBuf>,
    format: Option<Format>,
    common: CommonArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let config = Config::load(&common.workspace(), &common.flags())?;
    let tools = open_tools(&common.workspace(), &config, &common.mcp).await?;
    let notes = setup::annotations(&tools.registry);
    let display = Display::new(quiet, notes.side_effect_tools.clone());
    init_logging(verbose, &display);
    // Questions can be answered only on a terminal; otherwise the planner states assumptions.
    let approver: Arc<dyn Approver> = if std::io::stdin().is_terminal() {
        Arc::new(TerminalReviewer {
            display: display.clone(),
        })
    } else {
        Arc::new(AutoApprove)
    };
    let agent = tools
        .or_shutdown(build_agent(
            &display,
            &config,
            tools.registry.clone(),
            approver,
            None,
            &Cassette::default(),
        ))
        .await?;
    let sink = display.clone();
    agent.events().on_event(move |event| {
        if !matches!(event, planexec::Event::PlanProposed { .. }) {
            sink.handle(event)
        }
    });
    let planned = agent.plan(&task).await;
    tools.shutdown().await;
    let plan = match planned {
        Ok(plan) => plan,
        Err(e) => {
            display.println(&format!("error: {e}"));
            return Ok(EXIT_RUN_FAILED);
        }
    };
    match output {
        Some(path) => {
            let text = render::render(&plan, format.unwrap_or(Format::Json), &notes);
            std::fs::write(&path, text).map_err(|e| BadInput(format!("cannot write {}: {e}", path.display())))?;
            display.info(display.render_plan(&plan, &[]).trim_end());
            display.info(&format!("wrote the plan to {}", path.display()));
        }
        None => out!("{}", render::render(&plan, format.unwrap_or(Format::Text), &notes)),
    }
    Ok(if plan.infeasible.is_some() {
        EXIT_RUN_FAILED
    } else {
        EXIT_OK
    })
}

/// `resume`: continue a recorded run.
pub async fn resume(
    run_id: String,
    options: ResumeOptions,
    flags: RunFlags,
    common: CommonArgs,
    ledger: LedgerArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let store = runs::open(ledger.db.as_deref()).await?;
    let stored = runs::find(store.as_ref(), &run_id).await?;
    if !stored.status.resumable() {
        eprintln!(
            "run {} already finished ({}); resuming it changes nothing",
            stored.run_id,
            stored.status.as_str()
        );
        return Ok(EXIT_OK);
    }
    if let Some(waiting) = planexec::decisions::undecided(&stored) {
        return Err(BadInput(runs::how_to_decide(&stored.run_id, waiting)));
    }
    let interactive = std::io::stdin().is_terminal();
    let approved =
        stored.approved_version.is_some() && stored.approved_version == stored.plans.last().map(|v| v.version);
    // The run's own workspace, unless another is given.
    let workspace = common.workspace.clone().unwrap_or_else(|| runs::workspace_of(&stored));
    if !workspace.is_dir() {
        return Err(BadInput(format!(
            "run {} worked in {}, which is not a folder any more; pass --workspace",
            stored.run_id,
            workspace.display()
        )));
    }
    // The run keeps the mode it was started in, unless --mode says otherwise.
    let mut flags_now = flags.with(common.flags());
    if flags_now.mode.is_none() {
        flags_now.mode = stored.options.get("mode").and_then(|m| m.as_str()).map(str::to_string);
    }
    // And its strategy: a run is finished the way it was started unless --strategy says otherwise.
    if flags_now.strategy.is_none() {
        flags_now.strategy = stored
            .options
            .get("strategy")
            .and_then(|m| m.as_str())
            .map(str::to_string);
    }
    // Likewise its budget: each limit holds unless a flag raises (or sets) it.
    let budget: planexec::Budget = stored
        .options
        .get("budget")
        .and_then(|b| serde_json::from_value(b.clone()).ok())
        .unwrap_or_default();
    flags_now.max_tokens = flags_now.max_tokens.or(budget.max_tokens);
    flags_now.max_cost = flags_now.max_cost.or(budget.max_cost);
    flags_now.max_time = flags_now.max_time.or(budget.max_time_ms.map(|ms| ms as f64 / 1000.0));
    let config = Config::load(&workspace, &flags_now)?;
    let later = flags.later(&config)?;
    if !approved && !flags.yes && !interactive && !later {
        return Err(BadInput(format!(
            "run {} stopped before its plan was approved, and standard input is not a terminal; pass --yes to approve it without asking, or --approve later to record it as waiting",
            stored.run_id
        )));
    }
    let tools = open_tools(&workspace, &config, &common.mcp).await?;
    let display = Display::new(quiet, side_effect_tools(&tools.registry));
    init_logging(verbose, &display);
    // A resumed run's plan was approved before (or is approved by --yes).
    let approver = approver_for(&flags, later, flags.yes || !interactive, interactive, &display);
    let recorded = Recorded {
        store,
        workspace: workspace.clone(),
    };
    let ready = build_agent(
        &display,
        &config,
        tools.registry.clone(),
        approver,
        Some(recorded),
        &cassette(&flags),
    )
    .and_then(|agent| Ok((setup::traces(&agent)?, agent)));
    let (tracing, agent) = tools.or_shutdown(ready).await?;
    let id = stored.run_id.clone();
    let outcome = run_with_ctrl_c(&agent, &display, |cancel| {
        let agent = &agent;
        async move { agent.resume(&id, &options, &cancel).await }
    })
    .await;
    tools.shutdown().await;
    setup::flush_traces(tracing).await;
    match outcome {
        Ok(report) => {
            finish(&display, &report, flags.json);
            Ok(exit_code(&report))
        }
        Err(ResumeError::Finished { .. }) => Ok(EXIT_OK),
        Err(e @ ResumeError::Store(_)) => {
            display.println(&format!("error: {e}"));
            Ok(EXIT_RUN_FAILED)
        }
        Err(e) => Err(BadInput(e.to_string())),
    }
}
