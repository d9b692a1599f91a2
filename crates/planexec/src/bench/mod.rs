//! Benchmarks of strategies on a user's own tasks: a task file (JSON Lines),
//! each task run under each strategy in a fresh copy of its workspace fixture,
//! checked, and summed up per task and strategy (medians over repeats).
//!
//! One line of a task file:
//! ```json
//! {"name": "sum-prices", "task": "Sum data/prices.txt into total.txt", "workspace": "fixtures/prices",
//!  "check": {"file": "total.txt", "contains": "42"}}
//! ```
//! `workspace` is a folder relative to the task file (copied for every run;
//! optional). `check` is one object or a list that must all pass:
//! `{"answer_contains": "42"}` (case-insensitive), `{"file": "out.txt", "contains": "…"}`,
//! `{"file": "out.txt", "equals": "…"}` (trailing whitespace ignored),
//! `{"command": "test -s out.txt"}` (run by `sh -c` in the workspace; must exit 0),
//! `{"absent": "out.txt"}` (the run must not write it), `{"no_tool": "read_file"}`
//! (no step may call it), `{"says": "does not exist"}` (the answer or the
//! error says it, case-insensitive) and `{"status": "infeasible"}` (or a list of
//! statuses; without it the run must end `succeeded`).
//!
//! A suite ([`suite`]) is a folder of two task files: `tune.jsonl`, the part
//! changes are tried on, and `heldout.jsonl`, the part only reported.
//!
//! The library runs and measures; building each run's agent (provider, tools
//! on the workspace copy) is the caller's, so the CLI and a Rust program bench
//! exactly the agents they run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::report::{RunReport, RunStatus};
use crate::scratch::{CopyLimit, ScratchDir};
use crate::strategy::Strategy;
use crate::Agent;

pub mod suite;

/// One benchmark task.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchTask {
    pub name: String,
    pub task: String,
    /// The fixture folder copied into each run's workspace.
    pub workspace: Option<PathBuf>,
    pub checks: Vec<Check>,
    /// The suite part the task belongs to (`tune`, `held-out-2`, …), if any.
    pub part: Option<String>,
}

/// What a successful run must have done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Check {
    AnswerContains { answer_contains: String },
    FileContains { file: String, contains: String },
    FileEquals { file: String, equals: String },
    Command { command: String },
    Absent { absent: String },
    NoTool { no_tool: String },
    Says { says: String },
    Status { status: Statuses },
}

/// One run status, or any of several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Statuses {
    One(String),
    Any(Vec<String>),
}

