//! A task suite: task files in one folder, and its table.
//!
//! `tune.jsonl` is the part a change to prompts, grammars or tools is tried
//! on; a held-out part is only ever reported, so its pass rate says how the
//! agent does on tasks nobody fitted it to. A held-out part that was reported
//! while changes were made has steered them and is spent: it stays, named
//! for what it is, and a new one is written before the next round.
//! `heldout.jsonl` is `held-out-1` and `heldout-N.jsonl` is `held-out-N`, so a
//! new part is a new file (docs/benchmarks.md says which are spent). The
//! table has one row per part and strategy: pass rate, runs that said
//! `succeeded` while their check failed, time and model calls per task, and
//! prompt tokens per task for each role (the latency a local model pays).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{load_tasks, median, BenchRun, BenchTask};
use crate::strategy::Strategy;

/// The parts a suite folder holds, in order: file name and the part's name
/// in the table. `tune.jsonl` and `heldout.jsonl` are looked for whether
/// there or not (a suite needs both); `heldout-N.jsonl` files follow by `N`.
pub fn parts(dir: &Path) -> Vec<(String, String)> {
    let mut numbered: Vec<(u32, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let file = entry.ok()?.file_name().into_string().ok()?;
            let n = file.strip_prefix("heldout-")?.strip_suffix(".jsonl")?.parse().ok()?;
            Some((n, file))
        })
        .filter(|(n, _)| *n >= 2)
        .collect();
    numbered.sort();
    let mut parts = vec![
        ("tune.jsonl".to_string(), "tune".to_string()),
        ("heldout.jsonl".to_string(), "held-out-1".to_string()),
    ];
    parts.extend(numbered.into_iter().map(|(n, file)| (file, format!("held-out-{n}"))));
    parts
}

/// The tasks of the suite in `dir` (every part, or the one named `only`).
pub fn load_suite(dir: &Path, only: Option<&str>) -> Result<Vec<BenchTask>, String> {
    let parts = parts(dir);
    if let Some(part) = only {
        if !parts.iter().any(|(_, name)| name == part) {
            let names: Vec<&str> = parts.iter().map(|(_, name)| name.as_str()).collect();
            return Err(format!(
                "unknown suite part `{part}`: {} has {}",
                dir.display(),
                names.join(", ")
            ));
        }
    }
    let mut tasks = Vec::new();
    for (file, part) in parts {
        if only.is_some_and(|o| o != part) {
            continue;
        }
        let path = dir.join(&file);
        if !path.is_file() {
            return Err(format!(
                "{} is not a suite: it has no {file} (a suite folder holds tune.jsonl and heldout.jsonl, and may hold heldout-2.jsonl, heldout-3.jsonl, …)",
                dir.display()
            ));
        }
        for mut task in load_tasks(&path)? {
            task.part = Some(part.clone());
            tasks.push(task);
        }
    }
    Ok(tasks)
}

/// One part under one strategy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteRow {
    pub part: String,
    pub strategy: Strategy,
    pub runs: u32,
    pub passed: u32,
    /// Runs that ended `succeeded` although their task's check failed: a
    /// status that did not tell the truth (the target is 0).
    #[serde(default)]
    pub false_successes: u32,
    /// Median wall time of a run.
    pub median_ms: f64,
    /// Slowest run.
    pub max_ms: f64,
    pub model_calls: f64,
    /// Mean prompt tokens per run, per role.
    pub prompt_tokens: BTreeMap<String, f64>,
    /// Mean prompt tokens per run read from a prompt cache.
    pub cache_read_tokens: f64,
}

impl SuiteRow {
    pub fn pass_rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.passed as f64 / self.runs as f64
        }
    }
}

