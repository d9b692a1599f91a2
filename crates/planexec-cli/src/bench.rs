//! `planexec bench`: a task file under several strategies.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planexec::{Agent, Mode, Strategy};

use crate::args::CommonArgs;
use crate::config::Config;
use crate::display::Display;
use crate::setup::{assemble_agent, local_tools, model_setup, Cassette};
use crate::{init_logging, BadInput, EXIT_OK, EXIT_RUN_FAILED};

/// `planexec bench`: every task under every chosen strategy, one run at a
/// time, each in a fresh copy of its workspace, unattended (mode auto, every
/// confirmation answered yes), with no ledger.
pub async fn bench(
    tasks: PathBuf,
    repeat: u32,
    json: bool,
    common: CommonArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let loaded = planexec::bench::load_tasks(&tasks)?;
    let strategies: Vec<Strategy> = match &common.strategy {
        None => Strategy::ALL.to_vec(),
        Some(list) => list.split(',').map(Strategy::parse).collect::<Result<_, _>>()?,
    };
    if repeat == 0 {
        return Err(BadInput("--repeat must be at least 1".to_string()));
    }
    let mut flags = common.flags();
    flags.strategy = None; // a list here, set per run below
    let display = Display::new(quiet || json, Vec::new());
    init_logging(verbose, &display);
    // The provider is made once, from the configuration where the command runs.
    let config = Config::load(&common.workspace(), &flags)?;
    let models = model_setup(&config, &config.run_options()?, &Cassette::default())?;
    if let Some(chosen) = &models.chosen {
        display.info(chosen);
    }
    if !common.mcp.is_empty() || !config.mcp_servers.is_empty() {
        eprintln!("note: bench runs the built-in tools only; MCP servers are not started");
    }
    let agent_for = |strategy: Strategy, workspace: &Path| -> Result<Agent, String> {
        let config = Config::load(workspace, &flags)?;
        let mut options = config.run_options()?;
        options.strategy = strategy;
        options.mode = Mode::Auto;
        let registry = local_tools(workspace, &config).map_err(|e| e.0)?;
        let approver = Arc::new(planexec::AutoApprove);
        assemble_agent(&config, &models, options, Arc::new(registry), approver, None).map_err(|e| e.0)
    };
    let total = loaded.len() * strategies.len() * repeat as usize;
    let mut done = 0;
    let mut progress = |run: &planexec::bench::BenchRun| {
        done += 1;
        if !quiet && !json {
            let verdict = match &run.failure {
                None => "pass".to_string(),
                Some(why) => format!("FAIL ({})", planexec::text::truncate_chars(why, 100)),
            };
            eprintln!(
                "[{done}/{total}] {} / {}: {verdict}, {} calls, {:.1} s",
                run.task,
                run.strategy,
                run.model_calls,
                run.wall_ms as f64 / 1000.0
            );
        }
    };
    let runs = planexec::bench::run(&loaded, &strategies, repeat, &agent_for, &mut progress).await?;
    let rows = planexec::bench::summarize(&runs);
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"runs": runs, "summary": rows})).unwrap_or_default()
        );
    } else {
        out!("{}", planexec::bench::render_table(&rows));
    }
    Ok(if runs.iter().all(|r| r.passed) {
        EXIT_OK
    } else {
        EXIT_RUN_FAILED
    })
}
