//! [`NativeAgent`]: what `planexec.Agent` calls. It is built once from the
//! settings (as the CLI builds one from its flags: configuration files,
//! environment variables, then these), and each run gets a fresh library
//! [`Agent`] over the same models, tools and ledger, so a run's events and
//! approval callbacks are its own.

use std::path::PathBuf;
use std::sync::Arc;

use planexec::{
    Agent, Approver, AutoApprove, CancelToken, Plan, ResumeOptions, RunOptions, RunStore, StepSelection, Tool as _,
    ToolRegistry,
};
use planexec_cli::config::{Config, Flags};
use planexec_cli::setup::{self, Cassette, ModelSetup, Recorded};
use pyo3::prelude::*;
use serde::Deserialize;

use crate::approver::PythonApprover;
use crate::blocking;
use crate::errors::{self, BadSettings, PlanError};
use crate::tool::PythonTool;

/// The keyword arguments of `planexec.Agent`, as the Python half sends them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    workspace: Option<PathBuf>,
    store: Option<String>,
    #[serde(default = "yes")]
    builtin_tools: bool,
    #[serde(default)]
    mcp: Vec<String>,
    approval: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
    planner_model: Option<String>,
    executor_model: Option<String>,
    replanner_model: Option<String>,
    synthesizer_model: Option<String>,
    agent_model: Option<String>,
    model_path: Option<String>,
    max_steps: Option<usize>,
    max_replans: Option<u32>,
    parallelism: Option<usize>,
    timeout: Option<f64>,
    mode: Option<String>,
    strategy: Option<String>,
    fallback: Option<String>,
    mend: Option<String>,
    prompt_style: Option<String>,
    plan_reuse: Option<String>,
    recover: Option<String>,
    verify: Option<String>,
    max_tokens: Option<u64>,
    max_cost: Option<f64>,
    max_time: Option<f64>,
    #[serde(default)]
    prices: Vec<String>,
    #[serde(default)]
    agents: Vec<String>,
}

fn yes() -> bool {
    true
}

impl Settings {
    /// The settings as the CLI's flags: the top layer of the configuration.
    /// A key and URL go to the provider the model names (`anthropic/…`).
    fn flags(&self) -> Flags {
        let anthropic = self.model.as_deref().is_some_and(|m| m.starts_with("anthropic/"));
        let (api_key, anthropic_api_key) = if anthropic {
            (None, self.api_key.clone())
        } else {
            (self.api_key.clone(), None)
        };
        let (base_url, anthropic_base_url) = if anthropic {
            (None, self.base_url.clone())
        } else {
            (self.base_url.clone(), None)
        };
        Flags {
            agents: self.agents.clone(),
            base_url,
            api_key,
            anthropic_base_url,
            anthropic_api_key,
            model: self.model.clone(),
            model_path: self.model_path.clone(),
            planner_model: self.planner_model.clone(),
            executor_model: self.executor_model.clone(),
            replanner_model: self.replanner_model.clone(),
            synthesizer_model: self.synthesizer_model.clone(),
            agent_model: self.agent_model.clone(),
            max_steps: self.max_steps,
            max_replans: self.max_replans,
            parallelism: self.parallelism,
            timeout: self.timeout,
            prices: self.prices.clone(),
            mode: self.mode.clone(),
            approval: self.approval.clone(),
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
            ..Flags::default()
        }
    }
}

/// Everything a run needs that does not change between runs.
struct Built {
    config: Config,
    models: ModelSetup,
    options: RunOptions,
    tools: Arc<ToolRegistry>,
    /// MCP servers started for the tools; stopped by `close`.
    servers: tokio::sync::Mutex<Option<setup::Tools>>,
    store: Option<Arc<dyn RunStore>>,
    workspace: PathBuf,
    /// `approval = "later"`: a run needing a decision pauses in the ledger.
    later: bool,
}

/// A run's cancellation, for a caller that cannot send Ctrl-C to the
/// waiting thread (an `arun` whose asyncio task is cancelled).
#[pyclass(frozen, module = "planexec._native")]
pub struct Cancel {
    token: CancelToken,
}

