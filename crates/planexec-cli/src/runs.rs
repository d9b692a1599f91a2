//! The run ledger from the terminal: where it is, and `planexec runs
//! list|show|export|rm`. Everything here goes through the library's
//! `RunStore` trait; the SQLite/PostgreSQL store is only opened here.

use std::path::PathBuf;
use std::sync::Arc;

use planexec::render::{self, Annotations};
use planexec::store::{RunFilter, RunStore, StoredRun, Waiting};
use planexec::tools::{builtin, workspace::Workspace};
use planexec::{Role, RunStatus, StepStatus};

use crate::args::{LedgerArgs, RunsCommand};
use crate::outcome::{BadInput, EXIT_OK};

/// The default ledger: `$XDG_DATA_HOME/planexec/ledger.db` (or the platform's data folder).
pub fn default_db() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("planexec").join("ledger.db"))
}

/// Open the ledger named by `--db` / `PLANEXEC_DB`, or the default one.
pub async fn open(db: Option<&str>) -> Result<Arc<dyn RunStore>, String> {
    let target = match db {
        Some(db) if !db.trim().is_empty() => db.to_string(),
        _ => default_db()
            .ok_or("cannot find a data folder for the run ledger: set PLANEXEC_DB or pass --db FILE")?
            .to_string_lossy()
            .into_owned(),
    };
    let store = planexec_store::SqlStore::open(&target)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(store))
}

