//! MCP servers as planexec tools, on the official Rust SDK (`rmcp`).
//!
//! [`McpServers::start`] connects to each configured server (a child process
//! over stdio, or a streamable HTTP endpoint), lists its tools and registers
//! them in a shared [`ToolRegistry`] as `server.tool`, with their JSON Schemas,
//! descriptions and an [`Effect`] taken from their annotations. From then on the
//! planner sees them like built-ins and the executor calls them like any tool:
//!
//! - one connection per server, reused by every step;
//! - `notifications/tools/list_changed` lists the server's tools again and
//!   replaces them in the registry;
//! - a call past the server's timeout is dropped, which sends the server a
//!   cancellation;
//! - a server that dies fails the call as retryable, and the next call starts
//!   it again;
//! - a result with `isError` is a step failure carrying the server's message.
//!
//! Besides tools, a server's resources are one built-in tool, `mcp_resource`
//! ([`resources`]), and its prompts are task templates
//! ([`McpServers::prompt_text`]), both listed when it starts.
//!
//! [`McpServers::shutdown`] stops them when the run ends.

mod asks;
mod config;
mod content;
mod error;
mod offers;
pub mod resources;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use planexec::tools::ToolErrorKind;
use planexec::{Effect, Tool, ToolError, ToolRegistry};
use rmcp::model::{CallToolRequestParams, ClientConfig, ErrorCode};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

pub use config::{McpServerConfig, McpServerToml, McpTransport};
pub use error::McpError;
pub use rmcp::model::Prompt;

/// Lines of a server's stderr kept to explain why it failed.
const STDERR_LINES: usize = 20;

/// The MCP servers of a run.
pub struct McpServers {
    servers: Vec<Arc<McpServer>>,
}

impl McpServers {
    /// Start every server (in parallel) and register its tools in `registry`.
    /// If one fails, the others are stopped and the error names it.
    pub async fn start(configs: &[McpServerConfig], registry: &Arc<ToolRegistry>) -> Result<McpServers, McpError> {
        let mut names = std::collections::HashSet::new();
        for c in configs {
            c.check()?;
            if !names.insert(c.name.as_str()) {
                return Err(McpError(format!(
                    "two MCP servers are named `{}`; give each a different name",
                    c.name
                )));
            }
        }
        let servers: Vec<Arc<McpServer>> = configs.iter().map(|c| McpServer::new(c.clone(), registry)).collect();
        let started = futures::future::join_all(servers.iter().map(|s| s.connect())).await;
        let all = McpServers { servers };
        if let Some(Err(e)) = started.into_iter().find(Result::is_err) {
            all.shutdown().await;
            return Err(e);
        }
        if let Err(e) = all.register_resources(registry) {
            all.shutdown().await;
            return Err(e);
        }
        Ok(all)
    }

    /// The `mcp_resource` tool over every server's resources, when any has some.
    fn register_resources(&self, registry: &Arc<ToolRegistry>) -> Result<(), McpError> {
        let offered: Vec<resources::Offered> = self.servers.iter().flat_map(|s| s.resources()).collect();
        let readers = self
            .servers
            .iter()
            .filter(|s| !s.resources().is_empty())
            .map(|s| s.clone() as Arc<dyn resources::ReadResource>)
            .collect();
        match resources::ResourceTool::new(offered, readers) {
            Some(tool) => registry
                .insert(Arc::new(tool))
                .map_err(|e| McpError(format!("the MCP resources tool: {e}"))),
            None => Ok(()),
        }
    }

    /// The text of prompt `spec` (`server/name`) with `arguments`, to use as a task.
    pub async fn prompt_text(&self, spec: &str, arguments: &[(String, String)]) -> Result<String, McpError> {
        let Some((server, name)) = spec.split_once('/') else {
            return Err(McpError(format!(
                "--mcp-prompt {spec}: write SERVER/PROMPT, e.g. everything/simple-prompt (`planexec tools list` shows them)"
            )));
        };
        let found = self.get(server).ok_or_else(|| {
            let names: Vec<&str> = self.servers.iter().map(|s| s.name()).collect();
            McpError(format!(
                "--mcp-prompt {spec}: no MCP server `{server}` (servers: {})",
                names.join(", ")
            ))
        })?;
        found.prompt_text(name, arguments).await
    }

    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    pub fn get(&self, name: &str) -> Option<&Arc<McpServer>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// Stop every server and take its tools out of the registry. A stopped
    /// server is not started again.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.stop())).await;
    }
}

