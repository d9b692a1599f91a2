//! `cargo run --release -p planexec-local --example ask -- PROMPTS.jsonl [MODEL.gguf]`
//!
//! The embedded model with no runtime around it: each line of PROMPTS.jsonl
//! is `{"id": …, "system": …, "user": …, "max_tokens": …, "schema": …}` (a
//! JSON schema the reply is held to, as the runtime's short questions
//! are, optional), and each reply is
//! printed as one JSON line `{"id": …, "reply": …, "seconds": …}`, greedy
//! (temperature 0). It measures what the bare model does with a task, the
//! baseline the runtime's plans, checks and recovery are meant to beat
//! (`scripts/bare-model.py` writes the prompts and scores the replies). The
//! model is the pulled `default` one unless a GGUF file is named.

use std::io::{BufRead, Write};
use std::time::Instant;

use planexec::llm::{ChatModel, ChatRequest, JsonSchemaFormat, Message, Role};
use planexec_local::{locate_model, EngineConfig, LocalModel};
use serde_json::{json, Value};

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let prompts = args
        .next()
        .ok_or("usage: ask PROMPTS.jsonl [MODEL.gguf] (one {\"id\", \"system\", \"user\"} object per line)")?;
    let named = args.next().map(std::path::PathBuf::from);
    let path = locate_model(named.as_deref(), "default")?;
    let model = LocalModel::load(EngineConfig::new(path)).map_err(|e| e.to_string())?;
    let file = std::fs::File::open(&prompts).map_err(|e| format!("{prompts}: {e}"))?;
    let mut out = std::io::stdout().lock();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{prompts}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let prompt: Value = serde_json::from_str(&line).map_err(|e| format!("{prompts} line {}: {e}", n + 1))?;
        let text = |key: &str| prompt.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let mut request = ChatRequest::new(
            Role::Executor,
            model.name(),
            vec![Message::system(text("system")), Message::user(text("user"))],
        );
        request.temperature = Some(0.0);
        request.max_tokens = prompt.get("max_tokens").and_then(Value::as_u64).map(|t| t as u32);
        request.response_format = prompt
            .get("schema")
            .filter(|s| !s.is_null())
            .map(|schema| JsonSchemaFormat {
                name: "answer".to_string(),
                schema: schema.clone(),
                strict: true,
            });
        let started = Instant::now();
        let reply = match model.chat(request).await {
            Ok(response) => json!({"reply": response.content}),
            Err(e) => json!({"error": e.to_string()}),
        };
        let mut record = json!({"id": prompt.get("id"), "seconds": started.elapsed().as_secs_f64()});
        record
            .as_object_mut()
            .unwrap()
            .extend(reply.as_object().unwrap().clone());
        writeln!(out, "{record}").map_err(|e| e.to_string())?;
        out.flush().map_err(|e| e.to_string())?;
    }
    Ok(())
}