/// The workspace a run was started in (the CLI records it with the run), or `.`.
pub fn workspace_of(run: &StoredRun) -> PathBuf {
    run.options
        .get("workspace")
        .and_then(|w| w.as_str())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// A run by id, or by a prefix that names exactly one run.
pub async fn find(store: &dyn RunStore, id: &str) -> Result<StoredRun, String> {
    if let Some(run) = store.load_run(id).await.map_err(|e| e.to_string())? {
        return Ok(run);
    }
    let all = store
        .list_runs(&RunFilter::default())
        .await
        .map_err(|e| e.to_string())?;
    let matches: Vec<&str> = all
        .iter()
        .map(|r| r.run_id.as_str())
        .filter(|r| r.starts_with(id))
        .collect();
    match matches.as_slice() {
        [one] => store
            .load_run(one)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("run {one} vanished from the ledger")),
        [] => Err(format!(
            "there is no run {id} in the ledger {} (see `planexec runs list`)",
            store.describe()
        )),
        many => Err(format!(
            "{id} names {} runs ({}…); give more of the id",
            many.len(),
            many.iter().take(3).copied().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) from Unix milliseconds.
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// `runs list`: newest first.
pub async fn list(
    store: &dyn RunStore,
    status: Option<RunStatus>,
    limit: Option<u32>,
    json: bool,
) -> Result<String, String> {
    let runs = store
        .list_runs(&RunFilter { status, limit })
        .await
        .map_err(|e| e.to_string())?;
    if json {
        return Ok(serde_json::to_string_pretty(&runs).unwrap_or_default() + "\n");
    }
    if runs.is_empty() {
        return Ok(format!("no runs in {}\n", store.describe()));
    }
    let mut out = format!(
        "{:<22} {:<12} {:<19} {:>5} {:>7} {:>9}  {}\n",
        "run", "status", "started (UTC)", "steps", "replans", "tokens", "task"
    );
    for r in runs {
        out.push_str(&format!(
            "{:<22} {:<12} {:<19} {:>5} {:>7} {:>9}  {}\n",
            r.run_id,
            r.status.as_str(),
            utc(r.started_at),
            r.steps_done,
            r.replans,
            r.prompt_tokens + r.completion_tokens,
            planexec::text::one_line(&r.task, 60)
        ));
    }
    Ok(out)
}

/// One inner call of an agent step, indented under the step's row.
fn inner_call_line(call: &planexec::StepResult) -> String {
    let tool = call.tool.as_deref().unwrap_or("?");
    let args = call
        .args
        .as_ref()
        .map(|a| planexec::text::one_line(&a.to_string(), 50))
        .unwrap_or_default();
    let note = match &call.error {
        Some(error) => planexec::text::one_line(error, 60),
        None => call
            .output
            .as_ref()
            .map(|o| planexec::text::one_line(&planexec::plan::value_as_text(o), 60))
            .unwrap_or_default(),
    };
    format!(
        "  ↳ {:<8} {:<10} {:>6}ms  {tool} {args}  {note}\n",
        call.id,
        call.status.as_str(),
        call.elapsed_ms()
    )
}

/// `runs show`: the plan in force as a tree with each step's status, then
/// each execution (attempts, time, tokens), the replans with their reasons,
/// and the answer.
pub fn show(run: &StoredRun, side_effect_tools: Vec<String>) -> String {
    let report = run.report();
    let mut out = format!(
        "run {}  {}  started {} UTC  took {:.1}s{}\ntask: {}\n",
        run.run_id,
        run.status.as_str(),
        utc(run.started_at),
        run.elapsed_ms as f64 / 1000.0,
        match run.resumes {
            0 => String::new(),
            n => format!("  resumed {n}x"),
        },
        run.task
    );
    for c in &run.clarifications {
        out.push_str(&format!("  Q: {}\n  A: {}\n", c.question, c.answer));
    }
    for v in &run.plans {
        out.push_str(&format!("plan v{}: {}\n", v.version, v.reason));
    }
    if let Some(plan) = &report.plan {
        // The status a step ended with (the last execution that settled it).
        let mut statuses = std::collections::HashMap::new();
        for s in &report.steps {
            let current = statuses.get(s.id.as_str()).copied();
            if s.status.is_done() || !current.is_some_and(StepStatus::is_done) {
                statuses.insert(s.id.as_str(), s.status);
            }
        }
        let mends = report.plans.last().map(|v| v.mends.as_slice()).unwrap_or_default();
        let notes = Annotations {
            side_effect_tools,
            statuses,
            mends,
        };
        out.push('\n');
        out.push_str(&render::text(plan, &notes));
    }
    // `report.steps` begins with the executions, in the same order, each with
    // its agent step's inner calls.
    let executions: Vec<_> = run.steps.iter().zip(&report.steps).collect();
    if !executions.is_empty() {
        out.push_str(&format!(
            "\n{:<6} {:<12} {:>8} {:>9} {:>7} {:>9}  {}\n",
            "step", "status", "attempts", "time", "calls", "tokens", "note"
        ));
        for (s, with_calls) in executions {
            let tokens: u64 = run
                .exchanges
                .iter()
                .filter(|x| x.step_id.as_deref() == Some(s.result.id.as_str()))
                .map(|x| x.prompt_tokens + x.completion_tokens)
                .sum();
            let note = s
                .result
                .error
                .as_deref()
                .map(|e| planexec::text::one_line(e, 70))
                .unwrap_or_default();
            out.push_str(&format!(
                "{:<6} {:<12} {:>8} {:>8}ms {:>7} {:>9}  {note}\n",
                s.result.id,
                s.result.status.as_str(),
                s.result.attempts,
                s.result.elapsed_ms(),
                s.result.model_calls,
                tokens
            ));
            for call in &with_calls.calls {
                out.push_str(&inner_call_line(call));
            }
        }
    }
    if let Some(answer) = &run.answer {
        out.push_str(&format!("\nanswer:\n{answer}\n"));
    }
    if let Some(error) = &run.error {
        out.push_str(&format!("\nerror: {error}\n"));
    }
    let usage = run.usage();
    if usage.total().calls > 0 {
        out.push('\n');
        for role in Role::ALL {
            let u = usage.role(role);
            if u.calls > 0 {
                out.push_str(&format!(
                    "{:<12} {:>3} calls {:>8} prompt {:>7} completion tokens{}\n",
                    role.as_str(),
                    u.calls,
                    u.prompt_tokens,
                    u.completion_tokens,
                    u.cost.map(|c| format!("  ${c:.4}")).unwrap_or_default()
                ));
            }
        }
    }
    if run.status.resumable() {
        out.push_str(&format!("\nresume with: planexec resume {}\n", run.run_id));
    }
    out
}

/// `runs list|show|export|rm`.
pub async fn command(command: RunsCommand, ledger: LedgerArgs) -> Result<u8, BadInput> {
    let store = open(ledger.db.as_deref()).await?;
    match command {
        RunsCommand::List { status, limit, json } => {
            out!("{}", list(store.as_ref(), status, limit, json).await?);
        }
        RunsCommand::Show { run_id, json, .. } => {
            let run = find(store.as_ref(), &run_id).await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&run).unwrap_or_default());
                return Ok(EXIT_OK);
            }
            let side_effects = Workspace::new(workspace_of(&run))
                .map(|ws| crate::setup::side_effect_tools(&builtin::registry(ws)))
                .unwrap_or_default();
            out!("{}", show(&run, side_effects));
        }
        RunsCommand::Export { run_id, output } => {
            let run = find(store.as_ref(), &run_id).await?;
            let text = serde_json::to_string_pretty(&run).unwrap_or_default() + "\n";
            match output {
                Some(path) => std::fs::write(&path, text)
                    .map_err(|e| BadInput(format!("cannot write {}: {e}", path.display())))?,
                None => out!("{text}"),
            }
        }
        RunsCommand::Rm { run_ids } => {
            // Resolve every id first, so a typo deletes nothing.
            let mut found = Vec::new();
            for id in &run_ids {
                found.push(find(store.as_ref(), id).await?.run_id);
            }
            for id in found {
                store.delete_run(&id).await.map_err(|e| BadInput(e.to_string()))?;
                eprintln!("removed {id}");
            }
        }
    }
    Ok(EXIT_OK)
}

/// How to go on with a run that waits, for the messages of `run`, `resume` and `approve`.
pub fn how_to_decide(run_id: &str, waiting: &Waiting) -> String {
    let (approve, edit) = match waiting {
        Waiting::Plan { .. } => (
            String::new(),
            format!("\n  planexec edit {run_id}                  # change the plan, then resume"),
        ),
        Waiting::Step { step_id, also, .. } if also.is_empty() => (format!(" --step {step_id}"), String::new()),
        // Several calls of one pass: all at once, or each on its own.
        Waiting::Step { .. } => (
            String::new(),
            waiting
                .calls()
                .iter()
                .map(|c| format!("\n  planexec approve {run_id} --step {}   # only this call; resume runs it while the others wait", c.step_id))
                .collect(),
        ),
        Waiting::Answer { schema, .. } => (
            " --answer '{…}'".to_string(),
            format!("\n  (the answer is a JSON object following {schema})"),
        ),
    };
    format!(
        "run {run_id} waits for {}. Decide from any terminal:\n  planexec approve {run_id}{approve} --resume   # approve and continue here\n  planexec reject {run_id} --reason \"…\"{edit}\n  planexec steer {run_id} \"…\"            # a message for the replanner",
        waiting.describe()
    )
}
