//! `planexec bench`: a task file under several strategies, or a task suite
//! (tune and held-out parts) under one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planexec::{Agent, Mode, Strategy};

use crate::args::CommonArgs;
use crate::config::Config;
use crate::display::init_logging;
use crate::display::Display;
use crate::outcome::{BadInput, EXIT_OK, EXIT_RUN_FAILED};
use crate::setup::{assemble_agent, local_tools, model_setup, Cassette, Recorded};

/// What to bench: one task file, or a suite folder (one part, or both).
pub enum Source {
    Tasks(PathBuf),
    Suite { dir: PathBuf, part: Option<String> },
}

impl Source {
    pub fn from_args(tasks: Option<PathBuf>, suite: Option<PathBuf>, part: Option<String>) -> Result<Source, BadInput> {
        match (tasks, suite) {
            (None, Some(dir)) => Ok(Source::Suite { dir, part }),
            (Some(file), None) => Ok(Source::Tasks(file)),
            _ => Err(BadInput(
                "give a task file or --suite DIR (not both); see `planexec bench --help`".to_string(),
            )),
        }
    }

    fn load(&self) -> Result<Vec<planexec::bench::BenchTask>, String> {
        match self {
            Source::Tasks(file) => planexec::bench::load_tasks(file),
            Source::Suite { dir, part } => planexec::bench::suite::load_suite(dir, part.as_deref()),
        }
    }

    /// The strategies when none is named: every one for a task file (it
    /// compares them); the configured one for a suite (it measures the agent).
    fn default_strategies(&self, configured: Strategy) -> Vec<Strategy> {
        match self {
            Source::Tasks(_) => Strategy::ALL.to_vec(),
            Source::Suite { .. } => vec![configured],
        }
    }
}

/// How to bench: runs per task, the output's form, and the ledger to record runs in.
pub struct How {
    pub repeat: u32,
    pub json: bool,
    pub db: Option<String>,
}

/// `planexec bench`: every task under every chosen strategy, one run at a
/// time, each in a fresh copy of its workspace, unattended (mode auto, every
/// confirmation answered yes), recorded in a ledger only with `--db`.
pub async fn bench(source: Source, how: How, common: CommonArgs, quiet: bool, verbose: u8) -> Result<u8, BadInput> {
    let How { repeat, json, db } = how;
    let loaded = source.load()?;
    if repeat == 0 {
        return Err(BadInput("--repeat must be at least 1".to_string()));
    }
    let mut flags = common.flags();
    flags.strategy = None; // a list here, set per run below
    let display = Display::new(quiet || json, Vec::new());
    init_logging(verbose, &display);
    // The provider is made once, from the configuration where the command runs.
    let config = Config::load(&common.workspace(), &flags)?;
    let strategies: Vec<Strategy> = match &common.strategy {
        None => source.default_strategies(config.run_options()?.strategy),
        Some(list) => list.split(',').map(Strategy::parse).collect::<Result<_, _>>()?,
    };
    let models = model_setup(&config, &config.run_options()?, &Cassette::default())?;
    let store = match &db {
        Some(db) => Some(crate::runs::open(Some(db)).await?),
        None => None,
    };
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
        let recorded = store.clone().map(|store| Recorded {
            store,
            workspace: workspace.to_path_buf(),
        });
        assemble_agent(&config, &models, options, Arc::new(registry), approver, recorded).map_err(|e| e.0)
    };
    let total = loaded.len() * strategies.len() * repeat as usize;
    let mut done = 0;
    let mut progress = |run: &planexec::bench::BenchRun| {
        done += 1;
        // Progress goes to stderr, so it shows with --json too.
        if !quiet {
            let verdict = match &run.failure {
                None => "pass".to_string(),
                Some(why) if store.is_some() => {
                    format!("FAIL ({}) [{}]", planexec::text::truncate_chars(why, 100), run.run_id)
                }
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
    match source {
        Source::Tasks(_) => print_comparison(&runs, json),
        Source::Suite { .. } => print_suite(&runs, &models.describe(), json),
    }
    Ok(if runs.iter().all(|r| r.passed) {
        EXIT_OK
    } else {
        EXIT_RUN_FAILED
    })
}

fn print_comparison(runs: &[planexec::bench::BenchRun], json: bool) {
    let rows = planexec::bench::summarize(runs);
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"runs": runs, "summary": rows})).unwrap_or_default()
        );
    } else {
        out!("{}", planexec::bench::render_table(&rows));
        out!(
            "\nprompt tokens per role (median; those read from a prompt cache in brackets):\n{}",
            planexec::bench::render_roles(&rows)
        );
    }
}

fn print_suite(runs: &[planexec::bench::BenchRun], model: &str, json: bool) {
    let rows = planexec::bench::suite::summarize(runs);
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"model": model, "runs": runs, "summary": rows}))
                .unwrap_or_default()
        );
    } else {
        out!("{}", planexec::bench::suite::render_table(model, &rows));
    }
}
