//! `planexec mcp-server`: planexec as an MCP server, on stdio, for editors and
//! agents that take MCP servers (Claude Code, Cursor, Zed, the OpenAI Agents
//! SDK, Pydantic AI). A thin shell over the library, like `serve`: the
//! ledger, models and tools are opened once; each tool call builds an agent.
//!
//! The server's workspace, mode, trust and budgets come from its own flags
//! and config; a client may narrow the mode of a run, never widen it. Runs
//! are recorded in the ledger; without `--yes` a run waits there for
//! `approve` (a tool of this server, `planexec approve`, the API or the viewer).

mod elicit;
mod http;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use planexec::render::{self, Annotations};
use planexec::{Agent, CancelToken, Mode, ResumeOptions, RunOptions, RunReport};
use planexec::{RunStatus, RunStore, Strategy, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::args::{CommonArgs, LedgerArgs};
use crate::config::Config;
use crate::outcome::{BadInput, EXIT_OK};
use crate::setup::{assemble_agent, model_setup, open_tools, server_agent, Cassette, ModelSetup, Recorded};

/// The server: cheap to clone, one per client session over HTTP.
#[derive(Clone)]
pub struct McpServer(Arc<Setup>);

impl std::ops::Deref for McpServer {
    type Target = Setup;
    fn deref(&self) -> &Setup {
        &self.0
    }
}

/// What every tool call shares.
pub struct Setup {
    store: Arc<dyn RunStore>,
    config: Config,
    models: ModelSetup,
    tools: Arc<ToolRegistry>,
    workspace: PathBuf,
    /// Approve plans (and confirm steps) without a person: `--yes`.
    approve: bool,
}

/// A tool's outcome: its result, or what was wrong (shown to the client as a tool error).
type Outcome = Result<CallToolResult, String>;

impl McpServer {
    /// An agent for one call, with the server's options narrowed as asked.
    /// An agent for one call. Who approves its plan: nobody (`--yes`), the
    /// person behind the client when it can elicit, or a decision recorded
    /// later in the ledger (`approve`).
    fn agent(&self, options: RunOptions, peer: &Peer<RoleServer>) -> Result<Agent, String> {
        let recorded = Recorded {
            store: self.store.clone(),
            workspace: self.workspace.clone(),
        };
        let tools = self.tools.clone();
        if self.approve || !elicit::supported(peer) {
            return server_agent(&self.config, &self.models, options, tools, recorded, !self.approve).map_err(|e| e.0);
        }
        let approver = Arc::new(elicit::Eliciting {
            peer: peer.clone(),
            side_effect_tools: crate::setup::side_effect_tools(&self.tools),
        });
        assemble_agent(&self.config, &self.models, options, tools, approver, Some(recorded)).map_err(|e| e.0)
    }

    /// The server's options with the mode a client asked for, if it is no wider.
    fn options(&self, args: &JsonObject) -> Result<RunOptions, String> {
        let mut options = self.config.run_options()?;
        if let Some(asked) = tools::optional(args, "mode")? {
            let asked = Mode::parse(&asked)?;
            let rank = |m: Mode| [Mode::Plan, Mode::Ask, Mode::Auto].iter().position(|x| *x == m);
            if rank(asked) > rank(options.mode) {
                return Err(format!(
                    "this server runs in mode {}: a client may narrow the mode, not widen it to {}",
                    options.mode.as_str(),
                    asked.as_str()
                ));
            }
            options.mode = asked;
        }
        if let Some(strategy) = tools::optional(args, "strategy")? {
            options.strategy = Strategy::parse(&strategy)?;
        }
        Ok(options)
    }

    async fn plan(&self, args: JsonObject, context: &RequestContext<RoleServer>) -> Outcome {
        let task = tools::text(&args, "task")?;
        let agent = self.agent(self.options(&args)?, &context.peer)?;
        let plan = agent.plan(&task).await.map_err(|e| e.to_string())?;
        let notes = Annotations {
            side_effect_tools: crate::setup::side_effect_tools(&self.tools),
            ..Default::default()
        };
        let text = render::text(&plan, &notes);
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({"plan": plan}));
        Ok(result)
    }

    async fn run(&self, args: JsonObject, context: &RequestContext<RoleServer>) -> Outcome {
        let task = tools::text(&args, "task")?;
        let agent = self.agent(self.options(&args)?, &context.peer)?;
        let cancel = CancelToken::new();
        follow(&agent, context);
        let report = unless_cancelled(context, &cancel, agent.run_cancellable(&task, None, &cancel)).await;
        Ok(outcome(&report))
    }

    async fn approve(&self, args: JsonObject, context: &RequestContext<RoleServer>) -> Outcome {
        let id = tools::text(&args, "run_id")?;
        let step = tools::optional(&args, "step")?;
        let run = crate::runs::find(self.store.as_ref(), &id).await?;
        let store = self.store.as_ref();
        let waited = match args.get("answer") {
            Some(answer) if !answer.is_null() => {
                planexec::decisions::answer(store, &run.run_id, answer.clone(), "mcp").await
            }
            _ => planexec::decisions::approve(store, &run.run_id, step.as_deref(), "mcp").await,
        }
        .map_err(|e| e.to_string())?;
        tracing::info!(run = %run.run_id, "approved {}", waited.describe());
        // Decided: the run goes on here (a later step in ask mode may wait again).
        let agent = self.agent(self.config.run_options()?, &context.peer)?;
        let cancel = CancelToken::new();
        follow(&agent, context);
        let options = ResumeOptions::default();
        let resumed = agent.resume(&run.run_id, &options, &cancel);
        let report = unless_cancelled(context, &cancel, resumed)
            .await
            .map_err(|e| e.to_string())?;
        Ok(outcome(&report))
    }

    async fn reject(&self, args: JsonObject) -> Outcome {
        let id = tools::text(&args, "run_id")?;
        let reason = tools::optional(&args, "reason")?.unwrap_or_default();
        let run = crate::runs::find(self.store.as_ref(), &id).await?;
        planexec::decisions::reject(self.store.as_ref(), &run.run_id, &reason, "mcp")
            .await
            .map_err(|e| e.to_string())?;
        let text = format!("run {} rejected", run.run_id);
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    async fn show(&self, args: JsonObject) -> Outcome {
        let id = tools::text(&args, "run_id")?;
        let run = crate::runs::find(self.store.as_ref(), &id).await?;
        let text = crate::runs::show(&run, crate::setup::side_effect_tools(&self.tools));
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({"report": run.report()}));
        Ok(result)
    }
}

