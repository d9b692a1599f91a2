//! What a command sets up before a run: the tools (built-ins, the shell, MCP
//! servers), the providers and models of each role, the ledger and cassettes,
//! and traces; then the agent from all of them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planexec::llm::cassette::{Recorder, Replayer};
use planexec::render::Annotations;
use planexec::tools::python::Python;
use planexec::tools::shell::Shell;
use planexec::tools::{builtin, workspace::Workspace};
use planexec::{Agent, Approver, ChatModel, ModelRef, Role, RunOptions, RunStore, ToolRegistry};
use planexec_mcp::McpServers;

use crate::args::RunFlags;
use crate::config::Config;
use crate::display::Display;
use crate::outcome::BadInput;
use crate::provider::{self, ModelReference, Provider, Providers};

/// A run's tools: built-ins, the shell, and every configured MCP server's.
pub struct Tools {
    pub registry: Arc<ToolRegistry>,
    mcp: Option<McpServers>,
}

impl Tools {
    /// `result`, stopping the MCP servers first when it is an error (the
    /// command ends there, and the servers must not outlive it).
    pub async fn or_shutdown<T>(&self, result: Result<T, BadInput>) -> Result<T, BadInput> {
        if result.is_err() {
            if let Some(mcp) = &self.mcp {
                mcp.shutdown().await;
            }
        }
        result
    }

    /// Stop the MCP servers (the run is over).
    pub async fn shutdown(self) {
        if let Some(mcp) = self.mcp {
            mcp.shutdown().await;
        }
    }

    /// The task a run gets: its words, or the text of an MCP server's prompt.
    pub async fn task(&self, source: crate::args::TaskSource) -> Result<String, BadInput> {
        match source {
            crate::args::TaskSource::Words(words) => Ok(words),
            crate::args::TaskSource::McpPrompt { spec, arguments } => match &self.mcp {
                Some(mcp) => mcp.prompt_text(&spec, &arguments).await.map_err(|e| BadInput(e.0)),
                None => Err(BadInput(format!(
                    "--mcp-prompt {spec}: no MCP server is configured; add one with --mcp NAME=COMMAND or [[mcp_servers]]"
                ))),
            },
        }
    }

    /// The prompts of every MCP server: (server, prompt).
    fn prompts(&self) -> Vec<(String, planexec_mcp::Prompt)> {
        self.mcp
            .iter()
            .flat_map(|m| m.servers().iter())
            .flat_map(|s| s.prompts().into_iter().map(|p| (s.name().to_string(), p)))
            .collect()
    }

    /// The tools by where they come from: built-in (`None`), then each MCP server.
    fn groups(&self) -> Vec<(Option<String>, Vec<Arc<planexec::tools::ToolEntry>>)> {
        let servers: Vec<String> = self
            .mcp
            .iter()
            .flat_map(|m| m.servers().iter().map(|s| s.name().to_string()))
            .collect();
        let mut groups: Vec<(Option<String>, Vec<Arc<planexec::tools::ToolEntry>>)> = vec![(None, Vec::new())];
        groups.extend(servers.iter().map(|name| (Some(name.clone()), Vec::new())));
        for entry in self.registry.entries() {
            let server = servers
                .iter()
                .position(|s| entry.tool.name().starts_with(&format!("{s}.")));
            groups[server.map_or(0, |i| i + 1)].1.push(entry);
        }
        groups
    }

