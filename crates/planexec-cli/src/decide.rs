//! `approve`, `reject`, `edit`, `steer` and `cancel`: decisions about a run,
//! made from any terminal (the run may be paused in the ledger, or running in
//! another process). Each is one call of the library's `planexec::decisions`
//! over the ledger; `approve --resume` then continues the run here.

use std::sync::Arc;

use planexec::decisions::{self, DecisionError};
use planexec::store::{RunStore, StoredRun, Waiting};
use planexec::{ResumeOptions, RunStatus};

use crate::args::{CommonArgs, LedgerArgs, RunFlags};
use crate::config::Config;
use crate::display::Display;
use crate::outcome::{BadInput, EXIT_OK};
use crate::review::TerminalReviewer;
use crate::setup::open_tools;
use crate::{execute, runs};

/// Who made a decision: `--by`, else the login name.
pub(crate) fn who(by: Option<String>) -> String {
    by.or_else(|| std::env::var("USER").ok())
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "cli".to_string())
}

async fn open(ledger: &LedgerArgs, run_id: &str) -> Result<(Arc<dyn RunStore>, StoredRun), BadInput> {
    let store = runs::open(ledger.db.as_deref()).await?;
    let run = runs::find(store.as_ref(), run_id).await?;
    Ok((store, run))
}

fn refused(e: DecisionError) -> BadInput {
    BadInput(e.to_string())
}

/// `approve`: approve what the run waits for; with `--resume`, continue it.
pub struct Approve {
    pub run_id: String,
    pub step: Option<String>,
    /// The answer to the question the run waits for, as JSON.
    pub answer: Option<String>,
    pub resume: bool,
    pub by: Option<String>,
}

pub async fn approve(
    args: Approve,
    flags: RunFlags,
    common: CommonArgs,
    ledger: LedgerArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let (store, run) = open(&ledger, &args.run_id).await?;
    let by = who(args.by);
    let waited = match &args.answer {
        Some(text) => {
            let answer: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                BadInput(format!(
                    "--answer is not JSON ({e}); give an object, e.g. '{{\"name\": \"Ada\"}}'"
                ))
            })?;
            decisions::answer(store.as_ref(), &run.run_id, answer, &by).await
        }
        None => decisions::approve(store.as_ref(), &run.run_id, args.step.as_deref(), &by).await,
    }
    .map_err(refused)?;
    eprintln!("approved {} of run {} (by {by})", waited.describe(), run.run_id);
    if !args.resume {
        eprintln!("continue it with: planexec resume {}", run.run_id);
        return Ok(EXIT_OK);
    }
    execute::resume(
        run.run_id,
        ResumeOptions::default(),
        flags,
        common,
        ledger,
        quiet,
        verbose,
    )
    .await
}

/// `reject`: the run ends `rejected`, with the reason in its report.
pub async fn reject(run_id: String, reason: String, by: Option<String>, ledger: LedgerArgs) -> Result<u8, BadInput> {
    let (store, run) = open(&ledger, &run_id).await?;
    let by = who(by);
    decisions::reject(store.as_ref(), &run.run_id, &reason, &by)
        .await
        .map_err(refused)?;
    eprintln!("rejected run {} (by {by}): {}", run.run_id, reason.trim());
    Ok(EXIT_OK)
}

/// `edit`: the pending plan opens in `$VISUAL`/`$EDITOR`, is validated like a
/// plan file (reopening on an error), and replaces the proposal, approved.
pub async fn edit(
    run_id: String,
    by: Option<String>,
    common: CommonArgs,
    ledger: LedgerArgs,
    quiet: bool,
) -> Result<u8, BadInput> {
    let (store, run) = open(&ledger, &run_id).await?;
    let pending = match (&run.status, &run.waiting, run.plans.last()) {
        (RunStatus::AwaitingApproval, Some(Waiting::Plan { .. }), Some(v)) => v.plan.clone(),
        _ => {
            return Err(BadInput(format!(
                "run {} is {} and waits for no plan approval: there is no pending plan to edit",
                run.run_id,
                run.status.as_str()
            )))
        }
    };
    let workspace = common.workspace.clone().unwrap_or_else(|| runs::workspace_of(&run));
    let config = Config::load(&workspace, &common.flags())?;
    let options = config.run_options()?;
    let tools = open_tools(&workspace, &config, &common.mcp).await?;
    let limits = options.plan_limits();
    let registry = tools.registry.clone();
    let check = move |p: &planexec::Plan| planexec::plan::validate(p, &registry, &limits);
    let reviewer = TerminalReviewer {
        display: Display::new(quiet, Vec::new()),
    };
    let edited = reviewer.edit(&pending, &check).await;
    let outcome = match edited {
        None => Err(BadInput("the edit was cancelled; the run still waits".to_string())),
        Some(plan) => decisions::edit(store.as_ref(), &run.run_id, plan, &check, &who(by))
            .await
            .map_err(refused),
    };
    tools.shutdown().await;
    let version = outcome?;
    eprintln!(
        "plan v{version} of run {} is your edit, approved; continue with: planexec resume {}",
        run.run_id, run.run_id
    );
    Ok(EXIT_OK)
}

/// `steer`: a message for the run's replanner at its next decision point.
pub async fn steer(run_id: String, message: String, by: Option<String>, ledger: LedgerArgs) -> Result<u8, BadInput> {
    if message.trim().is_empty() {
        return Err(BadInput(
            "the steering message is empty; say what the run should do differently".to_string(),
        ));
    }
    let (store, run) = open(&ledger, &run_id).await?;
    decisions::steer(store.as_ref(), &run.run_id, &message, &who(by))
        .await
        .map_err(refused)?;
    let when = match run.status {
        RunStatus::Running => "the run reads it within seconds and revises its plan after the steps now running",
        _ => "the run reads it when it is resumed",
    };
    eprintln!("steering message recorded for run {}: {when}", run.run_id);
    Ok(EXIT_OK)
}

/// `cancel`: stop a running run (at its next heartbeat) or a paused one (now).
pub async fn cancel(run_id: String, by: Option<String>, ledger: LedgerArgs) -> Result<u8, BadInput> {
    let (store, run) = open(&ledger, &run_id).await?;
    decisions::cancel(store.as_ref(), &run.run_id, &who(by))
        .await
        .map_err(refused)?;
    let what = match run.status {
        RunStatus::Running => "it stops within seconds",
        _ => "it is interrupted",
    };
    eprintln!(
        "cancelled run {}: {what}; `planexec resume {}` continues it",
        run.run_id, run.run_id
    );
    Ok(EXIT_OK)
}
