//! # planexec-local — the embedded local model
//!
//! A small instruct model (Qwen2.5-Coder GGUF) run on the CPU through llama.cpp,
//! behind planexec's [`ChatModel`] port, so planexec works with no network and
//! no API key. [`weights`] fetches the model files; [`LocalModel`] serves chat
//! requests:
//!
//! - the model's own chat template; greedy decoding, so runs are repeatable;
//! - structured output (`response_format`) is grammar-constrained: the JSON
//!   Schema, already specialised to the run's tools by the planner, becomes a
//!   GBNF grammar ([`gbnf`]), so a plan always parses;
//! - required tool calls are grammar-constrained to `{"name", "arguments"}`
//!   with each tool's own argument schema;
//! - the KV cache keeps the previous prompt, so the system prompt and tool list
//!   every call starts with are evaluated once ([`engine`]), and their state is
//!   saved on disk, so the next process loads it instead ([`prefix_store`]);
//! - one worker thread owns the model: concurrent steps queue for it.

pub mod engine;
mod forced;
pub mod gbnf;
pub mod plan_shape;
pub mod prefix_store;
pub mod weights;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use planexec::llm::{
    ChatModel, ChatRequest, ChatResponse, LlmError, Message, Prepared, TextSink, TokenUsage, ToolCall, ToolChoice,
};
use serde_json::{json, Value};

pub use engine::{EngineConfig, EngineStats};

/// Most tokens generated for one reply unless the request says otherwise.
const DEFAULT_MAX_TOKENS: u32 = 1536;

/// The embedded model as a [`ChatModel`].
pub struct LocalModel {
    engine: engine::Engine,
    name: String,
}

impl LocalModel {
    /// Load a GGUF file (this takes a second or two).
    pub fn load(config: EngineConfig) -> Result<LocalModel, LlmError> {
        let name = config
            .model_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "local".into());
        if !config.model_path.is_file() {
            return Err(LlmError::ModelNotFound(format!(
                "the model file {} does not exist",
                config.model_path.display()
            )));
        }
        let engine = engine::Engine::start(config).map_err(LlmError::ModelNotFound)?;
        Ok(LocalModel { engine, name })
    }

    /// The model file's name, e.g. `qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn path(&self) -> &Path {
        &self.engine.config.model_path
    }

    /// Token counters since load (or the last reset): prompt tokens sent and evaluated, tokens generated, time.
    pub fn stats(&self) -> EngineStats {
        self.engine.stats()
    }

    pub fn reset_stats(&self) {
        self.engine.reset_stats()
    }
}

/// Where to find the model: an explicit file, else the named catalogue model if pulled.
/// The error says exactly which command fetches it.
pub fn locate_model(model_path: Option<&Path>, catalog_name: &str) -> Result<PathBuf, String> {
    if let Some(path) = model_path {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(format!("the model file {} does not exist", path.display()))
        };
    }
    let spec = weights::spec(catalog_name).ok_or_else(|| {
        format!(
            "unknown local model `{catalog_name}`: choose {}",
            weights::CATALOG.iter().map(|s| s.name).collect::<Vec<_>>().join(" or ")
        )
    })?;
    weights::installed(&spec).ok_or_else(|| {
        format!(
            "the {} local model ({}) is not installed: run `planexec model pull {}` (or pass --model-path FILE, or set --base-url / OPENAI_API_KEY to use a server)",
            spec.name, spec.description, spec.name
        )
    })
}

/// Chat messages as (role, text) for the model's template. Tool calls and their
/// results become plain text, which every template accepts.
fn to_chat(messages: &[Message]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| match m {
            Message::System { content } => ("system".to_string(), content.clone()),
            Message::User { content } => ("user".to_string(), content.clone()),
            // Calls and results in the tags Qwen-style models are tuned on.
            Message::Assistant { content, tool_calls } => {
                let mut text = content.clone().unwrap_or_default();
                for c in tool_calls {
                    let call = json!({"name": c.name, "arguments": c.arguments});
                    text.push_str(&format!("<tool_call>\n{call}\n</tool_call>"));
                }
                ("assistant".to_string(), text)
            }
            Message::Tool { content, .. } => (
                "user".to_string(),
                format!("<tool_response>\n{content}\n</tool_response>"),
            ),
        })
        .collect()
}