/// One configured server and its current connection.
pub struct McpServer {
    config: McpServerConfig,
    registry: Weak<ToolRegistry>,
    me: Weak<McpServer>,
    connection: tokio::sync::Mutex<Option<Connection>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    refreshes: AtomicU32,
    starts: AtomicU32,
    /// Set by [`McpServers::shutdown`]: no restart, no late re-registration.
    stopped: AtomicBool,
    /// What it offered when it started besides tools (see `offers.rs`).
    resources: Mutex<Vec<resources::Offered>>,
    prompts: Mutex<Vec<rmcp::model::Prompt>>,
    /// The running calls that answer the server's sampling and elicitation requests.
    askers: asks::Askers,
}

struct Connection {
    service: RunningService<RoleClient, Handler>,
    pid: Option<u32>,
    /// Which start this is, so a failed call drops only the connection it used.
    generation: u32,
}

impl McpServer {
    fn new(config: McpServerConfig, registry: &Arc<ToolRegistry>) -> Arc<McpServer> {
        Arc::new_cyclic(|me| McpServer {
            config,
            registry: Arc::downgrade(registry),
            me: me.clone(),
            connection: tokio::sync::Mutex::new(None),
            stderr: Arc::default(),
            refreshes: AtomicU32::new(0),
            starts: AtomicU32::new(0),
            stopped: AtomicBool::new(false),
            resources: Mutex::default(),
            prompts: Mutex::default(),
            askers: asks::Askers::default(),
        })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn config(&self) -> &McpServerConfig {
        &self.config
    }

    /// The process id of a stdio server while it runs.
    pub async fn pid(&self) -> Option<u32> {
        self.connection.lock().await.as_ref().and_then(|c| c.pid)
    }

    /// How many times the tool list was refreshed after a `list_changed` notification.
    pub fn refreshes(&self) -> u32 {
        self.refreshes.load(Ordering::SeqCst)
    }

    /// How many times the server was started (more than once after it died).
    pub fn starts(&self) -> u32 {
        self.starts.load(Ordering::SeqCst)
    }

    /// The names (`server.tool`) of this server's tools in the registry.
    pub fn tool_names(&self) -> Vec<String> {
        let prefix = self.prefix();
        self.registry
            .upgrade()
            .map(|r| r.names().into_iter().filter(|n| n.starts_with(&prefix)).collect())
            .unwrap_or_default()
    }

    fn prefix(&self) -> String {
        format!("{}.", self.config.name)
    }

    fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            String::new()
        } else {
            let tail: Vec<&str> = lines.iter().map(String::as_str).collect();
            format!("\n  its stderr ended with:\n    {}", tail.join("\n    "))
        }
    }

    /// Start the server (if it is not running) and register its tools.
    async fn connect(&self) -> Result<(), McpError> {
        let mut slot = self.connection.lock().await;
        if slot.as_ref().is_some_and(|c| !c.service.is_closed()) {
            return Ok(());
        }
        *slot = None;
        if self.stopped.load(Ordering::SeqCst) {
            return Err(McpError(format!("MCP server `{}` was stopped", self.config.name)));
        }
        // The handshake and the first tool list share one time limit, so a
        // server that never answers cannot hold the run (or its shutdown).
        let started = async {
            let connection = self.open().await?;
            let tools = connection
                .service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| self.start_error(&format!("listing its tools failed: {e}")))?;
            Ok::<_, McpError>((connection, tools))
        };
        let (mut connection, tools) = tokio::time::timeout(self.config.startup_timeout, started)
            .await
            .unwrap_or_else(|_| {
                Err(self.start_error(&format!(
                    "it did not answer within {}s",
                    self.config.startup_timeout.as_secs_f64()
                )))
            })?;
        connection.generation = self.starts.fetch_add(1, Ordering::SeqCst) + 1;
        self.register(tools)?;
        let offers = self.list_offers(connection.service.peer());
        if tokio::time::timeout(self.config.startup_timeout, offers).await.is_err() {
            tracing::warn!(server = %self.config.name, "listing its resources and prompts took too long; left out");
        }
        *slot = Some(connection);
        Ok(())
    }

    fn start_error(&self, why: &str) -> McpError {
        McpError(format!(
            "MCP server `{}` did not start ({}): {why}{}",
            self.config.name,
            self.config.transport.describe(),
            self.stderr_tail()
        ))
    }

    async fn open(&self) -> Result<Connection, McpError> {
        let handler = Handler {
            server: self.me.clone(),
        };
        match &self.config.transport {
            McpTransport::Stdio { command, args, cwd, .. } => {
                let mut cmd = tokio::process::Command::new(command);
                let env = self.config.transport.child_env(std::env::vars());
                cmd.args(args).env_clear().envs(env);
                if let Some(cwd) = cwd {
                    cmd.current_dir(cwd);
                }
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| self.start_error(&format!("cannot run `{command}`: {e}")))?;
                let pid = transport.id();
                if let Some(stderr) = stderr {
                    let lines = self.stderr.clone();
                    tokio::spawn(async move {
                        let mut reader = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = reader.next_line().await {
                            let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                            if lines.len() == STDERR_LINES {
                                lines.pop_front();
                            }
                            lines.push_back(line);
                        }
                    });
                }
                let service = handler.serve(transport).await.map_err(|e| {
                    self.start_error(&format!(
                        "the MCP handshake failed: {e} (is it an MCP server over stdio?)"
                    ))
                })?;
                Ok(Connection {
                    service,
                    pid,
                    generation: 0,
                })
            }
            McpTransport::Http { url, headers } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if !headers.is_empty() {
                    let mut map = std::collections::HashMap::new();
                    for (k, v) in headers {
                        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                            .map_err(|e| self.start_error(&format!("bad header name `{k}`: {e}")))?;
                        let value = reqwest::header::HeaderValue::from_str(v)
                            .map_err(|e| self.start_error(&format!("bad value for header `{k}`: {e}")))?;
                        map.insert(name, value);
                    }
                    config = config.custom_headers(map);
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| self.start_error(&format!("the MCP handshake failed: {e}")))?;
                Ok(Connection {
                    service,
                    pid: None,
                    generation: 0,
                })
            }
        }
    }

    /// Replace this server's tools in the registry by `tools`.
    fn register(&self, tools: Vec<rmcp::model::Tool>) -> Result<(), McpError> {
        // Either is gone only while the run is being torn down: nothing to update.
        let (Some(registry), Some(me)) = (self.registry.upgrade(), self.me.upgrade()) else {
            return Ok(());
        };
        if self.stopped.load(Ordering::SeqCst) {
            return Ok(());
        }
        let tools: Vec<Arc<dyn Tool>> = tools
            .into_iter()
            .map(|t| Arc::new(McpTool::new(me.clone(), t)) as Arc<dyn Tool>)
            .collect();
        registry
            .replace_prefixed(&self.prefix(), tools)
            .map_err(|e| McpError(format!("MCP server `{}`: {e}", self.config.name)))
    }

    /// The peer to call and its connection's generation, starting the server
    /// again if it stopped.
    async fn peer(&self) -> Result<(rmcp::Peer<RoleClient>, u32), ToolError> {
        {
            let slot = self.connection.lock().await;
            if let Some(c) = slot.as_ref().filter(|c| !c.service.is_closed()) {
                return Ok((c.service.peer().clone(), c.generation));
            }
        }
        self.connect().await.map_err(|e| ToolError::retryable(e.0))?;
        let slot = self.connection.lock().await;
        slot.as_ref()
            .map(|c| (c.service.peer().clone(), c.generation))
            .ok_or_else(|| ToolError::retryable(format!("MCP server `{}` is not running", self.config.name)))
    }

    /// Forget a connection that failed, so the next call starts the server again.
    async fn drop_connection(&self, generation: u32) {
        let mut slot = self.connection.lock().await;
        if slot.as_ref().is_some_and(|c| c.generation == generation) {
            if let Some(dead) = slot.take() {
                let _ = dead.service.cancel().await;
            }
        }
    }

    /// Call `tool`. If the server dies during the call, only an `idempotent`
    /// call is marked for retry: another's effect may already have happened.
    async fn call(&self, tool: &str, args: Value, idempotent: bool) -> Result<Value, ToolError> {
        let (peer, generation) = self.peer().await?;
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let qualified = format!("{}.{tool}", self.config.name);
        let timeout = self.config.timeout;
        // Dropping the call on timeout sends the server `notifications/cancelled`.
        let outcome = match tokio::time::timeout(timeout, peer.call_tool(params)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                return Err(ToolError::failed(format!(
                    "`{qualified}` did not answer within {}s; the call was cancelled",
                    timeout.as_secs_f64()
                )))
            }
        };
        match outcome {
            Ok(result) if result.is_error == Some(true) => Err(ToolError::failed(format!(
                "`{qualified}` failed: {}",
                content::text_of(&result.content)
            ))),
            Ok(result) => Ok(content::to_value(result)),
            Err(ServiceError::McpError(e)) => {
                let kind = if e.code == ErrorCode::INVALID_PARAMS {
                    ToolErrorKind::InvalidArgs
                } else {
                    ToolErrorKind::Failed
                };
                Err(ToolError::new(kind, format!("`{qualified}` failed: {}", e.message)))
            }
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                self.drop_connection(generation).await;
                // Give the reader a moment to collect the dying server's last words.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let stopped = format!(
                    "MCP server `{}` stopped during the call to `{tool}` ({e})",
                    self.config.name
                );
                Err(if idempotent {
                    ToolError::retryable(format!(
                        "{stopped}; it is started again on the next call{}",
                        self.stderr_tail()
                    ))
                } else {
                    ToolError::failed(format!(
                        "{stopped}; not retried, because the call may or may not have taken effect{}",
                        self.stderr_tail()
                    ))
                })
            }
            Err(e) => Err(ToolError::failed(format!("`{qualified}` failed: {e}"))),
        }
    }

    async fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(registry) = self.registry.upgrade() {
            let _ = registry.replace_prefixed(&self.prefix(), Vec::new());
        }
        if let Some(connection) = self.connection.lock().await.take() {
            let _ = connection.service.cancel().await;
        }
    }

    /// `tools/list_changed`: list the tools again and replace them.
    async fn refresh(&self, peer: rmcp::Peer<RoleClient>) {
        match peer.list_all_tools().await {
            Ok(tools) => match self.register(tools) {
                Ok(()) => {
                    self.refreshes.fetch_add(1, Ordering::SeqCst);
                }
                Err(e) => tracing::warn!("{e}"),
            },
            Err(e) => tracing::warn!(server = %self.config.name, "listing changed tools failed: {e}"),
        }
    }
}