#[pymethods]
impl Cancel {
    #[new]
    fn new() -> Cancel {
        Cancel {
            token: CancelToken::new(),
        }
    }

    /// Stop the run: running steps are cancelled and it ends `interrupted`.
    fn cancel(&self) {
        self.token.cancel();
    }
}

#[pyclass(frozen, module = "planexec._native")]
pub struct NativeAgent {
    built: Arc<Built>,
}

#[pymethods]
impl NativeAgent {
    /// `settings`: the keyword arguments as JSON; `tools`: `planexec.Tool` objects.
    #[new]
    fn new(py: Python<'_>, settings: &str, tools: Vec<Bound<'_, PyAny>>) -> PyResult<NativeAgent> {
        let settings: Settings =
            serde_json::from_str(settings).map_err(|e| errors::config(format!("bad settings: {e}")))?;
        let python_tools = tools
            .iter()
            .map(PythonTool::from_python)
            .collect::<Result<Vec<_>, _>>()?;
        let built = blocking::wait(py, None, build(settings, python_tools))??;
        Ok(NativeAgent { built: Arc::new(built) })
    }

    /// The planner's plan for `task`, validated, as JSON. Nothing runs.
    fn plan(&self, py: Python<'_>, task: String) -> PyResult<String> {
        let agent = self.agent(Arc::new(AutoApprove))?;
        let plan = blocking::wait(py, None, async move { agent.plan(&task).await })?
            .map_err(|e| PlanError::new_err(e.to_string()))?;
        Ok(serde_json::to_string(&plan).unwrap_or_default())
    }

    /// Check a plan against the agent's tools and limits: `None` when valid, else the problems.
    fn check_plan(&self, plan: &str) -> PyResult<Option<String>> {
        let plan: Plan = serde_json::from_str(plan).map_err(|e| PlanError::new_err(format!("not a plan: {e}")))?;
        Ok(
            planexec::plan::validate(&plan, &self.built.tools, &self.built.options.plan_limits())
                .err()
                .map(|e| e.to_string()),
        )
    }

    /// Run `task` (with `plan`, as JSON, instead of asking the planner): the report as JSON.
    #[pyo3(signature = (task, plan=None, approver=None, on_event=None, cancel=None))]
    fn run(
        &self,
        py: Python<'_>,
        task: String,
        plan: Option<String>,
        approver: Option<Py<PyAny>>,
        on_event: Option<Py<PyAny>>,
        cancel: Option<Py<Cancel>>,
    ) -> PyResult<String> {
        let plan = plan
            .map(|text| serde_json::from_str::<Plan>(&text))
            .transpose()
            .map_err(|e| PlanError::new_err(format!("not a plan: {e}")))?;
        let agent = self.agent(self.approver(approver))?;
        let events = Events::forward(&agent, on_event);
        let cancel = cancel.map(|c| c.get().token.clone()).unwrap_or_default();
        let token = cancel.clone();
        let report = blocking::wait(py, Some(cancel), async move {
            agent.run_cancellable(&task, plan, &token).await
        });
        if let Some(events) = events {
            events.finish(py);
        }
        Ok(serde_json::to_string(&report?).unwrap_or_default())
    }

    /// Continue a run recorded in the store: the report as JSON.
    #[pyo3(signature = (run_id, approver=None, on_event=None, rerun_inflight=false))]
    fn resume(
        &self,
        py: Python<'_>,
        run_id: String,
        approver: Option<Py<PyAny>>,
        on_event: Option<Py<PyAny>>,
        rerun_inflight: bool,
    ) -> PyResult<String> {
        let agent = self.agent(self.approver(approver))?;
        let events = Events::forward(&agent, on_event);
        // A step with side effects that was running at a crash is taken as
        // not done only when the caller says so (the CLI's --rerun-inflight).
        let options = ResumeOptions {
            rerun_inflight: if rerun_inflight {
                StepSelection::All
            } else {
                StepSelection::None
            },
            ..ResumeOptions::default()
        };
        let cancel = CancelToken::new();
        let token = cancel.clone();
        let report = blocking::wait(py, Some(cancel), async move {
            agent.resume(&run_id, &options, &token).await
        });
        if let Some(events) = events {
            events.finish(py);
        }
        let report = report?.map_err(errors::resume)?;
        Ok(serde_json::to_string(&report).unwrap_or_default())
    }