impl Statuses {
    fn allows(&self, status: RunStatus) -> bool {
        match self {
            Statuses::One(s) => s == status.as_str(),
            Statuses::Any(list) => list.iter().any(|s| s == status.as_str()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskLine {
    name: Option<String>,
    task: String,
    workspace: Option<String>,
    check: Value,
}

/// Read a task file. Errors name the file, the line and what to write instead.
pub fn load_tasks(path: &Path) -> Result<Vec<BenchTask>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        let at = format!("{}:{}", path.display(), i + 1);
        let parsed: TaskLine = serde_json::from_str(line).map_err(|e| {
            format!("{at}: not a task ({e}); a line is {{\"task\": \"...\", \"workspace\": \"folder\", \"check\": {{\"answer_contains\": \"...\"}}}}")
        })?;
        let checks: Vec<Value> = match parsed.check {
            Value::Array(items) => items,
            one => vec![one],
        };
        let checks = checks
            .into_iter()
            .map(|c| {
                serde_json::from_value::<Check>(c.clone()).map_err(|_| {
                    format!("{at}: unknown check {c}; use {{\"answer_contains\": \"…\"}}, {{\"file\": \"…\", \"contains\": \"…\"}}, {{\"file\": \"…\", \"equals\": \"…\"}}, {{\"command\": \"…\"}}, {{\"absent\": \"…\"}}, {{\"no_tool\": \"…\"}}, {{\"says\": \"…\"}} or {{\"status\": \"…\"}}")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if checks.is_empty() {
            return Err(format!("{at}: the task has no check"));
        }
        let workspace = parsed.workspace.map(|w| base.join(w));
        if let Some(w) = &workspace {
            if !w.is_dir() {
                return Err(format!("{at}: the workspace folder {} does not exist", w.display()));
            }
        }
        tasks.push(BenchTask {
            name: parsed.name.unwrap_or_else(|| format!("task{}", tasks.len() + 1)),
            task: parsed.task,
            workspace,
            checks,
            part: None,
        });
    }
    if tasks.is_empty() {
        return Err(format!("{} has no tasks", path.display()));
    }
    Ok(tasks)
}

/// A fresh copy of a task's fixture (or an empty folder), removed when dropped.
pub struct BenchWorkspace(ScratchDir);

impl BenchWorkspace {
    pub fn new(task: &BenchTask) -> Result<BenchWorkspace, String> {
        let dir = match &task.workspace {
            Some(fixture) => ScratchDir::copy_of(fixture, "bench", CopyLimit::NONE)
                .map_err(|e| format!("cannot copy {}: {e}", fixture.display()))?,
            None => ScratchDir::new("bench").map_err(|e| format!("cannot create a bench workspace: {e}"))?,
        };
        Ok(BenchWorkspace(dir))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// Whether a finished run passes its task's checks; the error says which failed and why.
pub fn check(task: &BenchTask, report: &RunReport, workspace: &Path) -> Result<(), String> {
    let status_ok = match task.checks.iter().find_map(|c| match c {
        Check::Status { status } => Some(status),
        _ => None,
    }) {
        Some(wanted) => wanted.allows(report.status),
        None => report.status == RunStatus::Succeeded,
    };
    if !status_ok {
        return Err(format!(
            "the run ended {}: {}",
            report.status.as_str(),
            crate::text::one_line(report.error.as_deref().unwrap_or(""), 160)
        ));
    }
    task.checks.iter().try_for_each(|c| check_one(c, report, workspace))
}

fn check_one(check: &Check, report: &RunReport, workspace: &Path) -> Result<(), String> {
    match check {
        Check::AnswerContains { answer_contains } => {
            let answer = report.answer.as_deref().unwrap_or("");
            if !answer.to_lowercase().contains(&answer_contains.to_lowercase()) {
                return Err(format!(
                    "the answer does not contain \"{answer_contains}\": {}",
                    crate::text::one_line(answer, 120)
                ));
            }
        }
        Check::FileContains { file, contains } => {
            let text = read(workspace, file)?;
            if !text.contains(contains.as_str()) {
                return Err(format!(
                    "{file} does not contain \"{contains}\": {}",
                    crate::text::one_line(&text, 120)
                ));
            }
        }
        Check::FileEquals { file, equals } => {
            let text = read(workspace, file)?;
            if text.trim_end() != equals.trim_end() {
                return Err(format!(
                    "{file} is \"{}\", not \"{equals}\"",
                    crate::text::one_line(&text, 120)
                ));
            }
        }
        Check::Command { command } => run_check_command(command, workspace)?,
        Check::Absent { absent } => {
            if workspace.join(absent).exists() {
                let text = read(workspace, absent).unwrap_or_default();
                return Err(format!(
                    "{absent} was written, and must not be: {}",
                    crate::text::one_line(&text, 120)
                ));
            }
        }
        Check::NoTool { no_tool } => {
            let used = report
                .steps
                .iter()
                .flat_map(|s| std::iter::once(s).chain(s.calls.iter()))
                .any(|s| s.tool.as_deref() == Some(no_tool.as_str()) && s.started_at.is_some());
            if used {
                return Err(format!("a step called {no_tool}, which the task needs no call of"));
            }
        }
        Check::Says { says } => {
            let said = format!(
                "{}\n{}",
                report.answer.as_deref().unwrap_or(""),
                report.error.as_deref().unwrap_or("")
            );
            if !said.to_lowercase().contains(&says.to_lowercase()) {
                return Err(format!(
                    "neither the answer nor the error says \"{says}\": {}",
                    crate::text::one_line(&said, 160)
                ));
            }
        }
        Check::Status { .. } => {}
    }
    Ok(())
}

fn run_check_command(command: &str, workspace: &Path) -> Result<(), String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(workspace)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{command}`: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "`{command}` exited with {}: {}",
        out.status.code().map_or("a signal".to_string(), |c| c.to_string()),
        crate::text::one_line(&String::from_utf8_lossy(&out.stderr), 120)
    ))
}

fn read(workspace: &Path, file: &str) -> Result<String, String> {
    std::fs::read_to_string(workspace.join(file)).map_err(|e| format!("cannot read {file}: {e}"))
}

/// One run of one task under one strategy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRun {
    pub task: String,
    /// The suite part of the task, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    pub strategy: Strategy,
    /// The run's id: with a ledger, `planexec runs show ID` shows its plan and steps.
    #[serde(default)]
    pub run_id: String,
    pub passed: bool,
    /// Why the run did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub status: String,
    pub model_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// USD, when every model called has a price.
    pub cost: Option<f64>,
    pub wall_ms: u64,
    pub replans: u32,
    /// The run handed what was left of its task to the ReAct fallback loop.
    #[serde(default)]
    pub fell_back: bool,
    /// Prompt tokens per role (`planner`, `executor`, …).
    #[serde(default)]
    pub prompt_tokens_by_role: std::collections::BTreeMap<String, u64>,
    /// Of `prompt_tokens`, those read from a prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Of `prompt_tokens_by_role`, those read from a prompt cache.
    #[serde(default)]
    pub cache_read_tokens_by_role: std::collections::BTreeMap<String, u64>,
}

impl BenchRun {
    /// Whether the run said `succeeded` though its task's check failed.
    pub fn false_success(&self) -> bool {
        !self.passed && self.status == RunStatus::Succeeded.as_str()
    }
}

/// Run every task under every strategy `repeat` times, one run at a time (so
/// wall times do not compete). `agent_for` builds the agent of one run, with
/// its tools on the given workspace copy; `on_run` sees each run as it ends.
pub async fn run(
    tasks: &[BenchTask],
    strategies: &[Strategy],
    repeat: u32,
    agent_for: &dyn Fn(Strategy, &Path) -> Result<Agent, String>,
    on_run: &mut dyn FnMut(&BenchRun),
) -> Result<Vec<BenchRun>, String> {
    let mut runs = Vec::new();
    for task in tasks {
        for &strategy in strategies {
            for _ in 0..repeat.max(1) {
                let workspace = BenchWorkspace::new(task)?;
                let agent = agent_for(strategy, workspace.path())?;
                let started = Instant::now();
                let report = agent.run(&task.task).await;
                let wall_ms = started.elapsed().as_millis() as u64;
                let verdict = check(task, &report, workspace.path());
                let usage = report.usage.total();
                let cost = usage.cost.filter(|_| report.usage.0.values().all(|u| u.cost.is_some()));
                let run = BenchRun {
                    task: task.name.clone(),
                    part: task.part.clone(),
                    strategy,
                    run_id: report.run_id.clone(),
                    passed: verdict.is_ok(),
                    failure: verdict.err(),
                    status: report.status.as_str().to_string(),
                    model_calls: usage.calls,
                    prompt_tokens: usage.prompt_tokens,
                    completion_tokens: usage.completion_tokens,
                    cost,
                    wall_ms,
                    replans: report.replans,
                    fell_back: report.fell_back.is_some(),
                    prompt_tokens_by_role: report
                        .usage
                        .0
                        .iter()
                        .map(|(role, u)| (role.to_string(), u.prompt_tokens))
                        .collect(),
                    cache_read_tokens: usage.cache_read_tokens,
                    cache_read_tokens_by_role: report
                        .usage
                        .0
                        .iter()
                        .map(|(role, u)| (role.to_string(), u.cache_read_tokens))
                        .collect(),
                };
                on_run(&run);
                runs.push(run);
            }
        }
    }
    Ok(runs)
}

/// The runs of one task under one strategy (or, with `task` [`ALL_TASKS`], of
/// all tasks), as medians over the repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRow {
    pub task: String,
    pub strategy: Strategy,
    pub runs: u32,
    pub passed: u32,
    pub model_calls: f64,
    pub prompt_tokens: f64,
    pub completion_tokens: f64,
    pub cost: Option<f64>,
    pub wall_ms: f64,
    pub replans: f64,
    /// Prompt tokens per role (medians), with those read from a prompt cache.
    #[serde(default)]
    pub by_role: std::collections::BTreeMap<String, RoleTokens>,
}

/// A role's prompt tokens in a [`BenchRow`]: all of them, and those read
/// from a prompt cache (the rest were paid in full).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleTokens {
    pub prompt: f64,
    pub cached: f64,
}

/// The medians of each role's prompt tokens over `group`.
fn role_medians(group: &[&BenchRun]) -> std::collections::BTreeMap<String, RoleTokens> {
    let mut roles: Vec<&String> = group.iter().flat_map(|r| r.prompt_tokens_by_role.keys()).collect();
    roles.sort();
    roles.dedup();
    roles
        .into_iter()
        .map(|role| {
            let of = |m: &std::collections::BTreeMap<String, u64>| m.get(role).copied().unwrap_or(0) as f64;
            let tokens = RoleTokens {
                prompt: median(group.iter().map(|r| of(&r.prompt_tokens_by_role))),
                cached: median(group.iter().map(|r| of(&r.cache_read_tokens_by_role))),
            };
            (role.clone(), tokens)
        })
        .collect()
}

/// The `task` of the rows that sum up all tasks.
pub const ALL_TASKS: &str = "(all)";

/// Rows per task and strategy (medians), then a total per strategy (sums of
/// the per-task medians, and every run's pass), whose task is [`ALL_TASKS`].
pub fn summarize(runs: &[BenchRun]) -> Vec<BenchRow> {
    let mut rows: Vec<BenchRow> = Vec::new();
    let mut keys: Vec<(String, Strategy)> = Vec::new();
    for r in runs {
        if !keys.contains(&(r.task.clone(), r.strategy)) {
            keys.push((r.task.clone(), r.strategy));
        }
    }
    for (task, strategy) in &keys {
        let group: Vec<&BenchRun> = runs
            .iter()
            .filter(|r| &r.task == task && r.strategy == *strategy)
            .collect();
        let costs: Option<Vec<f64>> = group.iter().map(|r| r.cost).collect();
        rows.push(BenchRow {
            task: task.clone(),
            strategy: *strategy,
            runs: group.len() as u32,
            passed: group.iter().filter(|r| r.passed).count() as u32,
            model_calls: median(group.iter().map(|r| r.model_calls as f64)),
            prompt_tokens: median(group.iter().map(|r| r.prompt_tokens as f64)),
            completion_tokens: median(group.iter().map(|r| r.completion_tokens as f64)),
            cost: costs.map(|c| median(c.into_iter())),
            wall_ms: median(group.iter().map(|r| r.wall_ms as f64)),
            replans: median(group.iter().map(|r| r.replans as f64)),
            by_role: role_medians(&group),
        });
    }
    let mut strategies: Vec<Strategy> = Vec::new();
    for (_, s) in &keys {
        if !strategies.contains(s) {
            strategies.push(*s);
        }
    }
    let per_task = rows.clone();
    for strategy in strategies {
        let group: Vec<&BenchRow> = per_task.iter().filter(|r| r.strategy == strategy).collect();
        let sum = |f: &dyn Fn(&BenchRow) -> f64| group.iter().map(|r| f(r)).sum::<f64>();
        rows.push(BenchRow {
            task: ALL_TASKS.to_string(),
            strategy,
            runs: group.iter().map(|r| r.runs).sum(),
            passed: group.iter().map(|r| r.passed).sum(),
            model_calls: sum(&|r| r.model_calls),
            prompt_tokens: sum(&|r| r.prompt_tokens),
            completion_tokens: sum(&|r| r.completion_tokens),
            cost: group.iter().map(|r| r.cost).sum::<Option<f64>>(),
            wall_ms: sum(&|r| r.wall_ms),
            replans: sum(&|r| r.replans),
            by_role: Default::default(),
        });
    }
    rows
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The rows as a plain-text table.
pub fn render_table(rows: &[BenchRow]) -> String {
    let header = [
        "task",
        "strategy",
        "success",
        "calls",
        "prompt tok",
        "compl tok",
        "cost $",
        "wall s",
        "replans",
    ];
    let mut lines: Vec<[String; 9]> = Vec::new();
    let number = |x: f64| {
        if x.fract() == 0.0 {
            crate::text::thousands(x as u64)
        } else {
            format!("{x:.1}")
        }
    };
    for r in rows {
        lines.push([
            r.task.clone(),
            r.strategy.to_string(),
            format!("{}/{}", r.passed, r.runs),
            number(r.model_calls),
            number(r.prompt_tokens),
            number(r.completion_tokens),
            r.cost.map_or("-".to_string(), |c| format!("{c:.4}")),
            format!("{:.2}", r.wall_ms / 1000.0),
            number(r.replans),
        ]);
    }
    let mut widths = header.map(str::len);
    for l in &lines {
        for (w, cell) in widths.iter_mut().zip(l.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let row = |cells: &[String]| -> String {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths.iter()).enumerate() {
            if i < 2 {
                out.push_str(&format!("{cell:<w$}  "));
            } else {
                out.push_str(&format!("{cell:>w$}  "));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = row(&header.map(str::to_string));
    let mut previous_total = false;
    for l in &lines {
        let is_total = l[0] == ALL_TASKS;
        if is_total && !previous_total {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
            out.push('\n');
        }
        previous_total = is_total;
        out.push_str(&row(l));
    }
    out
}

/// Each row's prompt tokens per role, cached and not: one line per task
/// and strategy, e.g. `chain8 / plan-execute: planner 865 (0 cached), synthesizer 181 (0 cached)`.
pub fn render_roles(rows: &[BenchRow]) -> String {
    let mut out = String::new();
    for row in rows.iter().filter(|r| !r.by_role.is_empty()) {
        let roles: Vec<String> = row
            .by_role
            .iter()
            .map(|(role, t)| {
                let n = |x: f64| crate::text::thousands(x.round() as u64);
                format!("{role} {} ({} cached)", n(t.prompt), n(t.cached))
            })
            .collect();
        out.push_str(&format!("{} / {}: {}\n", row.task, row.strategy, roles.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_run(task: &str, strategy: Strategy, passed: bool, calls: u64, wall_ms: u64) -> BenchRun {
        BenchRun {
            task: task.into(),
            part: None,
            strategy,
            run_id: String::new(),
            passed,
            failure: None,
            status: "succeeded".into(),
            model_calls: calls,
            prompt_tokens: calls * 100,
            completion_tokens: calls * 10,
            cost: None,
            wall_ms,
            replans: 0,
            fell_back: false,
            prompt_tokens_by_role: Default::default(),
            cache_read_tokens: 0,
            cache_read_tokens_by_role: Default::default(),
        }
    }

    #[test]
    fn rows_are_medians_and_totals_sum_them() {
        let runs = vec![
            bench_run("a", Strategy::React, true, 5, 100),
            bench_run("a", Strategy::React, false, 9, 900),
            bench_run("a", Strategy::React, true, 7, 300),
            bench_run("b", Strategy::React, true, 2, 50),
        ];
        let rows = summarize(&runs);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[0].passed, rows[0].runs, rows[0].model_calls, rows[0].wall_ms),
            (2, 3, 7.0, 300.0)
        );
        let total = &rows[2];
        assert_eq!(
            (total.task.as_str(), total.passed, total.runs, total.model_calls),
            (ALL_TASKS, 3, 4, 9.0)
        );
        let table = render_table(&rows);
        assert!(table.contains("react"), "{table}");
        assert!(
            table.lines().any(|l| l.starts_with(ALL_TASKS) && l.contains("3/4")),
            "{table}"
        );
    }

    #[test]
    fn task_files_with_mistakes_say_where_and_what_to_write() {
        let dir = std::env::temp_dir().join(format!("planexec-bench-load-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("fx")).unwrap();
        let file = dir.join("tasks.jsonl");
        std::fs::write(
            &file,
            "# comment\n{\"task\": \"t\", \"workspace\": \"fx\", \"check\": [{\"answer_contains\": \"x\"}, {\"command\": \"true\"}]}\n",
        )
        .unwrap();
        let tasks = load_tasks(&file).unwrap();
        assert_eq!(tasks[0].checks.len(), 2);
        assert_eq!(tasks[0].name, "task1");
        std::fs::write(&file, "{\"task\": \"t\", \"check\": {\"answer\": \"x\"}}\n").unwrap();
        let err = load_tasks(&file).unwrap_err();
        assert!(
            err.contains("tasks.jsonl:1: unknown check") && err.contains("answer_contains"),
            "{err}"
        );
        std::fs::write(
            &file,
            "{\"task\": \"t\", \"workspace\": \"nope\", \"check\": {\"command\": \"true\"}}\n",
        )
        .unwrap();
        assert!(load_tasks(&file).unwrap_err().contains("does not exist"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