/// The client side of one connection: answers the server's notifications.
struct Handler {
    server: Weak<McpServer>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            server.refresh(context.peer).await;
        }
    }

    /// A server's sampling request: answered by the run whose step is
    /// calling this server's tool (see `asks.rs`; deprecated by SEP-2577,
    /// still sent by servers).
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let Some(server) = self.server.upgrade() else {
            return Err(rmcp::ErrorData::internal_error("the run has ended", None));
        };
        server.askers.sample(params).await
    }

    /// A server's elicitation: put to the run whose step is calling this
    /// server's tool (its approver), or declined.
    async fn create_elicitation(
        &self,
        params: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let Some(server) = self.server.upgrade() else {
            return Ok(rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Decline));
        };
        server.askers.elicit(params).await
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities.sampling = Some(rmcp::model::SamplingCapability::default());
        info.capabilities.elicitation = Some(
            rmcp::model::ElicitationCapability::new().with_form(rmcp::model::FormElicitationCapability::default()),
        );
        info.client_info.name = "planexec".to_string();
        info.client_info.version = env!("CARGO_PKG_VERSION").to_string();
        info
    }
}

/// One tool of an MCP server, as the registry sees it.
struct McpTool {
    server: Arc<McpServer>,
    remote_name: String,
    name: String,
    description: String,
    schema: Value,
    effect: Effect,
    idempotent: bool,
}