/// One row per part (in suite order) and strategy.
pub fn summarize(runs: &[BenchRun]) -> Vec<SuiteRow> {
    let mut keys: Vec<(String, Strategy)> = Vec::new();
    for r in runs {
        let key = (r.part.clone().unwrap_or_default(), r.strategy);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .map(|(part, strategy)| {
            let group: Vec<&BenchRun> = runs
                .iter()
                .filter(|r| r.part.as_deref().unwrap_or_default() == part && r.strategy == strategy)
                .collect();
            let n = group.len().max(1) as f64;
            let mut prompt_tokens: BTreeMap<String, f64> = BTreeMap::new();
            for r in &group {
                for (role, tokens) in &r.prompt_tokens_by_role {
                    *prompt_tokens.entry(role.clone()).or_default() += *tokens as f64 / n;
                }
            }
            SuiteRow {
                part,
                strategy,
                runs: group.len() as u32,
                passed: group.iter().filter(|r| r.passed).count() as u32,
                false_successes: group.iter().filter(|r| r.false_success()).count() as u32,
                median_ms: median(group.iter().map(|r| r.wall_ms as f64)),
                max_ms: group.iter().map(|r| r.wall_ms as f64).fold(0.0, f64::max),
                model_calls: median(group.iter().map(|r| r.model_calls as f64)),
                prompt_tokens,
                cache_read_tokens: group.iter().map(|r| r.cache_read_tokens as f64).sum::<f64>() / n,
            }
        })
        .collect()
}

/// The rows as a Markdown table (it reads as plain text too), under a line
/// naming the model.
pub fn render_table(model: &str, rows: &[SuiteRow]) -> String {
    let mut roles: Vec<&String> = rows.iter().flat_map(|r| r.prompt_tokens.keys()).collect();
    roles.sort();
    roles.dedup();
    let mut header = vec![
        "part".to_string(),
        "strategy".to_string(),
        "passed".to_string(),
        "rate".to_string(),
        "false ok".to_string(),
        "median s".to_string(),
        "max s".to_string(),
        "calls".to_string(),
    ];
    header.extend(roles.iter().map(|r| format!("{r} prompt tok")));
    header.push("cache read tok".to_string());
    let mut out = format!("model: {model}\n\n| {} |\n", header.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        let mut cells = vec![
            r.part.clone(),
            r.strategy.to_string(),
            format!("{}/{}", r.passed, r.runs),
            format!("{:.0}%", r.pass_rate() * 100.0),
            format!("{}", r.false_successes),
            format!("{:.1}", r.median_ms / 1000.0),
            format!("{:.1}", r.max_ms / 1000.0),
            format!("{}", r.model_calls),
        ];
        cells.extend(
            roles
                .iter()
                .map(|role| format!("{:.0}", r.prompt_tokens.get(*role).copied().unwrap_or(0.0))),
        );
        cells.push(format!("{:.0}", r.cache_read_tokens));
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(part: &str, passed: bool, wall_ms: u64, planner: u64) -> BenchRun {
        BenchRun {
            task: "t".into(),
            part: Some(part.into()),
            strategy: Strategy::PlanExecute,
            run_id: String::new(),
            passed,
            failure: (!passed).then(|| "total.txt is \"41\", not \"42\"".to_string()),
            status: "succeeded".into(),
            model_calls: 2,
            prompt_tokens: planner + 100,
            completion_tokens: 10,
            cost: None,
            wall_ms,
            replans: 0,
            fell_back: false,
            prompt_tokens_by_role: [("planner".to_string(), planner), ("synthesizer".to_string(), 100)].into(),
            cache_read_tokens: 50,
            cache_read_tokens_by_role: [("planner".to_string(), 50)].into(),
        }
    }

    #[test]
    fn parts_are_rows_with_rates_times_and_tokens_per_role() {
        let runs = vec![
            run("tune", true, 1000, 300),
            run("tune", false, 3000, 500),
            run("tune", true, 2000, 400),
            run("held-out-2", true, 5000, 900),
        ];
        let rows = summarize(&runs);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].part.as_str(), rows[0].passed, rows[0].runs), ("tune", 2, 3));
        assert_eq!((rows[0].median_ms, rows[0].max_ms), (2000.0, 3000.0));
        assert_eq!(rows[0].prompt_tokens["planner"], 400.0);
        let table = render_table("local test.gguf", &rows);
        assert!(table.starts_with("model: local test.gguf"), "{table}");
        assert!(
            table.contains("| planner prompt tok | synthesizer prompt tok |"),
            "{table}"
        );
        assert!(
            table.contains("| tune | plan-execute | 2/3 | 67% | 1 | 2.0 | 3.0 | 2 | 400 | 100 | 50 |"),
            "{table}"
        );
        assert!(
            table.contains("| held-out-2 | plan-execute | 1/1 | 100% | 0 |"),
            "{table}"
        );
    }

    #[test]
    fn the_shipped_suite_has_both_parts_and_each_kind_of_task() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks");
        let tasks = load_suite(&dir, None).unwrap();
        let part = |p: &str| tasks.iter().filter(|t| t.part.as_deref() == Some(p)).count();
        assert!(
            tasks.len() >= 40
                && part("tune") >= 20
                && part("held-out-1") >= 20
                && (2..=15).all(|n| part(&format!("held-out-{n}")) >= 30),
            "{}",
            tasks.len()
        );
        let refusals = tasks
            .iter()
            .filter(|t| t.checks.iter().any(|c| matches!(c, super::super::Check::Status { .. })))
            .count();
        let no_file = tasks.iter().filter(|t| t.workspace.is_none()).count();
        assert!(
            refusals >= 3 && no_file >= 6,
            "{refusals} refusals, {no_file} with no file"
        );
        let mut names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), tasks.len(), "task names are unique");
    }

    #[test]
    fn a_folder_without_both_parts_is_not_a_suite() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tune.jsonl"),
            "{\"task\": \"t\", \"check\": {\"says\": \"x\"}}\n",
        )
        .unwrap();
        let err = load_suite(dir.path(), None).unwrap_err();
        assert!(err.contains("no heldout.jsonl"), "{err}");
        let tune = load_suite(dir.path(), Some("tune")).unwrap();
        assert_eq!(tune[0].part.as_deref(), Some("tune"));
        std::fs::write(dir.path().join("heldout-10.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("heldout-9.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("heldout-x.jsonl"), "").unwrap();
        let err = load_suite(dir.path(), Some("test")).unwrap_err();
        assert!(
            err.contains("unknown suite part `test`") && err.ends_with("has tune, held-out-1, held-out-9, held-out-10"),
            "{err}"
        );
    }
}