    /// `tools list --json`: every tool with its server, effect class and argument schema.
    pub fn listing_json(&self) -> serde_json::Value {
        let tools: Vec<serde_json::Value> = self
            .groups()
            .into_iter()
            .flat_map(|(server, entries)| {
                entries.into_iter().map(move |entry| {
                    serde_json::json!({
                        "name": entry.tool.name(),
                        "server": server,
                        "effect": entry.declared_effect().as_str(),
                        "effect_set_in_config": entry.effect_overridden(),
                        "description": entry.tool.description(),
                        "parameters": entry.tool.parameters(),
                    })
                })
            })
            .collect();
        let prompts: Vec<serde_json::Value> = self
            .prompts()
            .into_iter()
            .map(|(server, p)| {
                let arguments: Vec<serde_json::Value> = p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|a| serde_json::json!({"name": a.name, "required": a.required == Some(true)}))
                    .collect();
                serde_json::json!({"server": server, "name": p.name, "description": p.description, "arguments": arguments})
            })
            .collect();
        serde_json::json!({ "tools": tools, "prompts": prompts })
    }

    pub fn listing(&self) -> String {
        let groups: Vec<(String, Vec<Arc<planexec::tools::ToolEntry>>)> = self
            .groups()
            .into_iter()
            .map(|(server, entries)| {
                let title = server.map_or_else(|| "built-in".to_string(), |name| format!("MCP server `{name}`"));
                (title, entries)
            })
            .collect();
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
        let prompts = self.prompts();
        if !prompts.is_empty() {
            out.push_str(&format!(
                "prompts ({}; a task with `planexec run --mcp-prompt SERVER/PROMPT NAME=VALUE…`)\n",
                prompts.len()
            ));
        }
        for (server, p) in prompts {
            let args: Vec<String> = p
                .arguments
                .iter()
                .flatten()
                .map(|a| format!("{}{}", a.name, if a.required == Some(true) { "" } else { "?" }))
                .collect();
            let about = p.description.as_deref().unwrap_or("");
            out.push_str(&format!("  {server}/{}({})  {about}\n", p.name, args.join(", ")));
        }
        out
    }
}

