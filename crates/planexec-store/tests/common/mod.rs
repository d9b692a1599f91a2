//! Helpers shared by the ledger tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh, empty PostgreSQL database for one test.
pub struct PgDatabase {
    pub url: String,
}

/// A new database on the server at `PLANEXEC_TEST_POSTGRES_URL` (`.ci/run` starts
/// one on loopback with `scripts/postgres.sh`). Without the variable the test is
/// skipped with a note, unless `PLANEXEC_REQUIRE_POSTGRES` is set (as in CI).
pub async fn postgres_database() -> Option<PgDatabase> {
    let Ok(admin) = std::env::var("PLANEXEC_TEST_POSTGRES_URL") else {
        if std::env::var_os("PLANEXEC_REQUIRE_POSTGRES").is_some() {
            panic!("PLANEXEC_REQUIRE_POSTGRES is set but PLANEXEC_TEST_POSTGRES_URL is not: start one with scripts/postgres.sh");
        }
        eprintln!("skipped: PLANEXEC_TEST_POSTGRES_URL is not set (scripts/postgres.sh starts a server)");
        return None;
    };
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "planexec_test_{}_{}_{}",
        std::process::id(),
        planexec::result::now_ms(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {admin}: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
    Some(PgDatabase {
        url: format!("{base}/{name}"),
    })
}

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::{Agent, AgentBuilder, Effect, RunOptions, RunStore, Tool, ToolError, ToolRegistry};
use serde_json::{json, Value};

/// A tool that counts its invocations in files: every call appends a line to
/// `<dir>/calls/<key>`; a tool with side effects also appends one to
/// `<dir>/effects/<key>` (its "effect"), between two short sleeps, so that a
/// kill can land before, during or after the effect. Returns `name(input)`.
pub struct FileCounter {
    pub name: &'static str,
    pub dir: PathBuf,
    pub effect: Effect,
    pub sleep: Duration,
    /// Fail while this file exists (lets a test make a step fail, then fix it).
    pub fail_while: Option<PathBuf>,
}

fn append_line(path: &Path) {
    use std::io::Write;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(b"x\n").unwrap();
    f.sync_all().unwrap();
}

/// Lines in a counter file (0 when it does not exist).
pub fn count(path: &Path) -> usize {
    std::fs::read_to_string(path).map(|s| s.lines().count()).unwrap_or(0)
}

#[async_trait]
impl Tool for FileCounter {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "counts its calls in files"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"key": {"type": "string"}, "input": {"type": "string"}}, "required": ["key", "input"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        self.effect
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let key = args["key"].as_str().unwrap_or("none").to_string();
        append_line(&self.dir.join("calls").join(&key));
        if self.fail_while.as_ref().is_some_and(|p| p.exists()) {
            return Err(ToolError::failed(format!("{key} cannot run yet")));
        }
        tokio::time::sleep(self.sleep).await;
        if self.effect.has_side_effects() {
            append_line(&self.dir.join("effects").join(&key));
            tokio::time::sleep(self.sleep / 2).await;
        }
        Ok(json!(format!(
            "{}({})",
            self.name,
            args["input"].as_str().unwrap_or("")
        )))
    }
}

/// `fetch` (read-only) and `append` (writes the workspace) counting in `dir`.
pub fn counting_tools(dir: &Path, sleep: Duration, fail_while: Option<PathBuf>) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    for (name, effect) in [("fetch", Effect::ReadOnly), ("append", Effect::WritesWorkspace)] {
        reg.register(Arc::new(FileCounter {
            name,
            dir: dir.to_path_buf(),
            effect,
            sleep,
            // Only the writes fail: the reads before them succeed and are kept.
            fail_while: if effect.has_side_effects() {
                fail_while.clone()
            } else {
                None
            },
        }))
        .unwrap();
    }
    reg
}

pub fn step(id: &str, tool: &str, input: &str, deps: &[&str]) -> Value {
    json!({"id": id, "description": format!("do {id}"), "tool": tool, "args": {"key": id, "input": input}, "depends_on": deps})
}

/// Ten steps: four reads, side effects that join them, and a tail that
/// alternates reads and writes, so parallel and sequential parts both crash.
pub fn workload_plan() -> Value {
    json!({"goal": "count", "steps": [
        step("s1", "fetch", "a", &[]),
        step("s2", "fetch", "b", &[]),
        step("s3", "fetch", "c", &[]),
        step("s4", "fetch", "d", &[]),
        step("s5", "append", "{{s1}}+{{s2}}", &["s1", "s2"]),
        step("s6", "append", "{{s3}}+{{s4}}", &["s3", "s4"]),
        step("s7", "fetch", "{{s5}}|{{s6}}", &["s5", "s6"]),
        step("s8", "append", "{{s7}}", &["s7"]),
        step("s9", "fetch", "{{s8}}", &["s8"]),
        step("s10", "append", "{{s9}}!", &["s9"]),
    ]})
}

pub const SIDE_EFFECT_STEPS: [&str; 4] = ["s5", "s6", "s8", "s10"];

pub fn agent_builder(base_url: &str, api_key: &str, tools: ToolRegistry, store: Arc<dyn RunStore>) -> AgentBuilder {
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: base_url.to_string(),
        api_key: Some(api_key.to_string()),
        timeout: Duration::from_secs(10),
        max_retries: 2,
        retry_base: Duration::from_millis(10),
    })
    .unwrap();
    Agent::builder(Arc::new(provider), "test-model")
        .tools(tools)
        .store(store)
        .options(RunOptions {
            retry_backoff: Duration::from_millis(5),
            tool_retries: 0,
            max_steps: 12,
            ..RunOptions::default()
        })
}
