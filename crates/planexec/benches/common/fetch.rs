//! The bench mock's one tool, shared by the strategy and agent-step benches:
//! `fetch` takes [`TOOL_MS`] and returns a document of about 1 KB about its
//! input, noting when each call started.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use planexec::{Effect, Tool, ToolError};
use serde_json::{json, Value};

/// How long one fetch takes.
pub const TOOL_MS: u64 = 200;

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The `fetch` tool; `starts` collects the time (ms since the epoch) each call began.
#[derive(Default)]
pub struct Fetch {
    pub starts: Arc<Mutex<Vec<u64>>>,
}

#[async_trait]
impl Tool for Fetch {
    fn name(&self) -> &str {
        "fetch"
    }
    fn description(&self) -> &str {
        "fetches the document named by `input`"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"input": {"type": "string", "description": "what to fetch"}}, "required": ["input"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        self.starts.lock().unwrap().push(now_ms());
        tokio::time::sleep(Duration::from_millis(TOOL_MS)).await;
        let topic: String = args["input"].as_str().unwrap_or("").chars().take(40).collect();
        let line = format!("Notes on {topic}: figures, dates and remarks gathered for the report. ");
        Ok(json!(line.repeat(1000 / line.len() + 1)))
    }
}

/// A plan step that fetches `input`.
pub fn fetch_step(id: &str, input: &str, deps: &[&str]) -> Value {
    json!({"id": id, "description": format!("fetch {input}"), "tool": "fetch", "args": {"input": input}, "depends_on": deps})
}
