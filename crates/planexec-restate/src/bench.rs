//! `planexec bench --engine restate`: what running on Restate costs and
//! buys, measured on a Restate server with workers in this process (each a
//! Restate endpoint of its own behind a pool, as `planexec worker` serves
//! them), a scripted model and a tool that only waits, as I/O would.
//!
//! - overhead per step: one run of a chain of steps that wait `step_ms`, on
//!   Restate against the same plan run in this process, (Restate − local) ÷
//!   steps;
//! - throughput: `runs` runs of `width` parallel waiting steps submitted at
//!   once, on one worker and then on two (each runs `capacity` steps at once).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use planexec::llm::scripted::{ScriptedModel, ScriptedReply};
use planexec::tools::{builtin, workspace::Workspace, Effect, Tool, ToolError, ToolRegistry};
use planexec::{Agent, Plan, Role, RunOptions};
use serde::Serialize;
use serde_json::{json, Value};

use crate::ingress::Ingress;
use crate::workflow::RunRequest;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub ingress: String,
    pub admin: String,
    /// Runs submitted at once for the throughput figure.
    pub runs: usize,
    /// Parallel steps in each of those runs.
    pub width: usize,
    /// Steps in the chain of the overhead figure.
    pub chain: usize,
    /// How long each step waits.
    pub step_ms: u64,
    /// Steps a worker runs at once.
    pub capacity: usize,
}

impl Default for BenchOptions {
    fn default() -> BenchOptions {
        BenchOptions {
            ingress: "http://127.0.0.1:8080".into(),
            admin: "http://127.0.0.1:9070".into(),
            runs: 100,
            width: 4,
            chain: 20,
            step_ms: 100,
            capacity: 8,
        }
    }
}

/// The figures, with what they were measured on.
#[derive(Debug, Clone, Serialize)]
pub struct BenchFigures {
    pub options: Value,
    pub chain_local_ms: f64,
    pub chain_restate_ms: f64,
    pub overhead_ms_per_step: f64,
    pub one_worker_s: f64,
    pub two_workers_s: f64,
    /// Runs a second on two workers ÷ on one.
    pub throughput_ratio: f64,
}

/// A tool that waits `ms` milliseconds and says so.
struct Pause;

#[async_trait]
impl Tool for Pause {
    fn name(&self) -> &str {
        "pause"
    }
    fn description(&self) -> &str {
        "Wait a number of milliseconds (a stand-in for I/O)."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]})
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let ms = args["ms"].as_u64().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(json!(format!("waited {ms} ms")))
    }
}

/// An agent of the bench: scripted answers, the built-in tools and `pause`.
fn bench_agent(workspace: &std::path::Path) -> Result<Arc<Agent>, String> {
    let model = ScriptedModel::new();
    model.always(Role::Synthesizer, ScriptedReply::text("done"));
    let tools = builtin::registry(Workspace::new(workspace).map_err(|e| e.to_string())?);
    let tools: ToolRegistry = tools.with(Arc::new(Pause))?;
    let options = RunOptions {
        max_steps: 256,
        parallelism: 64,
        verify: false,
        ..RunOptions::default()
    };
    Ok(Arc::new(
        Agent::builder(Arc::new(model), "scripted")
            .tools(tools)
            .options(options)
            .build(),
    ))
}

/// A plan of `n` steps that wait `ms`, one after another (`chain`) or side by side.
fn plan(n: usize, ms: u64, chain: bool) -> Plan {
    let steps: Vec<Value> = (1..=n)
        .map(|i| {
            let deps: Vec<String> = if chain && i > 1 { vec![format!("s{}", i - 1)] } else { vec![] };
            json!({"id": format!("s{i}"), "description": "wait", "tool": "pause", "args": {"ms": ms}, "depends_on": deps})
        })
        .collect();
    serde_json::from_value(json!({"goal": "wait", "steps": steps})).expect("the bench's plan is a plan")
}

/// A worker of the bench in this process, in the pool at `pool`: returns once it is in.
async fn start_worker(
    agent: Arc<Agent>,
    name: &str,
    capacity: usize,
    pool: SocketAddr,
    admin: &str,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let url = format!("http://{}", listener.local_addr().map_err(|e| e.to_string())?);
    tokio::spawn(crate::worker::serve(
        agent,
        name.to_string(),
        capacity,
        listener,
        std::future::pending::<()>(),
    ));
    let (ready, in_pool) = tokio::sync::oneshot::channel();
    let mut ready = Some(ready);
    tokio::spawn(crate::worker::stay_in_pool(
        name.to_string(),
        url,
        pool,
        Some(admin.to_string()),
        move |said| {
            if let Some(ready) = ready.take() {
                let _ = ready.send(said);
            }
        },
    ));
    in_pool.await.map_err(|_| "the worker stopped".to_string())?.map(drop)
}

/// Submit `runs` runs of `plan` at once and wait for all: the seconds it took.
async fn many_runs(ingress: &Ingress, plan: &Plan, runs: usize) -> Result<f64, String> {
    let started = Instant::now();
    let request = RunRequest {
        task: "wait".into(),
        plan: Some(plan.clone()),
        approve: false,
    };
    let ids = futures::future::try_join_all((0..runs).map(|_| ingress.start(&request))).await?;
    let reports = futures::future::try_join_all(ids.iter().map(|id| ingress.wait(id))).await?;
    if let Some(bad) = reports.iter().find(|r| !r.succeeded()) {
        return Err(format!(
            "run {} ended {}: {:?}",
            bad.run_id,
            bad.status.as_str(),
            bad.error
        ));
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Measure (see the module's doc). `workspace` is where the tools may write (nothing is).
pub async fn run(options: &BenchOptions, workspace: &std::path::Path) -> Result<BenchFigures, String> {
    let ingress = Ingress::new(&options.ingress);
    let chain = plan(options.chain, options.step_ms, true);

    let local = bench_agent(workspace)?;
    let started = Instant::now();
    let report = local.run_plan("wait", chain.clone()).await;
    let chain_local_ms = started.elapsed().as_secs_f64() * 1000.0;
    if !report.succeeded() {
        return Err(format!("the local run failed: {:?}", report.error));
    }

    let pool: SocketAddr = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        probe.local_addr().map_err(|e| e.to_string())?
    };
    start_worker(
        bench_agent(workspace)?,
        "bench-1",
        options.capacity,
        pool,
        &options.admin,
    )
    .await?;
    let chain_restate_ms = many_runs(&ingress, &chain, 1).await? * 1000.0;
    let wide = plan(options.width, options.step_ms, false);
    let one_worker_s = many_runs(&ingress, &wide, options.runs).await?;
    start_worker(
        bench_agent(workspace)?,
        "bench-2",
        options.capacity,
        pool,
        &options.admin,
    )
    .await?;
    let two_workers_s = many_runs(&ingress, &wide, options.runs).await?;
    Ok(BenchFigures {
        options: json!({"runs": options.runs, "width": options.width, "chain": options.chain,
            "step_ms": options.step_ms, "capacity": options.capacity}),
        chain_local_ms,
        chain_restate_ms,
        overhead_ms_per_step: (chain_restate_ms - chain_local_ms) / options.chain as f64,
        one_worker_s,
        two_workers_s,
        throughput_ratio: one_worker_s / two_workers_s,
    })
}
