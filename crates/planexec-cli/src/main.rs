//! `planexec`: the command-line program. A thin shell over the `planexec` library:
//! it parses flags, builds a provider, tools and an approver, prints events as
//! the run goes, and prints the answer (or a JSON report).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use planexec::accounting::{Price, Pricing};
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::tools::{builtin, workspace::Workspace};
use planexec::{Agent, Approval, Approver, AutoApprove, Event, ModelRef, Plan, Role, RunOptions, RunReport};

/// Exit codes (documented in README.md).
const EXIT_OK: u8 = 0;
const EXIT_RUN_FAILED: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Parser)]
#[command(
    name = "planexec",
    version,
    about = "A Plan-and-Execute agent: plans a task as a DAG of tool steps, then runs it."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Plan a task, show the plan, execute it and print the answer.
    #[command(
        after_help = "Examples:\n  planexec run \"Sum the numbers in data/prices.txt and write the total to total.txt\" --yes\n  OPENAI_BASE_URL=http://localhost:11434/v1 planexec run \"List the files here\" --model qwen2.5-coder:1.5b --json --yes"
    )]
    Run(RunArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The task, in plain words.
    task: String,
    #[command(flatten)]
    provider: ProviderArgs,
    /// Folder the file tools may use; nothing outside it is touched.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
    /// Approve the plan without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Print one JSON report on stdout instead of the answer.
    #[arg(long)]
    json: bool,
    /// Most steps a plan may have.
    #[arg(long, default_value_t = 8)]
    max_steps: usize,
    /// Most replans after failures.
    #[arg(long, default_value_t = 2)]
    max_replans: u32,
    /// Most steps running at once.
    #[arg(long, default_value_t = 4)]
    parallelism: usize,
    /// Time limit of one step (and of one model request), in seconds.
    #[arg(long, default_value_t = 120.0)]
    timeout: f64,
    /// Price of a model in USD per million tokens: MODEL=INPUT,OUTPUT (repeatable).
    #[arg(long = "price", value_name = "MODEL=IN,OUT")]
    prices: Vec<String>,
}

#[derive(Args)]
struct ProviderArgs {
    /// Base URL of an OpenAI-compatible server (e.g. http://localhost:11434/v1 for Ollama).
    #[arg(long, env = "OPENAI_BASE_URL")]
    base_url: Option<String>,
    /// API key for the provider.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Model for every role unless a role has its own.
    #[arg(long, env = "PLANEXEC_MODEL", default_value = "gpt-4o-mini")]
    model: String,
    #[arg(long, value_name = "MODEL")]
    planner_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    executor_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    replanner_model: Option<String>,
    #[arg(long, value_name = "MODEL")]
    synthesizer_model: Option<String>,
}

/// A problem with what the user asked for: exit code 2.
struct BadInput(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_RUN_FAILED);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run(args).await,
        }
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(BadInput(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn parse_prices(specs: &[String]) -> Result<Pricing, BadInput> {
    let mut pricing = Pricing::default();
    for spec in specs {
        let bad = || {
            BadInput(format!("--price `{spec}` should look like MODEL=INPUT,OUTPUT in USD per million tokens, e.g. gpt-4o-mini=0.15,0.60"))
        };
        let (model, rest) = spec.split_once('=').ok_or_else(bad)?;
        let (input, output) = rest.split_once(',').ok_or_else(bad)?;
        let price = Price {
            input_per_million: input.trim().parse().map_err(|_| bad())?,
            output_per_million: output.trim().parse().map_err(|_| bad())?,
        };
        if model == "*" {
            pricing.default = Some(price);
        } else {
            pricing.models.insert(model.to_string(), price);
        }
    }
    Ok(pricing)
}

fn build_agent(args: &RunArgs, approver: Arc<dyn Approver>) -> Result<Agent, BadInput> {
    let p = &args.provider;
    if p.base_url.is_none() && p.api_key.as_deref().unwrap_or("").is_empty() {
        return Err(BadInput(
            "no model provider is configured: set OPENAI_API_KEY (or --api-key) to use OpenAI, or --base-url / OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama (http://localhost:11434/v1)".to_string(),
        ));
    }
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(BadInput(format!(
            "--timeout must be a positive number of seconds, not {}",
            args.timeout
        )));
    }
    if args.parallelism == 0 || args.max_steps == 0 {
        return Err(BadInput("--parallelism and --max-steps must be at least 1".to_string()));
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: p.base_url.clone().unwrap_or_else(|| OpenAiConfig::default().base_url),
        api_key: p.api_key.clone(),
        timeout,
        ..OpenAiConfig::default()
    })
    .map_err(|e| BadInput(e.to_string()))?;
    let provider: Arc<dyn planexec::ChatModel> = Arc::new(provider);
    let workspace = Workspace::new(&args.workspace).map_err(|e| BadInput(e.to_string()))?;
    let options = RunOptions {
        max_steps: args.max_steps,
        max_replans: args.max_replans,
        parallelism: args.parallelism,
        step_timeout: timeout,
        ..RunOptions::default()
    };
    let mut builder = Agent::builder(provider.clone(), p.model.clone())
        .tools(builtin::registry(workspace))
        .options(options)
        .pricing(parse_prices(&args.prices)?)
        .approver(approver);
    for (role, model) in [
        (Role::Planner, &p.planner_model),
        (Role::Executor, &p.executor_model),
        (Role::Replanner, &p.replanner_model),
        (Role::Synthesizer, &p.synthesizer_model),
    ] {
        if let Some(model) = model {
            builder = builder.role_model(role, ModelRef::new(provider.clone(), model.clone()));
        }
    }
    Ok(builder.build())
}