fn text_response(text: String, usage: TokenUsage) -> ChatResponse {
    ChatResponse {
        content: Some(text),
        tool_calls: Vec::new(),
        usage,
        finish_reason: Some("stop".into()),
    }
}

fn call_response(call: &Value, usage: TokenUsage) -> ChatResponse {
    ChatResponse {
        content: None,
        tool_calls: vec![ToolCall {
            id: "call_0".into(),
            name: call["name"].as_str().unwrap_or_default().to_string(),
            arguments: call["arguments"].clone(),
        }],
        usage,
        finish_reason: Some("tool_calls".into()),
    }
}

/// Greedy decoding (repeatable) unless the request asks for a temperature
/// above zero; then sampling, seeded from the prompt so the same request
/// samples the same way.
fn sampling_for(request: &ChatRequest) -> Option<engine::Sampling> {
    use std::hash::{Hash, Hasher};
    let temperature = request.temperature.filter(|t| *t > 0.0)?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(&request.messages)
        .unwrap_or_default()
        .hash(&mut hasher);
    temperature.to_bits().hash(&mut hasher);
    Some(engine::Sampling {
        temperature,
        seed: hasher.finish(),
    })
}

/// The tool a model "calls" to finish when it may choose between a call and
/// an answer (as smolagents does): small models tuned on tool calls pick it
/// more reliably than a separate answer format.
const FINAL_ANSWER: &str = "final_answer";

/// A reply written under [`answer_or_call_schema`]: a call, or the answer's
/// text. Output the grammar did not hold to (cut short by the token limit)
/// goes back as text, for the caller to read or ask again.
fn answer_or_call(text: String, usage: TokenUsage) -> ChatResponse {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(reply) if reply["name"] == FINAL_ANSWER => match &reply["arguments"]["answer"] {
            Value::String(answer) => text_response(answer.clone(), usage),
            _ => text_response(text, usage),
        },
        Ok(reply) if reply.get("name").is_some() => call_response(&reply, usage),
        _ => text_response(text, usage),
    }
}

/// Plain text that cannot be a call: it starts with neither `{` nor `<`
/// (a JSON call, `<tool_call>`), nor with white space before one.
const NO_CALL_GRAMMAR: &str = r#"root ::= [^{<\x00-\x20] [^\x00]*
"#;

/// The schema of a reply that either calls one of `tools`, its arguments
/// following that tool's schema, or answers through [`FINAL_ANSWER`].
fn answer_or_call_schema(request: &ChatRequest) -> Value {
    let mut schema = tool_call_schema(request);
    if let Some(options) = schema.get_mut("anyOf").and_then(Value::as_array_mut) {
        options.push(json!({
            "type": "object",
            "properties": {
                "name": {"const": FINAL_ANSWER},
                "arguments": {
                    "type": "object",
                    "properties": {"answer": {"type": "string"}},
                    "required": ["answer"]
                }
            },
            "required": ["name", "arguments"]
        }));
    }
    schema
}

/// The schema of a reply that calls one of `tools`.
fn tool_call_schema(request: &ChatRequest) -> Value {
    let options: Vec<Value> = request
        .tools
        .iter()
        .map(|t| {
            json!({
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                "required": ["name", "arguments"]
            })
        })
        .collect();
    json!({"anyOf": options})
}

