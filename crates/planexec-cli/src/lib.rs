//! `planexec`: the command-line program. A thin shell over the `planexec`
//! library: it reads configuration, builds a provider, tools and an approver,
//! shows events as the run goes, and prints the answer (or a JSON report).
//!
//! Also a library, so the other shells (the Python package) build agents
//! from the same configuration, environment variables and model references
//! as the command line: [`config`], [`provider`], [`setup`], [`runs`] and
//! [`model`] are theirs to use; [`main`] is the program.

/// `print!` to stdout that drops what a closed pipe (`planexec … | head`)
/// cannot take, instead of panicking; the program goes on and ends normally.
/// (SIGPIPE stays ignored: MCP servers and shell children are pipes too.)
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!` that a closed pipe cannot turn into a panic; see [`out!`].
macro_rules! outln {
    () => { out!("\n") };
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

pub mod agents;
pub mod args;
mod bench;
pub mod config;
mod decide;
mod display;
mod execute;
mod form;
mod mcp_server;
pub mod model;
mod on_restate;
pub mod outcome;
mod plans;
pub mod provider;
mod review;
pub mod runs;
mod serve;
pub mod setup;
pub mod trust;
mod worker;

use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use planexec::render;
use planexec::tools::{builtin, workspace::Workspace};
use planexec::{Plan, ResumeOptions, StepSelection};

use args::{AgentsCommand, Cli, Command, ConfigCommand, ToolsCommand};
use config::{Config, Flags};
use outcome::{BadInput, EXIT_BAD_INPUT, EXIT_OK, EXIT_RUN_FAILED};

/// The `planexec` program: parse the command line, run the command, exit.
pub fn main() -> ExitCode {
    ExitCode::from(run(std::env::args_os()))
}

/// Run the program on `args` (the first is the program's name) and give its
/// exit code: how `planexec` runs, and how the Python package's `planexec`
/// command (a console script) runs the same program.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" that print to stdout and exit 0.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(EXIT_BAD_INPUT);
        }
    };
    if let Some(Err(message)) = cli.config.as_deref().map(config::use_file) {
        eprintln!("error: {message}");
        return EXIT_BAD_INPUT;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return EXIT_RUN_FAILED;
        }
    };
    let result = runtime.block_on(dispatch(cli));
    // A prompt interrupted by Ctrl-C leaves a thread blocked on stdin: do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(BadInput(message)) => {
            eprintln!("error: {message}");
            EXIT_BAD_INPUT
        }
    }
}

async fn dispatch(cli: Cli) -> Result<u8, BadInput> {
    let quiet = cli.quiet;
    match cli.command {
        command @ (Command::Run { .. } | Command::Exec { .. }) => dispatch_runs(command, quiet, cli.verbose).await,
        Command::Resume {
            run_id,
            rerun_inflight,
            skip_inflight,
            run,
            common,
            ledger,
        } => {
            let selection = |ids: Option<Vec<String>>| match ids {
                None => StepSelection::None,
                Some(ids) if ids.is_empty() => StepSelection::All,
                Some(ids) => StepSelection::Only(ids),
            };
            let options = ResumeOptions {
                rerun_inflight: selection(rerun_inflight),
                skip_inflight: selection(skip_inflight),
            };
            execute::resume(run_id, options, run, common, ledger, quiet, cli.verbose).await
        }
        Command::Runs { command, ledger } => runs_command(command, ledger).await,
        Command::Plans { command, ledger } => plans::command(command, ledger).await,
        command @ (Command::Approve { .. }
        | Command::Reject { .. }
        | Command::Edit { .. }
        | Command::Steer { .. }
        | Command::Cancel { .. }
        | Command::Serve { .. }
        | Command::McpServer { .. }) => dispatch_decisions(command, quiet, cli.verbose).await,
        command @ Command::Worker { .. } => worker::dispatch(command, quiet, cli.verbose).await,
        Command::Plan {
            task,
            output,
            format,
            common,
        } => execute::plan_only(task, output, format, common, quiet, cli.verbose).await,
        Command::Render { plan, format } => {
            let loaded = read_plan_file(&plan)?;
            let tools = builtin::registry(Workspace::new(".").map_err(|e| BadInput(e.to_string()))?);
            out!("{}", render::render(&loaded, format, &setup::annotations(&tools)));
            Ok(EXIT_OK)
        }
        Command::Tools {
            command: ToolsCommand::List { workspace, mcp, json },
        } => {
            let config = Config::load(&workspace, &Flags::default())?;
            let tools = setup::open_tools(&workspace, &config, &mcp).await?;
            if json {
                outln!("{:#}", tools.listing_json());
            } else {
                out!("{}", tools.listing());
            }
            tools.shutdown().await;
            Ok(EXIT_OK)
        }
        Command::Agents {
            command:
                AgentsCommand::List {
                    workspace,
                    agents,
                    json,
                },
        } => {
            let flags = Flags {
                agents,
                ..Flags::default()
            };
            let config = Config::load(&workspace, &flags)?;
            let profiles = agents::profiles(&config.agents)?;
            let tools = setup::open_tools(&workspace, &config, &[]).await?;
            out!("{}", agents::listing(&profiles, &config.agents, &tools.registry, json));
            tools.shutdown().await;
            Ok(EXIT_OK)
        }
        Command::Config {
            command: ConfigCommand::Show { workspace, json },
        } => show_config(&workspace, json),
        Command::Trust { path, forget } => trust_file(&path, forget),
        Command::Model { command } => model::command(command, quiet).await,
        Command::Bench {
            tasks,
            suite,
            part,
            repeat,
            json,
            db,
            engine,
            common,
        } => match bench::Source::from_args(tasks, suite, part) {
            _ if engine.engine.as_deref() == Some("restate") => on_restate::bench(&engine, json).await,
            Ok(source) => {
                let how = bench::How { repeat, json, db };
                bench::bench(source, how, common, quiet, cli.verbose).await
            }
            Err(e) => Err(e),
        },
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "planexec", &mut std::io::stdout());
            Ok(EXIT_OK)
        }
    }
}

/// `config show`: every effective value and where it came from.
fn show_config(workspace: &Path, json: bool) -> Result<u8, BadInput> {
    let config = Config::load(workspace, &Flags::default())?;
    if json {
        outln!("{:#}", config.show_json());
        return Ok(EXIT_OK);
    }
    out!("{}", config.show());
    if config.files.is_empty() {
        eprintln!(
            "(no config file found: looked for {} and {})",
            workspace.join("planexec.toml").display(),
            config::user_config_path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
    }
    Ok(EXIT_OK)
}

/// `trust [--forget]`: trust a workspace config file as it is now, or stop trusting it.
fn trust_file(path: &Path, forget: bool) -> Result<u8, BadInput> {
    if forget {
        let was = trust::forget(path).map_err(BadInput)?;
        let what = if was { "no longer trusted:" } else { "was not trusted:" };
        outln!("{what} {}", path.display());
    } else {
        outln!("{}", trust::trust(path).map_err(BadInput)?);
    }
    Ok(EXIT_OK)
}

/// Read and parse a plan file; errors name the file and, for malformed JSON, the position.
pub(crate) fn read_plan_file(path: &Path) -> Result<Plan, BadInput> {
    let text = std::fs::read_to_string(path).map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
    planexec::plan::parse_plan_file(&text).map_err(|e| BadInput(format!("{}: {e}", path.display())))
}

/// `run` and `exec`: in this process, or submitted to Restate (`--engine restate`).
async fn dispatch_runs(command: Command, quiet: bool, verbose: u8) -> Result<u8, BadInput> {
    match command {
        Command::Run {
            task,
            mcp_prompt,
            run,
            engine,
            common,
            ledger,
        } => {
            let task = args::TaskSource::of(task, mcp_prompt)?;
            if let Some(ingress) = on_restate::target(&engine, &common.workspace())? {
                let args::TaskSource::Words(words) = task else {
                    return Err(BadInput(
                        "--mcp-prompt works on local runs only: give the task in words".into(),
                    ));
                };
                return on_restate::run(&ingress, words, None, &run, &engine, quiet).await;
            }
            execute::execute(task, None, run, common, ledger, quiet, verbose).await
        }
        Command::Exec {
            plan,
            task,
            run,
            engine,
            common,
            ledger,
        } => {
            let loaded = read_plan_file(&plan)?;
            let task = task.unwrap_or_else(|| loaded.goal.clone());
            if let Some(ingress) = on_restate::target(&engine, &common.workspace())? {
                return on_restate::run(&ingress, task, Some(loaded), &run, &engine, quiet).await;
            }
            let task = args::TaskSource::Words(task);
            execute::execute(task, Some((plan, loaded)), run, common, ledger, quiet, verbose).await
        }
        _ => Err(BadInput("not a run command".to_string())),
    }
}

/// `runs …`: from the ledger; `runs show` of a run on Restate from its workflow.
async fn runs_command(command: args::RunsCommand, ledger: args::LedgerArgs) -> Result<u8, BadInput> {
    if let args::RunsCommand::Show { run_id, json, engine } = &command {
        if let Some(ingress) = on_restate::target(engine, Path::new("."))? {
            return on_restate::show(&ingress, run_id, *json).await;
        }
    }
    runs::command(command, ledger).await
}

/// The commands for runs that wait for people: decisions, and the servers (HTTP API, MCP).
async fn dispatch_decisions(command: Command, quiet: bool, verbose: u8) -> Result<u8, BadInput> {
    match command {
        Command::Approve {
            run_id,
            step,
            answer,
            resume,
            by,
            engine,
            run,
            common,
            ledger,
        } => {
            if let Some(ingress) = on_restate::target(&engine, &common.workspace())? {
                let decision = on_restate::Decision {
                    step,
                    approve: true,
                    by: decide::who(by),
                    reason: String::new(),
                };
                return on_restate::decide(&ingress, &run_id, decision).await;
            }
            let args = decide::Approve {
                run_id,
                step,
                answer,
                resume,
                by,
            };
            decide::approve(args, run, common, ledger, quiet, verbose).await
        }
        Command::Reject {
            run_id,
            reason,
            step,
            by,
            engine,
            ledger,
        } => match on_restate::target(&engine, Path::new("."))? {
            Some(ingress) => {
                let decision = on_restate::Decision {
                    step,
                    approve: false,
                    by: decide::who(by),
                    reason,
                };
                on_restate::decide(&ingress, &run_id, decision).await
            }
            None if step.is_some() => Err(BadInput(
                "--step rejects one call of a run on Restate; a local run's `reject` rejects the run (its approved calls are kept)".into(),
            )),
            None => decide::reject(run_id, reason, by, ledger).await,
        },
        Command::Edit {
            run_id,
            by,
            common,
            ledger,
        } => decide::edit(run_id, by, common, ledger, quiet).await,
        Command::Steer {
            run_id,
            message,
            by,
            engine,
            ledger,
        } => match on_restate::target(&engine, Path::new("."))? {
            Some(ingress) => on_restate::steer(&ingress, &run_id, &message).await,
            None => decide::steer(run_id, message, by, ledger).await,
        },
        Command::Cancel { run_id, by, ledger } => decide::cancel(run_id, by, ledger).await,
        Command::Serve {
            listen,
            token,
            engine,
            common,
            ledger,
        } => serve::command(listen, token, engine, common, ledger, quiet, verbose).await,
        Command::McpServer {
            common,
            ledger,
            yes,
            http,
            token,
        } => mcp_server::command(common, ledger, yes, (http, token), verbose).await,
        // dispatch sends only the commands above here.
        _ => Err(BadInput("not a decision or serve command".to_string())),
    }
}
