//! `cargo bench -p planexec-local --bench local`
//!
//! With the embedded model (the pulled `small` model, or `PLANEXEC_BENCH_MODEL=FILE`):
//! prompt and generation tokens per second, planner latency, peak memory, and
//! prompt tokens evaluated on a 5-step run with and without KV prefix reuse,
//! and the time of two parallel reasoning steps against one (decoded together,
//! and one after another). Prints figures; asserts no times (machines are noisy).

mod common;

use std::sync::Arc;
use std::time::Instant;

use planexec::tools::{builtin, workspace::Workspace};
use planexec::{Agent, Plan};
use planexec_local::{EngineConfig, EngineStats, LocalModel};
use serde_json::json;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn five_step_plan() -> Plan {
    serde_json::from_value(json!({"goal": "write a short note about the numbers 17 and 25", "steps": [
        {"id": "s1", "description": "read a.txt", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
        {"id": "s2", "description": "read b.txt", "tool": "read_file", "args": {"path": "b.txt"}, "depends_on": []},
        {"id": "s3", "description": "say whether the first number is prime", "tool": null, "args": {}, "depends_on": ["s1"]},
        {"id": "s4", "description": "say whether the second number is prime", "tool": null, "args": {}, "depends_on": ["s2"]},
        {"id": "s5", "description": "write one sentence comparing the two numbers", "tool": null, "args": {}, "depends_on": ["s1", "s2"]}
    ]}))
    .unwrap()
}

async fn run_once(
    path: &std::path::Path,
    prefix_reuse: bool,
    dir: &std::path::Path,
) -> (planexec_local::EngineStats, u128, u128) {
    let mut config = EngineConfig::new(path);
    config.prefix_reuse = prefix_reuse;
    let model = Arc::new(LocalModel::load(config).expect("load the model"));
    let agent = Agent::builder(model.clone(), "local")
        .tools(builtin::registry(Workspace::new(dir).unwrap()))
        .build();
    let t = Instant::now();
    let plan = agent
        .plan("Read a.txt and b.txt, add the two numbers, and write the sum to sum.txt.")
        .await;
    let planner_ms = t.elapsed().as_millis();
    if let Err(e) = &plan {
        eprintln!("planner failed: {e}");
    }
    let t = Instant::now();
    let report = agent
        .run_plan(
            "Write a short note about the numbers in a.txt and b.txt.",
            five_step_plan(),
        )
        .await;
    let run_ms = t.elapsed().as_millis();
    assert!(report.succeeded(), "{:?}", report.error);
    (model.stats(), planner_ms, run_ms)
}

/// `n` reasoning steps with no dependencies: they run in parallel.
fn parallel_reasoning(n: usize) -> Plan {
    let steps: Vec<_> = (0..n)
        .map(|i| json!({"id": format!("s{}", i + 1), "description": format!("write the multiplication table of {} from 1 to 10, one line each", i + 7), "tool": null, "args": {}, "depends_on": []}))
        .collect();
    serde_json::from_value(json!({"goal": "multiplication tables", "steps": steps})).unwrap()
}

/// Milliseconds the steps take in a run of one reasoning step, and in a run
/// of two in parallel, with a model that decodes up to `sequences` requests together.
async fn parallel_steps(path: &std::path::Path, dir: &std::path::Path, sequences: u32) -> (u128, u128, EngineStats) {
    let mut config = EngineConfig::new(path);
    config.sequences = sequences;
    let model = Arc::new(LocalModel::load(config).expect("load the model"));
    let agent = Agent::builder(model.clone(), "local")
        .tools(builtin::registry(Workspace::new(dir).unwrap()))
        .build();
    let mut times = Vec::new();
    // Two warm-up runs first, so that the timed runs find their prompts'
    // states saved (the first run remembers the prompts, the second saves them).
    for n in [2, 2, 1, 2] {
        let t = Instant::now();
        let report = agent
            .run_plan("Write multiplication tables.", parallel_reasoning(n))
            .await;
        assert!(report.succeeded(), "{:?}", report.error);
        // The steps' time: the answer written after them is the same work either way.
        let answer_ms = report.usage.role(planexec::Role::Synthesizer).latency_ms as u128;
        times.push(t.elapsed().as_millis().saturating_sub(answer_ms));
    }
    (times[2], times[3], model.stats())
}

fn main() {
    let Some(path) = common::bench_model() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "17\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "25\n").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        println!("model: {}", path.display());
        let (with, planner_ms, run_with_ms) = run_once(&path, true, dir.path()).await;
        let (without, _, run_without_ms) = run_once(&path, false, dir.path()).await;
        let tps = |tokens: u64, ms: u64| {
            if ms == 0 {
                0.0
            } else {
                tokens as f64 * 1000.0 / ms as f64
            }
        };
        println!("model load                     {:>8} ms", with.load_ms);
        println!("planner latency                {planner_ms:>8} ms");
        println!(
            "prompt evaluation              {:>8.1} tok/s  ({} tokens in {} ms, no reuse)",
            tps(without.evaluated_prompt_tokens, without.prompt_ms),
            without.evaluated_prompt_tokens,
            without.prompt_ms
        );
        println!(
            "generation                     {:>8.1} tok/s  ({} tokens in {} ms)",
            tps(with.generated_tokens, with.generate_ms),
            with.generated_tokens,
            with.generate_ms
        );
        println!(
            "  forced by the grammar        {:>8}   tokens fed in batches, not sampled",
            with.forced_tokens
        );
        println!("peak memory (RSS)              {:>8.0} MB", peak_rss_mb());
        println!("plan + 5-step run ({} model calls):", with.calls);
        println!("  prompt tokens sent           {:>8}", with.prompt_tokens);
        println!(
            "  evaluated with prefix reuse  {:>8}   ({run_with_ms} ms for the 5-step run)",
            with.evaluated_prompt_tokens
        );
        println!(
            "  evaluated without reuse      {:>8}   ({run_without_ms} ms for the 5-step run)",
            without.evaluated_prompt_tokens
        );
        println!(
            "  ratio                        {:>8.2}x fewer evaluated with reuse   target >= 3x",
            without.evaluated_prompt_tokens as f64 / with.evaluated_prompt_tokens.max(1) as f64
        );
        let (one, two, shared) = parallel_steps(&path, dir.path(), 4).await;
        let (one_queued, two_queued, _) = parallel_steps(&path, dir.path(), 1).await;
        println!("two parallel reasoning steps against one:");
        println!(
            "  decoded together             {:>8.2}x  (two: {two} ms, one: {one} ms, {} shared decodes)   target <= 1.3x",
            two as f64 / one.max(1) as f64,
            shared.shared_decodes
        );
        let per_decode = |us: u64, n: u64| us as f64 / 1000.0 / n.max(1) as f64;
        let (lone, pair) = (
            per_decode(shared.lone_decode_us, shared.lone_decodes),
            per_decode(shared.pair_decode_us, shared.pair_decodes),
        );
        println!(
            "  one decode of two replies    {:>8.2}x  one of one reply ({pair:.1} ms against {lone:.1} ms, {} and {} decodes)",
            pair / lone.max(f64::MIN_POSITIVE),
            shared.pair_decodes,
            shared.lone_decodes
        );
        println!(
            "  one after another            {:>8.2}x  (two: {two_queued} ms, one: {one_queued} ms)",
            two_queued as f64 / one_queued.max(1) as f64
        );
    });
}
