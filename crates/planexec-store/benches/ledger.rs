//! `cargo bench -p planexec-store --bench ledger`
//!
//! Ledger overhead per step: the 1,000-step DAG of no-op tools (the scheduler
//! benchmark's) run through the real agent with an in-memory ledger, then with
//! SQLite (synchronous commits: `synchronous=FULL`, and `NORMAL` for
//! comparison), then with PostgreSQL when `PLANEXEC_TEST_POSTGRES_URL` is set.
//! Prints each as time per step and as a ratio to the in-memory run, plus the
//! same for a DAG whose steps all have side effects (two commits per step:
//! the start, written before the tool runs, and the result).
//!
//! Nothing here asserts a time (machines are noisy); read the table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::{Agent, Effect, MemoryStore, Plan, RunOptions, RunStore, Tool, ToolError, ToolRegistry};
use planexec_store::{Durability, SqlStore};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

struct Noop(&'static str, Effect);

#[async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        self.1
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        Ok(args["input"].clone())
    }
}

/// 1,000 steps, each depending on up to two of the previous ten (as in the scheduler bench).
fn big_plan(n: usize, tool: &str) -> Plan {
    let steps: Vec<Value> = (0..n)
        .map(|i| {
            let deps: Vec<String> = [i.checked_sub(1), i.checked_sub(7)]
                .into_iter()
                .flatten()
                .filter(|d| d % 3 != 0 || i % 2 == 0)
                .map(|d| format!("n{d}"))
                .collect();
            let input = deps.iter().map(|d| format!("{{{{{d}}}}}")).collect::<Vec<_>>().join("+") + "x";
            json!({"id": format!("n{i}"), "description": "bench step", "tool": tool, "args": {"input": input}, "depends_on": deps})
        })
        .collect();
    serde_json::from_value(json!({"goal": "bench", "steps": steps})).unwrap()
}

fn agent(server: &ScriptedServer, n: usize, store: Arc<dyn RunStore>) -> Agent {
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: server.base_url(),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Noop("noop", Effect::ReadOnly))).unwrap();
    tools
        .register(Arc::new(Noop("touch", Effect::WritesWorkspace)))
        .unwrap();
    Agent::builder(Arc::new(provider), "bench")
        .tools(tools)
        .store(store)
        .options(RunOptions {
            max_steps: n,
            parallelism: 4,
            ..RunOptions::default()
        })
        .build()
}

/// Median microseconds per step over `rounds` runs (the synthesizer call subtracted).
async fn per_step(server: &ScriptedServer, store: Arc<dyn RunStore>, plan: &Plan, rounds: usize) -> f64 {
    let n = plan.steps.len();
    let agent = agent(server, n, store);
    let mut samples = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let report = agent.run_plan("bench", plan.clone()).await;
        let total = t.elapsed();
        assert!(report.succeeded(), "{:?}", report.error);
        let synth = Duration::from_millis(report.usage.role(planexec::Role::Synthesizer).latency_ms);
        samples.push(total.saturating_sub(synth).as_secs_f64() * 1e6 / n as f64);
    }
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[rounds / 2]
}

/// A new, empty database on the server at `admin` (a URL naming any database).
async fn fresh_database(admin: &str, tag: &str) -> String {
    sqlx::any::install_default_drivers();
    let name = format!("planexec_bench_{tag}_{}", planexec::result::now_ms());
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(admin).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(admin);
    format!("{base}/{name}")
}

#[tokio::main]
async fn main() {
    let n = 1000;
    let rounds = 5;
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("done"));
    let dir = tempfile::tempdir().unwrap();
    let pg = std::env::var("PLANEXEC_TEST_POSTGRES_URL").ok();

    println!("ledger overhead, {n}-step DAG through the agent (parallelism 4), median of {rounds}");
    println!(
        "{:<34} {:>12} {:>12} {:>14}",
        "ledger", "µs per step", "vs memory", "ledger µs/step"
    );
    for (label, tool) in [("read-only steps", "noop"), ("steps with side effects", "touch")] {
        let plan = big_plan(n, tool);
        println!("{label}:");
        let memory = per_step(&server, Arc::new(MemoryStore::new()), &plan, rounds).await;
        println!("  {:<32} {memory:>12.1} {:>12} {:>14}", "memory", "1.00x", "-");
        let mut stores: Vec<(String, Arc<dyn RunStore>)> = Vec::new();
        for (name, durability) in [("full", Durability::Full), ("normal", Durability::Normal)] {
            let path = dir.path().join(format!("{tool}-{name}.db"));
            let store = SqlStore::open_with(path.to_str().unwrap(), durability).await.unwrap();
            stores.push((format!("sqlite, synchronous={name}"), Arc::new(store)));
        }
        if let Some(admin) = &pg {
            let url = fresh_database(admin, tool).await;
            stores.push((
                "postgresql (loopback)".to_string(),
                Arc::new(SqlStore::open(&url).await.unwrap()),
            ));
        }
        for (name, store) in stores {
            let t = per_step(&server, store, &plan, rounds).await;
            println!("  {name:<32} {t:>12.1} {:>11.2}x {:>14.1}", t / memory, t - memory);
        }
    }
}
