//! `cargo bench -p planexec --bench scheduler`
//!
//! 1. Scheduler overhead: validate and run a 1,000-step DAG of no-op tools through
//!    the real agent (executor, events, accounting); report overhead per step.
//! 2. Makespan: fan-out, diamond, chain and mixed DAGs with tools that sleep
//!    200 ms against the scripted server answering after 300 ms; report wall time
//!    divided by the critical-path bound (planner + longest chain + synthesizer).
//!
//! Figures are printed as a table; nothing here asserts a time (machines are noisy).

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::plan::{self, Plan};
use planexec::{Agent, Effect, RunOptions, Tool, ToolError, ToolRegistry};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

struct Sleep(Duration, &'static str);

#[async_trait]
impl Tool for Sleep {
    fn name(&self) -> &str {
        self.1
    }
    fn description(&self) -> &str {
        "sleeps, then echoes"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        if !self.0.is_zero() {
            tokio::time::sleep(self.0).await;
        }
        Ok(args["input"].clone())
    }
}

fn tools() -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(Sleep(Duration::ZERO, "noop"))).unwrap();
    reg.register(Arc::new(Sleep(Duration::from_millis(200), "sleep")))
        .unwrap();
    reg
}

fn agent(server: &ScriptedServer, max_steps: usize) -> Agent {
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: server.base_url(),
        ..OpenAiConfig::default()
    })
    .unwrap();
    Agent::builder(Arc::new(provider), "bench")
        .tools(tools())
        .options(RunOptions {
            max_steps,
            parallelism: 4,
            ..RunOptions::default()
        })
        .build()
}

fn step(id: String, tool: Option<&str>, deps: Vec<String>) -> Value {
    let args = match tool {
        Some(_) => json!({"input": deps.iter().map(|d| format!("{{{{{d}}}}}")).collect::<Vec<_>>().join("+") + "x"}),
        None => json!({}),
    };
    json!({"id": id, "description": "bench step", "tool": tool, "args": args, "depends_on": deps})
}

/// 1,000 no-op steps, each depending on up to two of the previous ten.
fn big_plan(n: usize) -> Plan {
    let steps: Vec<Value> = (0..n)
        .map(|i| {
            let deps = [i.checked_sub(1), i.checked_sub(7)]
                .into_iter()
                .flatten()
                .filter(|d| d % 3 != 0 || i % 2 == 0)
                .map(|d| format!("n{d}"))
                .collect();
            step(format!("n{i}"), Some("noop"), deps)
        })
        .collect();
    serde_json::from_value(json!({"goal": "bench", "steps": steps})).unwrap()
}

async fn scheduler_overhead() {
    let n = 1000;
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("done"));
    let agent = agent(&server, n);
    let plan = big_plan(n);

    // Validation alone.
    let rounds = 20;
    let t = Instant::now();
    for _ in 0..rounds {
        plan::validate(&plan, agent.tools(), &agent.options().plan_limits()).unwrap();
    }
    let validate_us = t.elapsed().as_secs_f64() * 1e6 / rounds as f64;

    // Whole runs (validation included); the one synthesizer HTTP call is subtracted.
    let mut per_step = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let report = agent.run_plan("bench", plan.clone()).await;
        let total = t.elapsed();
        assert!(report.succeeded(), "{:?}", report.error);
        let synth = Duration::from_millis(report.usage.role(planexec::Role::Synthesizer).latency_ms);
        per_step.push((total.saturating_sub(synth)).as_secs_f64() * 1e6 / n as f64);
    }
    per_step.sort_by(|a, b| a.partial_cmp(b).unwrap());

    // The bare scheduler with a trivial step function, for comparison.
    let t = Instant::now();
    let done = Default::default();
    let cancel = planexec::CancelToken::new();
    let outcome = planexec::schedule::run_dag(&plan, &done, 4, &cancel, |s, _| async move {
        planexec::StepResult {
            id: s.id,
            tool: s.tool,
            agent: None,
            status: planexec::StepStatus::Succeeded,
            attempts: 1,
            args: None,
            output: Some(Value::Null),
            error: None,
            started_at: None,
            finished_at: None,
            model_calls: 0,
            calls: Vec::new(),
            refused: false,
            worker: None,
        }
    })
    .await;
    assert_eq!(outcome.results.len(), n);
    let bare_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;

    println!("scheduler overhead, {n}-step DAG of no-op tools (parallelism 4)");
    println!(
        "  validate whole plan        {validate_us:>10.0} µs  ({:.2} µs/step)",
        validate_us / n as f64
    );
    println!(
        "  run, per step (median of 5) {:>9.1} µs   [min {:.1}, max {:.1}]  target < 50 µs",
        per_step[2], per_step[0], per_step[4]
    );
    println!("  bare scheduler, per step   {bare_us:>10.1} µs");
}

async fn makespan(name: &str, steps: Vec<Value>, tool_depth: u32, reasoning_depth: u32) -> (String, f64, f64) {
    let model = Duration::from_millis(300);
    let server = ScriptedServer::start();
    server.set_default_delay(model);
    server
        .role("planner")
        .always(Reply::json(&json!({"goal": name, "steps": steps})));
    server.role("executor").always(Reply::content("reasoned"));
    server.role("synthesizer").always(Reply::content("done"));
    let agent = agent(&server, 16);
    let bound = model * (2 + reasoning_depth) + Duration::from_millis(200) * tool_depth;
    let mut ratios = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let report = agent.run(name).await;
        let wall = t.elapsed();
        assert!(report.succeeded(), "{:?}", report.error);
        ratios.push(wall.as_secs_f64() / bound.as_secs_f64());
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (name.to_string(), bound.as_secs_f64() * 1000.0, ratios[1])
}

async fn makespans() {
    let s = |id: &str, tool: Option<&str>, deps: &[&str]| {
        step(id.to_string(), tool, deps.iter().map(|d| d.to_string()).collect())
    };
    let cases = vec![
        (
            "fan-out 4",
            vec![
                s("a", Some("sleep"), &[]),
                s("b", Some("sleep"), &[]),
                s("c", Some("sleep"), &[]),
                s("d", Some("sleep"), &[]),
            ],
            1,
            0,
        ),
        (
            "diamond",
            vec![
                s("a", Some("sleep"), &[]),
                s("b", Some("sleep"), &["a"]),
                s("c", Some("sleep"), &["a"]),
                s("d", Some("sleep"), &["b", "c"]),
            ],
            3,
            0,
        ),
        (
            "chain 4",
            vec![
                s("a", Some("sleep"), &[]),
                s("b", Some("sleep"), &["a"]),
                s("c", Some("sleep"), &["b"]),
                s("d", Some("sleep"), &["c"]),
            ],
            4,
            0,
        ),
        (
            "fan-in to reasoning",
            vec![
                s("a", Some("sleep"), &[]),
                s("b", Some("sleep"), &[]),
                s("c", Some("sleep"), &[]),
                s("r", None, &["a", "b", "c"]),
            ],
            1,
            1,
        ),
    ];
    println!("makespan: tools sleep 200 ms, model answers after 300 ms (median of 3)");
    println!("  {:<22} {:>10} {:>14}", "DAG", "bound ms", "wall / bound");
    for (name, steps, depth, reasoning) in cases {
        let (name, bound, ratio) = makespan(name, steps, depth, reasoning).await;
        println!("  {name:<22} {bound:>10.0} {ratio:>14.3}   target <= 1.05");
    }
}

fn main() {
    // `cargo test --benches` runs this with --bench absent; keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        scheduler_overhead().await;
        makespans().await;
    });
}