/// The grammar of a tool call: planexec's own subset where it covers the
/// tools' argument schemas (its grammars sample fastest), llama.cpp's general
/// converter where it does not (an MCP tool's `allOf`, `pattern`, map-typed
/// object, ...), without length bounds.
fn call_grammar(schema: &Value) -> String {
    if gbnf::covers(schema) {
        return gbnf::from_schema(schema);
    }
    match llama_cpp_2::json_schema_to_grammar(&gbnf::without_length_bounds(schema).to_string()) {
        Ok(grammar) => grammar,
        Err(e) => {
            tracing::debug!(error = %e, "llama.cpp could not convert a tool schema; using planexec's subset");
            gbnf::from_schema(schema)
        }
    }
}

/// The grammar a reply to `request` must follow: the plan or response
/// schema, a call of an offered tool, a call or an answer, or (when no call
/// is allowed) plain text that is not a call. `None`: free text.
fn grammar_for(request: &ChatRequest) -> Option<String> {
    let wants_call = !request.tools.is_empty() && request.tool_choice == ToolChoice::Required;
    let may_call = !request.tools.is_empty() && request.tool_choice == ToolChoice::Auto;
    if let Some(format) = &request.response_format {
        if plan_shape::is_plan_schema(&format.name, &format.schema) {
            let max = format
                .schema
                .pointer("/properties/steps/maxItems")
                .and_then(serde_json::Value::as_u64)
                .map_or(plan_shape::MAX_STEPS, |m| m as usize);
            Some(gbnf::from_schema(&plan_shape::reshape(&format.schema, max)))
        } else {
            Some(gbnf::from_schema(&format.schema))
        }
    } else if wants_call {
        Some(call_grammar(&tool_call_schema(request)))
    } else if may_call {
        Some(call_grammar(&answer_or_call_schema(request)))
    } else if request.tool_choice == ToolChoice::None {
        // "Answer now, no call": a small model that has been calling
        // tools writes one more call as text unless it cannot.
        Some(NO_CALL_GRAMMAR.to_string())
    } else {
        None
    }
}

#[async_trait]
impl ChatModel for LocalModel {
    fn describe(&self) -> String {
        format!("local {}", self.engine.config.model_path.display())
    }

    fn provider_name(&self) -> &str {
        "llama.cpp"
    }

    /// A small local model gets the worked plans and plan rewrite rules
    /// under `mend = "auto"`: asked again, it often writes the same plan.
    fn wants_plan_help(&self) -> bool {
        true
    }

    fn keeps_prompt_state(&self) -> bool {
        true
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.generate(&request, None).await
    }

    /// The text is handed over token by token as the model writes it (the
    /// compiler strategy starts steps from a plan still being written).
    async fn chat_stream(&self, request: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        self.generate(&request, Some(on_text)).await
    }

    /// Brings a prompt of `system` and an empty user message into the KV
    /// cache, generating nothing: the system message's state is saved on
    /// disk ([`prefix_store`]), or loaded if it was saved before.
    async fn prepare(&self, system: &str) -> Result<Prepared, LlmError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.engine
            .submit(engine::Job {
                messages: vec![("system".into(), system.into()), ("user".into(), String::new())],
                grammar: None,
                max_tokens: 0,
                sampling: None,
                stream: None,
                reply: tx,
            })
            .map_err(LlmError::Server)?;
        let generation = rx
            .await
            .map_err(|_| LlmError::Server("the model thread stopped".into()))?
            .map_err(LlmError::BadRequest)?;
        Ok(Prepared {
            kept_tokens: generation.cached_tokens + generation.saved_tokens,
            evaluated_tokens: generation.saved_tokens,
        })
    }
}