    /// The tools the planner may use: name, description, effect, parameters (JSON).
    fn tools(&self) -> String {
        let listed: Vec<serde_json::Value> = self
            .built
            .tools
            .entries()
            .iter()
            .map(|entry| {
                serde_json::json!({
                    "name": entry.tool.name(),
                    "description": entry.tool.description(),
                    "effect": entry.declared_effect().as_str(),
                    "parameters": entry.tool.parameters(),
                })
            })
            .collect();
        serde_json::Value::Array(listed).to_string()
    }

    /// Call tool `name` `times` times in a row, as a step would (outside a
    /// run: no events, no ledger): the seconds it took, for the benchmark of
    /// what a call costs across the boundary.
    fn time_tool_calls(&self, py: Python<'_>, name: String, args: String, times: u32) -> PyResult<f64> {
        let entry = self
            .built
            .tools
            .get(&name)
            .ok_or_else(|| errors::config(format!("no tool named `{name}`")))?;
        let args: serde_json::Value =
            serde_json::from_str(&args).map_err(|e| errors::config(format!("the arguments are not JSON: {e}")))?;
        blocking::wait(py, None, async move {
            let started = std::time::Instant::now();
            for _ in 0..times {
                entry
                    .tool
                    .call(args.clone())
                    .await
                    .map_err(|e| errors::RunFailed::new_err(e.message))?;
            }
            Ok(started.elapsed().as_secs_f64())
        })?
    }

    /// Which provider and model the agent uses.
    fn model(&self) -> String {
        self.built.models.describe()
    }

    /// Stop the MCP servers this agent started (also done when the process exits).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let built = self.built.clone();
        blocking::wait(py, None, async move {
            if let Some(servers) = built.servers.lock().await.take() {
                servers.shutdown().await;
            }
        })
    }
}

impl NativeAgent {
    /// A library agent for one run.
    fn agent(&self, approver: Arc<dyn Approver>) -> PyResult<Agent> {
        let built = &self.built;
        let ledger = built.store.clone().map(|store| Recorded {
            store,
            workspace: built.workspace.clone(),
        });
        setup::assemble_agent(
            &built.config,
            &built.models,
            built.options.clone(),
            built.tools.clone(),
            approver,
            ledger,
        )
        .map_err(|e| errors::config(e.0))
    }

    /// The Python callbacks if given; else, with `approval = "later"`, nobody
    /// now (the run pauses in the ledger); else every plan is approved.
    fn approver(&self, callbacks: Option<Py<PyAny>>) -> Arc<dyn Approver> {
        match callbacks {
            Some(callbacks) => Arc::new(PythonApprover::new(callbacks)),
            None if self.built.later => Arc::new(planexec::ApproveLater),
            None => Arc::new(AutoApprove),
        }
    }
}

/// Each event of the run, as JSON, to `on_event`: called in order on a
/// Python thread of its own, never on the runtime's threads (which must not
/// wait for the GIL, or run Python code that may call back into planexec).
/// [`Events::finish`] after the run delivers every event before it returns.
struct Events {
    sender: std::sync::mpsc::Sender<Option<String>>,
    thread: std::thread::JoinHandle<()>,
}