/// `run` to its end; if the client cancels the call first, the run is told
/// to stop (`cancel`) and still awaited, so it ends recorded as interrupted.
/// Nothing outlives the call.
async fn unless_cancelled<T>(
    context: &RequestContext<RoleServer>,
    cancel: &CancelToken,
    run: impl std::future::Future<Output = T>,
) -> T {
    tokio::pin!(run);
    tokio::select! {
        out = &mut run => out,
        _ = context.ct.cancelled() => {
            cancel.cancel();
            run.await
        }
    }
}

/// Send the client a progress notification for each step that ends (when
/// it asked for progress).
fn follow(agent: &Agent, context: &RequestContext<RoleServer>) {
    let Some(token) = context.meta.get_progress_token() else {
        return;
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(f64, Option<f64>, String)>();
    let peer: Peer<RoleServer> = context.peer.clone();
    tokio::spawn(async move {
        while let Some((progress, total, message)) = rx.recv().await {
            let mut note = ProgressNotificationParam::new(token.clone(), progress);
            note.total = total;
            note.message = Some(message);
            let _ = peer.notify_progress(note).await;
        }
    });
    let state = std::sync::Mutex::new((0u32, None::<usize>));
    agent.events().on_event(move |event| {
        let mut state = state.lock().unwrap();
        let message = match event {
            // First, so that a client knows the run (for runs_show, approve) before it ends.
            planexec::Event::RunStarted { run_id, .. } | planexec::Event::RunResumed { run_id, .. } => {
                format!("run {run_id} started")
            }
            planexec::Event::PlanProposed { version, plan, .. } => {
                state.1 = Some(plan.steps.len());
                format!("plan version {version}: {} steps", plan.steps.len())
            }
            planexec::Event::StepFinished { step_id, .. } => {
                state.0 += 1;
                format!("{step_id} done")
            }
            planexec::Event::StepFailed { step_id, error, .. } => format!("{step_id} failed: {error}"),
            planexec::Event::RunFinished { status, .. } => format!("run {status}"),
            _ => return,
        };
        let _ = tx.send((state.0 as f64, state.1.map(|n| n as f64), message));
    });
}

/// A run's report as a tool result: the answer (or why there is none, and
/// for a run that waits, how to decide), and the report as structured content.
fn outcome(report: &RunReport) -> CallToolResult {
    let text = match (report.status, &report.answer) {
        (RunStatus::Succeeded, Some(answer)) => answer.clone(),
        (RunStatus::AwaitingApproval, _) => format!(
            "run {id} waits for {what}: call `approve` with run_id {id} (or `reject`), or run `planexec approve {id} --resume`",
            id = report.run_id,
            what = report.waiting.as_ref().map(|w| w.describe()).unwrap_or_else(|| "a decision".into())
        ),
        (status, _) => format!(
            "run {} ended {}: {}",
            report.run_id,
            status.as_str(),
            report.error.as_deref().unwrap_or("no reason recorded")
        ),
    };
    let failed = !matches!(report.status, RunStatus::Succeeded | RunStatus::AwaitingApproval);
    let mut result = if failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    let report_json = serde_json::to_value(report).unwrap_or(Value::Null);
    result.structured_content = Some(json!({
        "run_id": report.run_id,
        "status": report.status.as_str(),
        "answer": report.answer,
        "report": report_json,
    }));
    result
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        config.server_info = Implementation::new("planexec", env!("CARGO_PKG_VERSION"));
        config.instructions = Some(
            "planexec plans a task as steps of tool calls, runs them in parallel where it can, and answers. Use `plan` to see a plan, `run` to carry out a task in the server's workspace; runs are recorded (`runs_show`) and may wait for `approve`."
                .to_string(),
        );
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let outcome = match request.name.as_ref() {
            "plan" => self.plan(args, &context).await,
            "run" => self.run(args, &context).await,
            "runs_show" => self.show(args).await,
            "approve" => self.approve(args, &context).await,
            "reject" => self.reject(args).await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool `{other}`: use plan, run, runs_show, approve or reject"),
                    None,
                ))
            }
        };
        let result = outcome.unwrap_or_else(|e| CallToolResult::error(vec![ContentBlock::text(e)]));
        Ok(result.into())
    }
}