impl LocalModel {
    async fn generate(&self, request: &ChatRequest, on_text: Option<TextSink<'_>>) -> Result<ChatResponse, LlmError> {
        let mut messages = to_chat(&request.messages);
        let wants_call = !request.tools.is_empty() && request.tool_choice == ToolChoice::Required;
        // The model chooses between a call and an answer: both are constrained,
        // so a call cannot come back as text, nor name a tool it may not use.
        let may_call = !request.tools.is_empty() && request.tool_choice == ToolChoice::Auto;
        let grammar = grammar_for(request);
        if !request.tools.is_empty() && request.tool_choice != ToolChoice::None {
            // Small models follow a stated format better than a tool list they were not tuned on.
            let mut names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            let finish = if may_call {
                names.push(FINAL_ANSWER);
                " When you have the result, call final_answer: {\"name\": \"final_answer\", \"arguments\": {\"answer\": \"<the result>\"}}."
            } else {
                ""
            };
            if let Some(last) = messages.iter_mut().rev().find(|(r, _)| r == "user") {
                last.1.push_str(&format!(
                    "\n\nTo call a tool, reply with only a JSON object: {{\"name\": one of {names:?}, \"arguments\": {{...}}}}.{finish}"
                ));
            }
        }
        tracing::trace!(messages = ?messages, "local model prompt");
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        // A tool call is parsed whole, so only plain text is streamed.
        let (stream_tx, mut stream_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let stream = on_text.filter(|_| !wants_call && !may_call);
        self.engine
            .submit(engine::Job {
                messages,
                grammar,
                max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
                sampling: sampling_for(request),
                stream: stream.is_some().then_some(stream_tx),
                reply: tx,
            })
            .map_err(LlmError::Server)?;
        let finished = loop {
            tokio::select! {
                Some(piece) = stream_rx.recv() => {
                    if let Some(sink) = stream {
                        sink(&piece);
                    }
                }
                reply = &mut rx => break reply,
            }
        };
        // Pieces sent just before the reply.
        while let Ok(piece) = stream_rx.try_recv() {
            if let Some(sink) = stream {
                sink(&piece);
            }
        }
        let generation = finished
            .map_err(|_| LlmError::Server("the model thread stopped".into()))?
            .map_err(LlmError::BadRequest)?;
        let usage = TokenUsage {
            prompt_tokens: generation.prompt_tokens,
            completion_tokens: generation.completion_tokens,
            cache_read_tokens: generation.cached_tokens,
            cache_write_tokens: generation.saved_tokens,
        };
        if wants_call {
            let call: Value = serde_json::from_str(generation.text.trim()).map_err(|e| {
                LlmError::InvalidResponse(format!(
                    "the local model's tool call is not JSON ({e}): {}",
                    generation.text
                ))
            })?;
            return Ok(call_response(&call, usage));
        }
        let mut response = match may_call {
            true => answer_or_call(generation.text, usage),
            false => text_response(generation.text, usage),
        };
        if generation.looped {
            // Cut short, as by the token limit.
            response.finish_reason = Some("length".into());
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planexec::llm::{Role, ToolSpec};

    fn read_file_request() -> ChatRequest {
        let mut request = ChatRequest::new(Role::Agent, "", vec![Message::user("go")]);
        request.tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "read a file".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "additionalProperties": false
            }),
        }];
        request.tool_choice = ToolChoice::Auto;
        request
    }

    /// Each tool choice gets its grammar; "no call" (an agent loop's last
    /// turn) is text that cannot open a call, so it cannot end as one.
    #[test]
    fn each_tool_choice_has_its_grammar() {
        let mut request = read_file_request();
        assert!(grammar_for(&request).unwrap().contains("final_answer"));
        request.tool_choice = ToolChoice::Required;
        let required = grammar_for(&request).unwrap();
        assert!(
            required.contains("read_file") && !required.contains("final_answer"),
            "{required}"
        );
        request.tool_choice = ToolChoice::None;
        request.tools.clear();
        assert_eq!(grammar_for(&request).as_deref(), Some(NO_CALL_GRAMMAR));
        assert!(NO_CALL_GRAMMAR.starts_with("root ::= [^{<"), "{NO_CALL_GRAMMAR}");
        request.tool_choice = ToolChoice::Auto;
        assert_eq!(grammar_for(&request), None, "free text when nothing is asked");
    }

    /// A tool schema planexec's subset cannot express (an MCP server's
    /// `pattern`, here) gets llama.cpp's own converter, without length bounds;
    /// one it covers keeps the subset's grammar.
    #[test]
    fn a_tool_schema_the_subset_does_not_cover_gets_llama_cpps_grammar() {
        let mut request = read_file_request();
        request.tool_choice = ToolChoice::Required;
        let own = grammar_for(&request).unwrap();
        assert!(own.contains("ws ::= "), "{own}");
        request.tools[0].parameters = json!({
            "type": "object",
            "properties": {
                "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "maxLength": 10},
                "note": {"type": "string"}
            },
            "required": ["date"]
        });
        let general = grammar_for(&request).unwrap();
        assert!(!general.contains("ws ::= "), "not the subset's grammar: {general}");
        assert!(
            general.contains("date-1{4,4} \"-\" ") && general.contains("date-1 ::= [0-9]"),
            "the pattern is in the grammar: {general}"
        );
        assert!(
            general.contains("note"),
            "optional properties may be written: {general}"
        );
    }

    #[test]
    fn the_auto_grammar_allows_a_call_of_an_offered_tool_with_its_arguments_or_an_answer() {
        let g = gbnf::from_schema(&answer_or_call_schema(&read_file_request()));
        assert!(g.contains(r#""\"read_file\"""#), "{g}");
        assert!(
            g.contains(r#""\"path\"""#),
            "the arguments follow the tool's schema: {g}"
        );
        assert!(
            g.contains(r#""\"final_answer\"""#) && g.contains(r#""\"answer\"""#),
            "{g}"
        );
        assert!(!g.contains("file_path"), "{g}");
    }

    #[test]
    fn an_auto_reply_is_a_call_or_the_answer_text() {
        let usage = TokenUsage::default();
        let call = answer_or_call(r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#.into(), usage);
        assert_eq!(call.tool_calls.len(), 1);
        assert_eq!(call.tool_calls[0].name, "read_file");
        assert_eq!(call.tool_calls[0].arguments, json!({"path": "a.txt"}));
        assert!(call.content.is_none());
        let answer = answer_or_call(
            r#"{"name": "final_answer", "arguments": {"answer": "Acme Ltd."}}"#.into(),
            usage,
        );
        assert!(answer.tool_calls.is_empty());
        assert_eq!(answer.content.as_deref(), Some("Acme Ltd."));
        // Cut short by the token limit: handed back as text for the loop to judge.
        let cut = answer_or_call(r#"{"name": "final_answer", "arguments": {"answer": "Ac"#.into(), usage);
        assert_eq!(
            cut.content.as_deref(),
            Some(r#"{"name": "final_answer", "arguments": {"answer": "Ac"#)
        );
    }

    #[test]
    fn the_local_plan_grammar_can_write_agent_steps() {
        let tools = planexec::tools::builtin::registry(
            planexec::tools::workspace::Workspace::new(std::env::temp_dir()).unwrap(),
        );
        let (schema, _) = planexec::plan::plan_schema_for(&tools, &["worker".to_string()], 4);
        assert!(plan_shape::is_plan_schema("plan", &schema));
        let g = gbnf::from_schema(&plan_shape::reshape(&schema, 4));
        assert!(g.contains(r#""\"agent\"""#) && g.contains(r#""\"worker\"""#), "{g}");
        let (without, _) = planexec::plan::plan_schema_for(&tools, &[], 4);
        let g = gbnf::from_schema(&plan_shape::reshape(&without, 4));
        assert!(!g.contains(r#""\"agent\"""#), "{g}");
        // A refusal is a plan form too: no steps and the reason.
        assert!(g.contains(r#""\"infeasible\"""#), "{g}");
    }
}
