//! Runs on Restate from the command line. `run`/`exec --engine restate`
//! submit the run to the server's ingress (the workers make it), follow it
//! and print its report as a local run prints its own; `approve`/`reject`
//! decide on the plan it waits for; `runs show` asks its workflow. Nothing
//! here calls a model or a tool: the workers do, with their own settings.

use std::path::Path;
use std::time::Duration;

use planexec::store::Waiting;
use planexec::Plan;
use planexec_restate::bench::BenchOptions;
use planexec_restate::decision::{PlanDecision, StepDecision};
use planexec_restate::ingress::Ingress;
use planexec_restate::workflow::RunRequest;
use serde_json::{json, Value};

use crate::args::{EngineArgs, RunFlags};
use crate::config::{Config, Flags};
use crate::display::Display;
use crate::outcome::{BadInput, EXIT_OK, EXIT_RUN_FAILED};

/// The ingress of the Restate server runs go to, when the engine (the
/// flag, else `PLANEXEC_ENGINE`, else the config's `engine`) is `restate`;
/// `None` for local runs.
pub(crate) fn target(engine: &EngineArgs, workspace: &Path) -> Result<Option<Ingress>, BadInput> {
    let config = Config::load(workspace, &Flags::default())?;
    let chosen = engine.engine.as_deref().or(config.get("engine")).unwrap_or("local");
    match chosen {
        "local" => Ok(None),
        "restate" => {
            let url = engine.ingress.as_deref().or(config.get("restate.ingress"));
            Ok(Some(Ingress::new(url.unwrap_or("http://127.0.0.1:8080"))))
        }
        other => Err(BadInput(format!(
            "engine `{other}` is not known: use local (this process) or restate (the workers behind a Restate server)"
        ))),
    }
}

/// Submit a run to Restate; with `--detach` print its id and return, else
/// wait for its report and print it.
pub(crate) async fn run(
    ingress: &Ingress,
    task: String,
    plan: Option<Plan>,
    flags: &RunFlags,
    engine: &EngineArgs,
    quiet: bool,
) -> Result<u8, BadInput> {
    if flags.record.is_some() || flags.replay.is_some() {
        return Err(BadInput(
            "--record and --replay work on local runs; a run on Restate is journaled by Restate itself".to_string(),
        ));
    }
    // The plan waits for a decision only when asked to: no one is at a
    // worker's terminal to review it.
    let request = RunRequest {
        task,
        plan,
        approve: flags.approve.as_deref() == Some("later"),
    };
    let run_id = ingress.start(&request).await?;
    if engine.detach {
        match flags.json {
            true => outln!("{}", json!({ "run_id": run_id })),
            false => outln!("{run_id}"),
        }
        return Ok(EXIT_OK);
    }
    let display = Display::new(quiet, Vec::new());
    display.info(&format!("run {run_id} is on Restate; the workers make it"));
    let report = follow(ingress, &run_id, &display).await?;
    crate::execute::finish(&display, &report, flags.json);
    Ok(crate::execute::exit_code(&report))
}

/// Wait for run `run_id`'s report, saying how to decide whenever what it
/// waits for changes.
async fn follow(ingress: &Ingress, run_id: &str, display: &Display) -> Result<planexec::RunReport, BadInput> {
    let report = ingress.wait(run_id);
    tokio::pin!(report);
    let (mut told, mut shown) = (Value::Null, 0);
    loop {
        tokio::select! {
            report = &mut report => {
                // The steps that finished since the last look, from the report.
                let report = report.map_err(BadInput)?;
                for step in report.steps.iter().skip(shown).filter(|s| s.started_at.is_some()) {
                    display.println(&finished_line(&serde_json::to_value(step).unwrap_or_default()));
                }
                return Ok(report);
            }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {
                let status = ingress.status(run_id).await.unwrap_or_default();
                let finished = status["finished"].as_array().cloned().unwrap_or_default();
                for step in finished.iter().skip(shown) {
                    display.println(&finished_line(step));
                }
                shown = shown.max(finished.len());
                let waiting = status["waiting"].clone();
                if !waiting.is_null() && waiting != told {
                    display.println(&how_to_decide(run_id, &waiting));
                }
                told = waiting;
            }
        }
    }
}

/// One line for a step a Restate run finished: `✓ s3 http_get (w2)`.
fn finished_line(step: &Value) -> String {
    let mark = if step["status"] == "succeeded" { "✓" } else { "✗" };
    let what = step["tool"].as_str().unwrap_or("reasoning");
    let worker = step["worker"].as_str().unwrap_or("?");
    match step["error"].as_str() {
        Some(error) => format!(
            "  {mark} {} {what} ({worker}): {error}",
            step["id"].as_str().unwrap_or("?")
        ),
        None => format!("  {mark} {} {what} ({worker})", step["id"].as_str().unwrap_or("?")),
    }
}

