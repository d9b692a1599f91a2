//! Helpers shared by the integration tests: an agent wired to a scripted
//! OpenAI-compatible server over real HTTP, and test tools that count their
//! invocations, sleep, or fail on purpose.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::tools::{builtin, workspace::Workspace};
use planexec::{Agent, AgentBuilder, ChatModel, Effect, RunOptions, Tool, ToolError, ToolRegistry};
use planexec_testkit::ScriptedServer;
use serde_json::{json, Value};

pub fn provider(server: &ScriptedServer) -> Arc<dyn ChatModel> {
    provider_at(&server.base_url(), Some("test-key"))
}

pub fn provider_at(base_url: &str, key: Option<&str>) -> Arc<dyn ChatModel> {
    Arc::new(
        OpenAiCompatible::new(OpenAiConfig {
            base_url: base_url.to_string(),
            api_key: key.map(str::to_string),
            timeout: Duration::from_secs(10),
            max_retries: 2,
            retry_base: Duration::from_millis(10),
        })
        .unwrap(),
    )
}

/// Options with short retry delays, so failure tests stay quick.
pub fn options() -> RunOptions {
    RunOptions {
        retry_backoff: Duration::from_millis(5),
        ..RunOptions::default()
    }
}

pub fn builder(server: &ScriptedServer, tools: ToolRegistry) -> AgentBuilder {
    Agent::builder(provider(server), "test-model")
        .tools(tools)
        .options(options())
}

pub fn agent(server: &ScriptedServer, tools: ToolRegistry) -> Agent {
    builder(server, tools).build()
}

/// The built-in tools on a fresh temporary workspace.
pub fn workspace_tools() -> (tempfile::TempDir, ToolRegistry) {
    let dir = tempfile::tempdir().unwrap();
    let reg = builtin::registry(Workspace::new(dir.path()).unwrap());
    (dir, reg)
}

/// A test tool: counts calls, optionally sleeps, optionally fails its first
/// `fail_first` calls with `fail_kind`. Returns `{"tool": name, "input": args.input}`.
pub struct TestTool {
    pub name: String,
    pub calls: Arc<AtomicU32>,
    pub sleep: Duration,
    pub fail_first: u32,
    pub fail_with: Option<ToolError>,
    pub effect: Effect,
}

impl TestTool {
    pub fn new(name: &str) -> TestTool {
        TestTool {
            name: name.to_string(),
            calls: Arc::new(AtomicU32::new(0)),
            sleep: Duration::ZERO,
            fail_first: 0,
            fail_with: None,
            effect: Effect::ReadOnly,
        }
    }
    pub fn sleeping(mut self, d: Duration) -> Self {
        self.sleep = d;
        self
    }
    pub fn failing(mut self, times: u32, error: ToolError) -> Self {
        self.fail_first = times;
        self.fail_with = Some(error);
        self
    }
    pub fn counter(&self) -> Arc<AtomicU32> {
        self.calls.clone()
    }
}

#[async_trait]
impl Tool for TestTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "a test tool"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        self.effect
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if !self.sleep.is_zero() {
            tokio::time::sleep(self.sleep).await;
        }
        if n <= self.fail_first {
            if let Some(e) = &self.fail_with {
                return Err(e.clone());
            }
        }
        Ok(json!({"tool": self.name, "input": args["input"]}))
    }
}

pub fn registry(tools: Vec<TestTool>) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    for t in tools {
        reg.register(Arc::new(t)).unwrap();
    }
    reg
}

/// A step as JSON.
pub fn step(id: &str, tool: Option<&str>, args: Value, deps: &[&str]) -> Value {
    json!({"id": id, "description": format!("do {id}"), "tool": tool, "args": args, "depends_on": deps})
}

pub fn plan_json(steps: Vec<Value>) -> Value {
    json!({"goal": "test goal", "steps": steps})
}