/// `planexec mcp-server`: open the ledger, tools and models once, then
/// serve on stdio, or with `http` on streamable HTTP at that address.
pub async fn command(
    common: CommonArgs,
    ledger: LedgerArgs,
    yes: bool,
    (http, token): (Option<String>, Option<String>),
    verbose: u8,
) -> Result<u8, BadInput> {
    let listen = match &http {
        Some(addr) => Some(http::checked(addr, token.as_deref())?),
        None => None,
    };
    let workspace = common.workspace();
    let config = Config::load(&workspace, &common.flags())?;
    let options = config.run_options()?;
    // stdout carries the protocol on stdio: nothing else may be printed there.
    let display = crate::display::Display::new(true, Vec::new());
    crate::display::init_logging(verbose, &display);
    let store = crate::runs::open(ledger.db.as_deref()).await?;
    let models = model_setup(&config, &options, &Cassette::default())?;
    let tools = open_tools(&workspace, &config, &common.mcp).await?;
    let server = McpServer(Arc::new(Setup {
        store,
        config,
        models,
        tools: tools.registry.clone(),
        workspace,
        approve: yes,
    }));
    let served = match listen {
        Some(addr) => http::serve(server, addr, token).await,
        None => match server.serve(rmcp::transport::stdio()).await {
            Ok(running) => running.waiting().await.map(|_| ()).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        },
    };
    tools.shutdown().await;
    served.map_err(|e| BadInput(format!("the MCP server stopped: {e}")))?;
    Ok(EXIT_OK)
}