async fn run(args: RunArgs) -> Result<u8, BadInput> {
    // Never hang waiting for an answer nobody can give, and never assume yes.
    let approver: Arc<dyn Approver> = if args.yes {
        Arc::new(AutoApprove)
    } else if std::io::stdin().is_terminal() {
        Arc::new(TerminalApprover)
    } else {
        return Err(BadInput(
            "the plan needs your approval, but standard input is not a terminal; pass --yes to approve it without asking".to_string(),
        ));
    };
    let agent = build_agent(&args, approver)?;
    let tools = agent.tools();
    let side_effects: Vec<String> = tools
        .names()
        .into_iter()
        .filter(|n| tools.has_side_effects(n))
        .collect();
    agent.events().on_event(move |event| print_event(event, &side_effects));

    let report = agent.run(&args.task).await;
    print_outcome(&report, args.json);
    Ok(if report.succeeded() { EXIT_OK } else { EXIT_RUN_FAILED })
}

fn print_event(event: &Event, side_effects: &[String]) {
    let mut err = std::io::stderr().lock();
    let _ = match event {
        Event::PlanProposed { version, plan } => {
            let fx = |tool: &str| side_effects.iter().any(|t| t == tool);
            let header = if *version == 1 {
                String::new()
            } else {
                format!("(plan version {version})\n")
            };
            write!(err, "{header}{}", planexec::plan::render_text(plan, &fx, &|_| None))
        }
        Event::PlanRejectedByValidation { attempt, errors } => {
            writeln!(err, "! plan attempt {attempt} was unusable, asking again:\n{errors}")
        }
        Event::StepStarted { step_id, tool } => {
            writeln!(err, "> {step_id} started ({})", tool.as_deref().unwrap_or("reasoning"))
        }
        Event::StepRetried {
            step_id,
            attempt,
            error,
            delay_ms,
        } => writeln!(err, "~ {step_id} retry (attempt {attempt}) in {delay_ms} ms: {error}"),
        Event::StepFinished {
            step_id,
            elapsed_ms,
            summary,
        } => writeln!(err, "+ {step_id} done in {elapsed_ms} ms: {summary}"),
        Event::StepFailed {
            step_id,
            elapsed_ms,
            error,
        } => writeln!(err, "x {step_id} failed after {elapsed_ms} ms: {error}"),
        Event::Replanned {
            version,
            reason,
            replans,
        } => {
            writeln!(err, "* replan {replans} (plan version {version}): {reason}")
        }
        _ => Ok(()),
    };
}

fn print_outcome(report: &RunReport, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(report).unwrap_or_default());
    } else if let Some(answer) = &report.answer {
        println!("{answer}");
    }
    let mut err = std::io::stderr().lock();
    if let Some(error) = &report.error {
        let _ = writeln!(err, "run {} {}: {error}", report.run_id, report.status.as_str());
    }
    let _ = writeln!(err, "{}", usage_summary(report));
}

fn usage_summary(report: &RunReport) -> String {
    let mut out = format!(
        "{:<12} {:>5} {:>10} {:>10} {:>10} {:>9}\n",
        "role", "calls", "prompt", "completion", "cost", "time"
    );
    let cost = |c: Option<f64>| c.map(|c| format!("${c:.4}")).unwrap_or_else(|| "-".to_string());
    for role in Role::ALL {
        let u = report.usage.role(role);
        if u.calls > 0 {
            out.push_str(&format!(
                "{:<12} {:>5} {:>10} {:>10} {:>10} {:>8.1}s\n",
                role.as_str(),
                u.calls,
                u.prompt_tokens,
                u.completion_tokens,
                cost(u.cost),
                u.latency_ms as f64 / 1000.0
            ));
        }
    }
    let t = report.usage.total();
    out.push_str(&format!(
        "{:<12} {:>5} {:>10} {:>10} {:>10} {:>8.1}s wall",
        "total",
        t.calls,
        t.prompt_tokens,
        t.completion_tokens,
        cost(t.cost),
        report.elapsed_ms as f64 / 1000.0
    ));
    out
}

/// Asks on the terminal whether to run the plan (it was just printed).
struct TerminalApprover;

#[async_trait::async_trait]
impl Approver for TerminalApprover {
    async fn review(&self, _plan: &Plan) -> Approval {
        let answer = tokio::task::spawn_blocking(|| {
            eprint!("Run this plan? [y/N] ");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).map(|_| line)
        })
        .await;
        match answer {
            Ok(Ok(line)) if matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") => Approval::Approve,
            _ => Approval::Reject,
        }
    }
}