impl McpTool {
    fn new(server: Arc<McpServer>, tool: rmcp::model::Tool) -> McpTool {
        let hints = tool.annotations.clone().unwrap_or_default();
        // Servers' hints decide, defaulting to the cautious class; config can override.
        let effect = if hints.read_only_hint == Some(true) {
            Effect::ReadOnly
        } else if hints.destructive_hint == Some(true) {
            Effect::Irreversible
        } else {
            Effect::External
        };
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or("(no description)")
            .to_string();
        McpTool {
            name: format!("{}.{}", server.name(), tool.name),
            remote_name: tool.name.to_string(),
            description,
            schema: Value::Object((*tool.input_schema).clone()),
            effect,
            idempotent: effect == Effect::ReadOnly || hints.idempotent_hint == Some(true),
            server,
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> Value {
        self.schema.clone()
    }
    fn effect(&self) -> Effect {
        self.effect
    }
    fn idempotent(&self) -> bool {
        self.idempotent
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        self.server.call(&self.remote_name, args, self.idempotent).await
    }
    /// The call, answering the server's requests with the run's `asker` meanwhile.
    async fn call_asking(&self, args: Value, asker: &dyn planexec::tools::asking::Asker) -> Result<Value, ToolError> {
        let call = self.server.call(&self.remote_name, args, self.idempotent);
        self.server.askers.during(asker, call).await
    }
}