/// What to type to decide on what a Restate run waits for (`waiting`, from
/// its `status`): its plan, or each call its mode asks about.
fn how_to_decide(run_id: &str, waiting: &Value) -> String {
    let on = "--engine restate";
    let calls = serde_json::from_value::<Waiting>(waiting.clone())
        .map(|w| w.calls())
        .unwrap_or_default();
    if calls.is_empty() {
        return format!(
            "run {run_id} waits for a decision on its plan (planexec runs show {run_id} {on} shows it):\n  planexec approve {run_id} {on}\n  planexec reject {run_id} {on} --reason \"...\""
        );
    }
    let mut text = format!(
        "run {run_id} waits for a decision on {} call(s); each is decided on its own:",
        calls.len()
    );
    for call in calls {
        let step = call.step_id;
        text += &format!(
            "\n  {step}: {} {}\n    planexec approve {run_id} --step {step} {on}\n    planexec reject {run_id} --step {step} {on} --reason \"...\"",
            call.tool, call.args
        );
    }
    text
}

/// A decision from `approve` or `reject`: on the plan, or with `step` on one call.
pub(crate) struct Decision {
    pub step: Option<String>,
    pub approve: bool,
    pub by: String,
    pub reason: String,
}

/// Decide on what run `run_id` waits for: its plan, or one step's call.
pub(crate) async fn decide(ingress: &Ingress, run_id: &str, d: Decision) -> Result<u8, BadInput> {
    let verb = if d.approve { "approved" } else { "rejected" };
    match d.step {
        Some(step) => {
            let decision = StepDecision {
                step: step.clone(),
                approve: d.approve,
                by: d.by,
                reason: d.reason,
            };
            ingress.decide_step(run_id, &decision).await?;
            outln!("{verb} step {step} of run {run_id}; the workers go on with it");
        }
        None => {
            let decision = match d.approve {
                true => PlanDecision::Approve { by: d.by },
                false => PlanDecision::Reject {
                    by: d.by,
                    reason: d.reason,
                },
            };
            ingress.decide(run_id, &decision).await?;
            outln!("{verb} run {run_id}'s plan; the workers go on with it");
        }
    }
    Ok(EXIT_OK)
}

/// Send a Restate run a steering message.
pub(crate) async fn steer(ingress: &Ingress, run_id: &str, message: &str) -> Result<u8, BadInput> {
    let sent = ingress.steer(run_id, message).await?;
    outln!(
        "sent run {run_id} steering message {}: its replanner follows it at the run's next decision point",
        sent["steer"]
    );
    Ok(EXIT_OK)
}

/// Print a Restate run: its report once it has finished, else what it waits for.
pub(crate) async fn show(ingress: &Ingress, run_id: &str, json: bool) -> Result<u8, BadInput> {
    if let Some(report) = ingress.report(run_id).await? {
        match json {
            true => outln!("{}", serde_json::to_string_pretty(&report).unwrap_or_default()),
            false => {
                outln!("run {run_id}: {}", report.status.as_str());
                for step in &report.steps {
                    let worker = step.worker.as_deref().unwrap_or("-");
                    outln!("  {} {} (worker {worker})", step.id, step.status.as_str());
                }
                if let Some(answer) = &report.answer {
                    outln!("{answer}");
                }
            }
        }
        return Ok(if report.succeeded() { EXIT_OK } else { EXIT_RUN_FAILED });
    }
    let status = ingress.status(run_id).await?;
    match json {
        true => outln!("{}", serde_json::to_string_pretty(&status).unwrap_or_default()),
        false if status["waiting"].is_null() => {
            outln!("run {run_id}: running");
            for step in status["finished"].as_array().into_iter().flatten() {
                outln!("{}", finished_line(step));
            }
        }
        false => {
            outln!("run {run_id}: awaiting approval");
            if let Ok(plan) = serde_json::from_value::<Plan>(status["waiting"]["plan"].clone()) {
                outln!("{}", serde_json::to_string_pretty(&plan).unwrap_or_default());
            }
            outln!("{}", how_to_decide(run_id, &status["waiting"]));
        }
    }
    Ok(EXIT_OK)
}

/// `planexec bench --engine restate` ([`planexec_restate::bench`]).
pub(crate) async fn bench(engine: &EngineArgs, json: bool) -> Result<u8, BadInput> {
    let config = Config::load(Path::new("."), &Flags::default())?;
    let mut options = BenchOptions::default();
    if let Some(url) = engine.ingress.as_deref().or(config.get("restate.ingress")) {
        options.ingress = url.to_string();
    }
    if let Some(url) = config.get("restate.admin") {
        options.admin = url.to_string();
    }
    let scratch = tempfile::tempdir().map_err(|e| BadInput(format!("no scratch folder for the bench: {e}")))?;
    eprintln!(
        "measuring on Restate at {} (admin {}): its own workers join a new pool there",
        options.ingress, options.admin
    );
    let figures = planexec_restate::bench::run(&options, scratch.path())
        .await
        .map_err(BadInput)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&figures).unwrap_or_default());
        return Ok(EXIT_OK);
    }
    outln!(
        "overhead per step: {:.1} ms ({} steps of {} ms in a chain: {:.0} ms on Restate, {:.0} ms in process)",
        figures.overhead_ms_per_step,
        options.chain,
        options.step_ms,
        figures.chain_restate_ms,
        figures.chain_local_ms
    );
    outln!(
        "{} runs of {} parallel {} ms steps: {:.2} s on one worker, {:.2} s on two ({:.2}x the throughput; {} steps at once per worker)",
        options.runs,
        options.width,
        options.step_ms,
        figures.one_worker_s,
        figures.two_workers_s,
        figures.throughput_ratio,
        options.capacity
    );
    Ok(EXIT_OK)
}