/// The built-in tools and the shell on `workspace`, as the configuration sets
/// them up (effect overrides, disabled tools); MCP servers come on top.
pub fn local_tools(workspace: &Path, config: &Config) -> Result<ToolRegistry, BadInput> {
    let ws = Arc::new(Workspace::new(workspace).map_err(|e| BadInput(e.to_string()))?);
    let mut registry = builtin::registry((*ws).clone());
    if let Some(shell) = config.shell()? {
        // The python tool comes with the shell (the same power, a program in
        // place of a command line) where python3 runs: on held-out-3 (spent)
        // the 1.5B model passed 13 of 34 tasks with it and 4 without, the
        // transformations no fixed tool does in one call. Set to false to
        // leave it out; set to true, a machine without python3 is an error.
        match config.python()? {
            (false, _) => {}
            (true, asked) => match Python::find(ws.clone(), shell.clone(), "python3") {
                Some(python) => registry.register(Arc::new(python)).map_err(BadInput)?,
                None if asked => return Err(BadInput("shell.python = true, but `python3 --version` does not run here: install Python 3 or set it to false".to_string())),
                None => {}
            },
        }
        registry.register(Arc::new(Shell::new(ws, shell))).map_err(BadInput)?;
    }
    let hosts = config.http_hosts();
    if !hosts.is_empty() {
        registry.remove("http_get");
        registry.register(builtin::http_get(hosts)).map_err(BadInput)?;
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

pub async fn open_tools(workspace: &Path, config: &Config, mcp_flags: &[String]) -> Result<Tools, BadInput> {
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
    let servers: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    check_tool_names(config, &registry, &servers)?;
    Ok(Tools { registry, mcp })
}

/// A `[tools."NAME"]` section for a tool that does not exist is a mistake to
/// point out (with the nearest name), not a setting to ignore in silence. One
/// for a server that is not configured here (`other.tool`) only gets a notice:
/// the user's own config may speak of servers other workspaces start.
fn check_tool_names(config: &Config, registry: &ToolRegistry, servers: &[String]) -> Result<(), BadInput> {
    let names = registry.names();
    for (tool, entry) in config.configured_tools() {
        if names.iter().any(|n| n == tool) {
            continue;
        }
        let server = tool.split_once('.').map(|(server, _)| server);
        if let Some(server) = server.filter(|s| !servers.iter().any(|known| known == s)) {
            eprintln!(
                "notice: tools.\"{tool}\" (from {}) is for MCP server `{server}`, which is not configured here; ignored",
                entry.source
            );
            continue;
        }
        let nearest = names
            .iter()
            .min_by_key(|n| strsim::levenshtein(n, tool))
            .map(|n| format!("did you mean `{n}`? "))
            .unwrap_or_default();
        return Err(BadInput(format!(
            "tools.\"{tool}\" (from {}) names a tool that does not exist; {nearest}(tools: {})",
            entry.source,
            names.join(", ")
        )));
    }
    Ok(())
}

pub fn annotations(tools: &ToolRegistry) -> Annotations<'static> {
    Annotations {
        side_effect_tools: tools
            .names()
            .into_iter()
            .filter(|t| tools.has_side_effects(t))
            .collect(),
        ..Annotations::default()
    }
}

/// The ledger runs are recorded in, and the workspace recorded with them (so
/// `resume` finds it again).
pub struct Recorded {
    pub store: Arc<dyn RunStore>,
    pub workspace: PathBuf,
}

/// Where model calls go besides the provider: a cassette to record to or replay from.
#[derive(Default)]
pub struct Cassette {
    pub record: Option<PathBuf>,
    pub replay: Option<PathBuf>,
}

/// An agent from the effective configuration.
pub fn build_agent(
    display: &Display,
    config: &Config,
    tools: Arc<ToolRegistry>,
    approver: Arc<dyn Approver>,
    ledger: Option<Recorded>,
    cassette: &Cassette,
) -> Result<Agent, BadInput> {
    let options = config.run_options()?;
    let models = model_setup(config, &options, cassette)?;
    if let Some(chosen) = &models.chosen {
        display.info(chosen);
    }
    assemble_agent(config, &models, options, tools, approver, ledger)
}

/// The model side of an agent: each role's provider and model, made once
/// (loading the embedded model takes a while).
pub struct ModelSetup {
    main: ModelRef,
    /// Roles with a model of their own.
    roles: Vec<(Role, ModelRef)>,
    /// Agent profiles with a model of their own (`[agents.NAME] model`).
    agents: Vec<(String, ModelRef)>,
    /// Which provider `auto` chose and why, to tell the user.
    pub chosen: Option<String>,
}

impl ModelSetup {
    /// The main model, as a benchmark table names it: `qwen… on local /path`.
    pub fn describe(&self) -> String {
        format!("{:?}", self.main)
    }
}

/// The providers and models of every role: the main model reference
/// (`model`, or the configured provider's default), and each role's own
/// (`models.ROLE`: `provider/model`, or a model name on the main provider).
pub fn model_setup(config: &Config, options: &RunOptions, cassette: &Cassette) -> Result<ModelSetup, BadInput> {
    if let Some(path) = &cassette.replay {
        // A cassette answers every role, whatever model each was recorded with.
        let replayer = Replayer::open(path)?;
        let model = replayer.model().unwrap_or("replay").to_string();
        let main = ModelRef::new(Recorders::default().wrap(Arc::new(replayer), cassette)?, model);
        return Ok(ModelSetup {
            main,
            roles: Vec::new(),
            agents: Vec::new(),
            chosen: None,
        });
    }
    let (configured, why) = provider::configured(config)?;
    let auto = config.get("provider").unwrap_or("auto") == "auto";
    let main = main_reference(config, configured);
    let mut providers = Providers::default();
    let mut recorders = Recorders::default();
    let timeout = options.step_timeout;
    let (provider, model) = providers.get(config, &main, timeout)?;
    let main_model = ModelRef::new(recorders.wrap(provider, cassette)?, model);
    let mut roles = Vec::new();
    for role in Role::ALL {
        let Some(text) = config.role_model(role.as_str()) else {
            continue;
        };
        let reference = ModelReference::parse(text, main.provider);
        // A bare name chooses a model on a server; the embedded model is one file.
        if main.provider == Provider::Local && !ModelReference::names_provider(text) {
            continue;
        }
        let (provider, model) = providers.get(config, &reference, timeout)?;
        roles.push((role, ModelRef::new(recorders.wrap(provider, cassette)?, model)));
    }
    let mut agents = Vec::new();
    for agent in &config.agents {
        let Some(text) = &agent.settings.model else {
            continue;
        };
        let reference = ModelReference::parse(text, main.provider);
        let (provider, model) = providers.get(config, &reference, timeout)?;
        agents.retain(|(name, _)| name != &agent.name);
        agents.push((
            agent.name.clone(),
            ModelRef::new(recorders.wrap(provider, cassette)?, model),
        ));
    }
    Ok(ModelSetup {
        main: main_model,
        roles,
        agents,
        chosen: auto.then(|| format!("provider: {} ({why})", main.provider.as_str())),
    })
}

/// The main model: `model` when it names a provider, or when it is set for a
/// server; else the configured provider's own default.
fn main_reference(config: &Config, configured: Provider) -> ModelReference {
    let entry = config.entry("model");
    match entry {
        Some(e) if ModelReference::names_provider(&e.value) => ModelReference::parse(&e.value, configured),
        Some(e)
            if configured == Provider::OpenAiCompatible
                || (configured == Provider::Anthropic && e.source != crate::config::Source::Default) =>
        {
            ModelReference::parse(&e.value, configured)
        }
        _ => ModelReference {
            provider: configured,
            model: None,
        },
    }
}

/// Providers with every exchange recorded to the cassette, when asked: one
/// recorder per provider, all writing the same file.
#[derive(Default)]
struct Recorders {
    made: Vec<(Arc<dyn ChatModel>, Arc<Recorder>)>,
}

impl Recorders {
    fn wrap(&mut self, provider: Arc<dyn ChatModel>, cassette: &Cassette) -> Result<Arc<dyn ChatModel>, BadInput> {
        let Some(path) = &cassette.record else {
            return Ok(provider);
        };
        if let Some((_, recorder)) = self.made.iter().find(|(p, _)| Arc::ptr_eq(p, &provider)) {
            return Ok(recorder.clone());
        }
        let recorder = match self.made.first() {
            Some((_, first)) => Arc::new(first.also(provider.clone())),
            None => Arc::new(Recorder::create(provider.clone(), path)?),
        };
        self.made.push((provider, recorder.clone()));
        Ok(recorder)
    }
}

/// The agent of one run of a long-lived server (`serve`, `mcp-server`),
/// recorded in `ledger`: its plan approved at once, or with `later` waiting
/// for a decision recorded in the ledger (nobody is at a terminal).
pub fn server_agent(
    config: &Config,
    models: &ModelSetup,
    options: RunOptions,
    tools: Arc<ToolRegistry>,
    ledger: Recorded,
    later: bool,
) -> Result<Agent, BadInput> {
    let approver: Arc<dyn Approver> = if later {
        Arc::new(planexec::ApproveLater)
    } else {
        Arc::new(planexec::AutoApprove)
    };
    assemble_agent(config, models, options, tools, approver, Some(ledger))
}

/// An agent from a model setup made earlier (`bench` makes one for all its runs).
pub fn assemble_agent(
    config: &Config,
    models: &ModelSetup,
    options: RunOptions,
    tools: Arc<ToolRegistry>,
    approver: Arc<dyn Approver>,
    ledger: Option<Recorded>,
) -> Result<Agent, BadInput> {
    let pricing = config.pricing()?;
    if options.budget.max_cost.is_some() {
        // Every model the run may call needs a price, or its calls would count as free.
        let names = std::iter::once(&models.main.model)
            .chain(models.roles.iter().map(|(_, m)| &m.model))
            .chain(models.agents.iter().map(|(_, m)| &m.model));
        if let Some(unpriced) = names.into_iter().find(|m| pricing.price_of(m).is_none()) {
            return Err(BadInput(format!(
                "--max-cost needs the price of model `{unpriced}`: pass --price {unpriced}=INPUT,OUTPUT (USD per million tokens; --price '*=0,0' for a free local model)"
            )));
        }
    }
    let mut options = options;
    for profile in &mut options.agents {
        if let Some((_, model)) = models.agents.iter().find(|(name, _)| name == &profile.name) {
            profile.model = Some(model.clone());
        }
    }
    let mut builder = Agent::builder(models.main.provider.clone(), models.main.model.clone())
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
    for (role, model) in &models.roles {
        builder = builder.role_model(*role, model.clone());
    }
    Ok(builder.build())
}

pub fn side_effect_tools(tools: &ToolRegistry) -> Vec<String> {
    annotations(tools).side_effect_tools
}

/// OpenTelemetry traces of the run, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or the
/// traces endpoint) is set; prompts and replies only with
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
pub fn traces(agent: &Agent) -> Result<Option<planexec_otel::Tracing>, BadInput> {
    let Some(tracing) = planexec_otel::Tracing::from_env().map_err(BadInput)? else {
        return Ok(None);
    };
    let content = std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    tracing.attach(agent.events(), planexec_otel::TraceOptions { content });
    Ok(Some(tracing))
}

/// Send the buffered spans before the process exits (the exporter blocks).
pub async fn flush_traces(tracing: Option<planexec_otel::Tracing>) {
    if let Some(tracing) = tracing {
        let _ = tokio::task::spawn_blocking(move || tracing.shutdown()).await;
    }
}

pub fn cassette(flags: &RunFlags) -> Cassette {
    Cassette {
        record: flags.record.clone(),
        replay: flags.replay.clone(),
    }
}