impl Events {
    fn forward(agent: &Agent, on_event: Option<Py<PyAny>>) -> Option<Events> {
        let on_event = on_event?;
        let (sender, receiver) = std::sync::mpsc::channel::<Option<String>>();
        let to_bus = std::sync::Mutex::new(sender.clone());
        agent.events().on_event(move |event| {
            if let Ok(to_bus) = to_bus.lock() {
                let _ = to_bus.send(Some(serde_json::to_string(event).unwrap_or_default()));
            }
        });
        // Behind a lock only so the wait can release the GIL (`detach` wants `Sync`).
        let receiver = std::sync::Mutex::new(receiver);
        let thread = std::thread::Builder::new()
            .name("planexec-events".to_string())
            .spawn(move || {
                Python::attach(|py| {
                    let next = || receiver.lock().map_err(|_| ()).and_then(|r| r.recv().map_err(|_| ()));
                    while let Ok(Some(text)) = py.detach(next) {
                        if let Err(e) = on_event.call1(py, (text,)) {
                            e.print(py);
                        }
                    }
                })
            })
            .ok()?;
        Some(Events { sender, thread })
    }

    /// Wait until every event sent so far has been handed to the callback.
    fn finish(self, py: Python<'_>) {
        let _ = self.sender.send(None);
        let _ = py.detach(|| self.thread.join());
    }
}

/// Read the configuration, start the tools (built-ins and MCP servers, as the
/// CLI does), add the Python tools, load the models, open the ledger.
async fn build(settings: Settings, python_tools: Vec<PythonTool>) -> Result<Built, BadSettings> {
    let workspace = settings.workspace.clone().unwrap_or_else(|| PathBuf::from("."));
    if !workspace.is_dir() {
        return Err(BadSettings(format!(
            "workspace {} is not a folder: pass workspace= an existing folder",
            workspace.display()
        )));
    }
    let config = Config::load(&workspace, &settings.flags())?;
    let options = config.run_options()?;
    let later = config.get("approval") == Some("later");
    let servers = setup::open_tools(&workspace, &config, &settings.mcp).await?;
    let registry = if settings.builtin_tools {
        servers.registry.clone()
    } else {
        only_mcp(&servers.registry)
    };
    for tool in python_tools {
        let name = tool.name().to_string();
        if registry.get(&name).is_some() {
            return Err(BadSettings(format!(
                "there is already a tool named `{name}` (a built-in, an MCP server's or another of yours): give yours another name with @planexec.tool(name=...), or pass builtin_tools=False"
            )));
        }
        registry
            .insert(Arc::new(tool))
            .map_err(|e| BadSettings(format!("tool `{name}`: {e}")))?;
    }
    check_profiles(&options, &registry)?;
    let store = match &settings.store {
        Some(target) => Some(planexec_cli::runs::open(Some(target)).await?),
        None if later => {
            return Err(BadSettings(
                "approval=\"later\" records the run to decide on it later: give a store, e.g. store=\"runs.db\""
                    .to_string(),
            ))
        }
        None => None,
    };
    let models = setup::model_setup(&config, &options, &Cassette::default())?;
    Ok(Built {
        config,
        models,
        options,
        tools: registry,
        servers: tokio::sync::Mutex::new(Some(servers)),
        store,
        workspace,
        later,
    })
}

/// Every tool an agent profile names matches a tool the agent has: a typo
/// in `agents={…}` is said at once, not when a plan first uses the profile.
fn check_profiles(options: &RunOptions, registry: &ToolRegistry) -> Result<(), BadSettings> {
    let names = registry.names();
    for profile in &options.agents {
        for pattern in &profile.tools {
            if !names.iter().any(|name| planexec::agents::glob_matches(pattern, name)) {
                return Err(BadSettings(format!(
                    "agent `{}` may call `{pattern}`, which is no tool of this agent (tools: {})",
                    profile.name,
                    names.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// The MCP servers' tools (named `server.tool`) without the built-ins
/// (`builtin_tools=False`), on the same workspace.
fn only_mcp(all: &ToolRegistry) -> Arc<ToolRegistry> {
    let mut kept = ToolRegistry::new();
    if let Some(workspace) = all.workspace() {
        kept.set_workspace(Arc::new(workspace.clone()));
    }
    for entry in all.entries().iter().filter(|e| e.tool.name().contains('.')) {
        let _ = kept.register(entry.tool.clone());
    }
    Arc::new(kept)
}
