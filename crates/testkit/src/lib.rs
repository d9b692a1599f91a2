//! A scripted OpenAI-compatible Chat Completions server on loopback, which also
//! speaks Anthropic's Messages API (`POST /v1/messages`).
//!
//! Tests and benchmarks start one per case, script its replies per role (the
//! `x-planexec-role` header every planexec request carries) and optionally by a
//! substring of the request body, then read back every request it received with
//! its arrival and reply times. It speaks real HTTP on `127.0.0.1:0`, so the
//! provider code under test is exactly the code users run. Replies are scripted
//! once, in OpenAI's shape; on `/v1/messages` they are translated to Anthropic's
//! (text and `tool_use` blocks, `stop_reason`, `usage`, error objects), unless
//! a reply is [`Reply::raw`], which is sent as written (recorded fixtures).
//!
//! The server runs on its own thread and runtime, so it serves equally well a
//! `#[tokio::test]` and a blocking test that drives the `planexec` binary.

pub mod links;
pub mod mcp;
pub mod otlp;
pub mod structure;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

/// One scripted HTTP reply.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub headers: Vec<(String, String)>,
    pub delay: Option<Duration>,
    /// Sent as written on every endpoint (no translation to the Anthropic shape).
    pub raw: bool,
    /// Pieces a streamed reply (`"stream": true`) is sent in, spread evenly over its delay.
    pub chunks: usize,
    /// A body sent byte for byte instead of `body` (with `raw`), e.g. a hand-written event stream.
    pub text: Option<String>,
    /// Break the connection after sending `text`, as a network failure would.
    pub cut: bool,
}

impl Reply {
    /// A successful completion whose message content is `text`.
    pub fn content(text: impl Into<String>) -> Reply {
        Reply::completion(json!({"role": "assistant", "content": text.into()}), "stop")
    }

    /// A successful completion whose content is `value` serialized as JSON.
    pub fn json(value: &Value) -> Reply {
        Reply::content(value.to_string())
    }

    /// A successful completion with one native tool call.
    pub fn tool_call(name: &str, arguments: &Value) -> Reply {
        Reply::completion(
            json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": format!("call_{name}"),
                    "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}
                }]
            }),
            "tool_calls",
        )
    }

    fn completion(message: Value, finish_reason: &str) -> Reply {
        Reply {
            status: 200,
            body: json!({
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
            }),
            headers: Vec::new(),
            delay: None,
            raw: false,
            chunks: 1,
            text: None,
            cut: false,
        }
    }

    /// A reply sent exactly as given, e.g. a provider's documented response body.
    pub fn raw(status: u16, body: Value) -> Reply {
        Reply {
            status,
            body,
            headers: Vec::new(),
            delay: None,
            raw: true,
            chunks: 1,
            text: None,
            cut: false,
        }
    }

    /// An event stream that sends `prefix` and then breaks the connection.
    pub fn cut_event_stream(prefix: &str) -> Reply {
        Reply {
            cut: true,
            ..Reply::event_stream(prefix)
        }
    }

    /// A server-sent event stream written out by hand (`text/event-stream`),
    /// sent as it is, for the edge cases of the format.
    pub fn event_stream(body: &str) -> Reply {
        Reply {
            text: Some(body.to_string()),
            ..Reply::raw(200, Value::Null).with_header("content-type", "text/event-stream")
        }
    }

    /// Report Anthropic-style prompt-cache tokens (on `/v1/messages`).
    pub fn with_cache(mut self, read: u64, written: u64) -> Reply {
        self.body["usage"]["cache_read_input_tokens"] = json!(read);
        self.body["usage"]["cache_creation_input_tokens"] = json!(written);
        self
    }

    /// An error reply in OpenAI's error shape.
    pub fn error(status: u16, message: &str) -> Reply {
        Reply {
            status,
            body: json!({"error": {"message": message, "type": "test_error"}}),
            headers: Vec::new(),
            delay: None,
            raw: false,
            chunks: 1,
            text: None,
            cut: false,
        }
    }

    /// Replace the reported token usage.
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Reply {
        self.body["usage"] = json!({
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens
        });
        self
    }

    /// Drop the `usage` object, as some local servers do.
    pub fn without_usage(mut self) -> Reply {
        if let Some(obj) = self.body.as_object_mut() {
            obj.remove("usage");
        }
        self
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// When the request asks to stream, send the content in `chunks` pieces,
    /// spread evenly over the reply's delay (the last piece goes when an
    /// unstreamed reply would).
    pub fn streamed(mut self, chunks: usize) -> Reply {
        self.chunks = chunks.max(1);
        self
    }

    /// Wait this long before replying (simulated model latency).
    pub fn with_delay(mut self, delay: Duration) -> Reply {
        self.delay = Some(delay);
        self
    }
}

/// A request the server received, with when it arrived and when it was answered
/// (milliseconds since the Unix epoch, comparable with planexec's own timestamps).
#[derive(Clone, Debug)]
pub struct Recorded {
    pub role: Option<String>,
    pub authorization: Option<String>,
    pub body: Value,
    pub received_ms: u64,
    pub replied_ms: u64,
    pub status: u16,
}

impl Recorded {
    /// All message contents of the request joined, for easy `contains` checks
    /// (Anthropic's `system` and text blocks included).
    pub fn prompt_text(&self) -> String {
        fn push(out: &mut String, content: &Value) {
            match content {
                Value::String(s) => {
                    out.push_str(s);
                    out.push('\n');
                }
                Value::Array(blocks) => {
                    for b in blocks {
                        for key in ["text", "content"] {
                            if let Some(t) = b.get(key) {
                                push(out, t);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let mut out = String::new();
        push(&mut out, &self.body["system"]);
        if let Some(messages) = self.body["messages"].as_array() {
            for m in messages {
                push(&mut out, &m["content"]);
            }
        }
        out
    }
}

struct Rule {
    role: Option<String>,
    contains: Option<String>,
    replies: VecDeque<Reply>,
    /// Keep answering with the last reply once the queue is down to one.
    repeat_last: bool,
}

#[derive(Default)]
struct Script {
    rules: Vec<Rule>,
    recorded: Vec<Recorded>,
    default_delay: Option<Duration>,
    /// Report usage counted from the request and reply (4 characters a token)
    /// instead of the scripted figures.
    count_tokens: bool,
    /// Requests received and not yet answered.
    in_flight: usize,
}

/// Builder returned by [`ScriptedServer::on`]; adds a rule when dropped or on [`RuleBuilder::reply`].
pub struct RuleBuilder<'a> {
    server: &'a ScriptedServer,
    role: Option<String>,
    contains: Option<String>,
}

impl RuleBuilder<'_> {
    /// Only requests whose body (as JSON text) contains `needle` match.
    pub fn containing(mut self, needle: &str) -> Self {
        self.contains = Some(needle.to_string());
        self
    }

    /// Answer the next matching request with `reply`, once.
    pub fn reply(self, reply: Reply) {
        self.replies(vec![reply]);
    }

    /// Answer matching requests with these replies, in order, each once.
    pub fn replies(self, replies: Vec<Reply>) {
        self.push(replies, false);
    }

    /// Answer every matching request with `reply`.
    pub fn always(self, reply: Reply) {
        self.push(vec![reply], true);
    }

    fn push(self, replies: Vec<Reply>, repeat_last: bool) {
        self.server.script.lock().unwrap().rules.push(Rule {
            role: self.role,
            contains: self.contains,
            replies: replies.into(),
            repeat_last,
        });
    }
}

/// A running scripted server. Stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ScriptedServer {
    /// Start a server on a free loopback port.
    pub fn start() -> ScriptedServer {
        let script = Arc::new(Mutex::new(Script::default()));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let state = script.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("test server runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind loopback");
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let app = Router::new()
                    .route("/v1/chat/completions", post(handle))
                    .route("/chat/completions", post(handle))
                    .route("/v1/messages", post(handle_messages))
                    .with_state(state);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = shutdown_rx.await;
                    })
                    .await
                    .expect("serve");
            });
        });
        let addr = addr_rx.recv().expect("test server address");
        ScriptedServer {
            addr,
            script,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        }
    }

    /// The base URL to give planexec (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Script replies for requests from `role` (`planner`, `executor`, `replanner`,
    /// `synthesizer`), or for any role with `None`.
    pub fn on(&self, role: Option<&str>) -> RuleBuilder<'_> {
        RuleBuilder {
            server: self,
            role: role.map(str::to_string),
            contains: None,
        }
    }

    /// Shorthand for `on(Some(role))`.
    pub fn role(&self, role: &str) -> RuleBuilder<'_> {
        self.on(Some(role))
    }

    /// Delay every reply that has no delay of its own (simulated model latency).
    pub fn set_default_delay(&self, delay: Duration) {
        self.script.lock().unwrap().default_delay = Some(delay);
    }

    /// Report each reply's usage as counted from what was sent and received (4
    /// characters a token), so strategies that send more pay more.
    pub fn count_tokens(&self) {
        self.script.lock().unwrap().count_tokens = true;
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().unwrap().recorded.clone()
    }

    /// Requests received from one role.
    pub fn requests_from(&self, role: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.role.as_deref() == Some(role))
            .collect()
    }

    /// Requests received and not yet answered (e.g. waiting out a delay).
    pub fn in_flight(&self) -> usize {
        self.script.lock().unwrap().in_flight
    }

    /// Forget recorded requests (the script stays).
    pub fn clear_requests(&self) {
        self.script.lock().unwrap().recorded.clear();
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

async fn handle(State(script): State<Arc<Mutex<Script>>>, headers: HeaderMap, body: String) -> Response {
    respond(script, headers, body, false).await
}

async fn handle_messages(State(script): State<Arc<Mutex<Script>>>, headers: HeaderMap, body: String) -> Response {
    respond(script, headers, body, true).await
}

/// The Messages API's rules a request must keep, as the real API refuses
/// breaking them: turns alternate starting with the user, every tool result
/// answers a `tool_use` of the turn before, at most 4 cache breakpoints, and
/// `max_tokens` is set.
fn check_messages_request(body: &Value) -> Result<(), String> {
    if body["max_tokens"].as_u64().is_none() {
        return Err("max_tokens: Field required".into());
    }
    let turns = body["messages"].as_array().ok_or("messages: Field required")?;
    let mut previous_uses: Vec<String> = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        let want = if i % 2 == 0 { "user" } else { "assistant" };
        if turn["role"] != want {
            return Err(format!("messages.{i}: roles must alternate, starting with user"));
        }
        let blocks = turn["content"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        for b in blocks {
            if b["type"] == "tool_result" {
                let id = b["tool_use_id"].as_str().unwrap_or("");
                if !previous_uses.iter().any(|u| u == id) {
                    return Err(format!("messages.{i}: tool_result for unknown tool_use_id `{id}`"));
                }
            }
        }
        previous_uses = blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .filter_map(|b| b["id"].as_str().map(str::to_string))
            .collect();
    }
    let marks = body.to_string().matches("\"cache_control\"").count();
    if marks > 4 {
        return Err(format!(
            "a maximum of 4 blocks with cache_control may be provided, found {marks}"
        ));
    }
    Ok(())
}

/// An OpenAI-shaped reply body in Anthropic's Messages shape.
fn to_anthropic(status: u16, body: &Value) -> Value {
    if status >= 400 {
        let kind = match status {
            401 => "authentication_error",
            404 => "not_found_error",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            500..=599 => "api_error",
            _ => "invalid_request_error",
        };
        let message = body.pointer("/error/message").cloned().unwrap_or(json!("error"));
        return json!({"type": "error", "error": {"type": kind, "message": message}});
    }
    let choice = &body["choices"][0];
    let message = &choice["message"];
    let mut content = Vec::new();
    if let Some(text) = message["content"].as_str() {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let input: Value = call["function"]["arguments"]
            .as_str()
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or(json!({}));
        content.push(
            json!({"type": "tool_use", "id": format!("toolu_{}", call["id"].as_str().unwrap_or("x")),
            "name": call["function"]["name"], "input": input}),
        );
    }
    let stop_reason = match choice["finish_reason"].as_str() {
        Some("tool_calls") => "tool_use",
        Some("length") => "max_tokens",
        _ => "end_turn",
    };
    let usage = &body["usage"];
    let mut out_usage = json!({
        "input_tokens": usage["prompt_tokens"].as_u64().unwrap_or(0),
        "output_tokens": usage["completion_tokens"].as_u64().unwrap_or(0),
    });
    for key in ["cache_read_input_tokens", "cache_creation_input_tokens"] {
        if let Some(v) = usage.get(key) {
            out_usage[key] = v.clone();
        }
    }
    json!({"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null, "usage": out_usage})
}

async fn respond(script: Arc<Mutex<Script>>, headers: HeaderMap, body: String, anthropic: bool) -> Response {
    let received_ms = now_ms();
    let started = Instant::now();
    let role = headers
        .get("x-planexec-role")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let authorization = headers
        .get("authorization")
        .or_else(|| headers.get("x-api-key"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);

    let invalid = if anthropic {
        check_messages_request(&parsed).err()
    } else {
        None
    };
    let (mut reply, default_delay, count_tokens) = {
        let mut s = script.lock().unwrap();
        s.in_flight += 1;
        let default_delay = s.default_delay;
        let count_tokens = s.count_tokens;
        let found = s.rules.iter_mut().find(|rule| {
            rule.role.as_ref().is_none_or(|r| Some(r) == role.as_ref())
                && rule.contains.as_ref().is_none_or(|n| body.contains(n))
                && !rule.replies.is_empty()
        });
        let reply = match (invalid, found) {
            (Some(problem), _) => Reply::raw(
                400,
                json!({"type": "error", "error": {"type": "invalid_request_error", "message": problem}}),
            ),
            (None, found) => match found {
                Some(rule) if rule.repeat_last && rule.replies.len() == 1 => rule.replies[0].clone(),
                Some(rule) => rule.replies.pop_front().unwrap(),
                None => Reply::error(
                    418,
                    &format!(
                        "scripted server: no reply scripted for role {:?}",
                        role.as_deref().unwrap_or("(none)")
                    ),
                ),
            },
        };
        (reply, default_delay, count_tokens)
    };
    if count_tokens && reply.status == 200 && !reply.raw {
        let sent = parsed["messages"].to_string().len()
            + parsed["system"].to_string().len()
            + parsed["tools"].to_string().len();
        let message = &reply.body["choices"][0]["message"];
        let written = message["content"].as_str().map_or(0, str::len) + message["tool_calls"].to_string().len();
        reply = reply.with_usage(sent.div_ceil(4) as u64, written.div_ceil(4) as u64);
    }
    let delay = reply.delay.or(default_delay).unwrap_or_default();
    let record = Recorded {
        role,
        authorization,
        body: parsed,
        received_ms,
        replied_ms: 0,
        status: reply.status,
    };
    if record.body["stream"] == json!(true) && reply.status == 200 && !reply.raw {
        return stream_reply(script, record, reply, started, delay, anthropic);
    }

    tokio::time::sleep(delay.saturating_sub(started.elapsed())).await;
    let mut s = script.lock().unwrap();
    s.in_flight -= 1;
    s.recorded.push(Recorded {
        replied_ms: now_ms(),
        ..record
    });
    drop(s);

    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(text) = reply.text {
        let mut response = if reply.cut {
            use futures::StreamExt;
            // The text goes out first; the break comes after, so it cannot overtake it.
            let sent = futures::stream::once(async move { Ok::<String, std::io::Error>(text) });
            let broken = futures::stream::once(async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "cut by the test",
                ))
            });
            (status, axum::body::Body::from_stream(sent.chain(broken))).into_response()
        } else {
            (status, text).into_response()
        };
        add_headers(&mut response, reply.headers);
        return response;
    }
    let body = if anthropic && !reply.raw {
        to_anthropic(reply.status, &reply.body)
    } else {
        reply.body
    };
    let mut response = (status, axum::Json(body)).into_response();
    add_headers(&mut response, reply.headers);
    response
}

/// The scripted headers, over any the response already has.
fn add_headers(response: &mut Response, headers: Vec<(String, String)>) {
    for (k, v) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(k.as_str()), HeaderValue::try_from(v.as_str())) {
            response.headers_mut().insert(name, value);
        }
    }
}

/// A reply sent as server-sent events, as OpenAI (or, on `/v1/messages`,
/// Anthropic) streams it: the content in `reply.chunks` pieces spread evenly
/// over `delay`, then the end of the message with its usage. The request is
/// recorded as answered when the last event has been sent.
fn stream_reply(
    script: Arc<Mutex<Script>>,
    record: Recorded,
    reply: Reply,
    started: Instant,
    delay: Duration,
    anthropic: bool,
) -> Response {
    let frames = if anthropic {
        anthropic_frames(&reply, delay)
    } else {
        openai_frames(&reply, delay)
    };
    let state = (frames.into_iter(), Some(record));
    let body = futures::stream::unfold(state, move |(mut frames, mut record)| {
        let script = script.clone();
        async move {
            let (at, frame) = frames.next()?;
            tokio::time::sleep(at.saturating_sub(started.elapsed())).await;
            if frames.as_slice().is_empty() {
                let mut s = script.lock().unwrap();
                s.in_flight -= 1;
                if let Some(r) = record.take() {
                    s.recorded.push(Recorded {
                        replied_ms: now_ms(),
                        ..r
                    });
                }
            }
            Some((Ok::<_, std::convert::Infallible>(frame), (frames, record)))
        }
    });
    let mut response = axum::body::Body::from_stream(body).into_response();
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("text/event-stream"));
    add_headers(&mut response, reply.headers);
    response
}

/// `text` in `n` pieces of (nearly) equal length.
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(n.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// When the k-th of `n` pieces goes out: spread evenly, the last at `delay`.
fn at(delay: Duration, k: usize, n: usize) -> Duration {
    delay.mul_f64((k + 1) as f64 / n.max(1) as f64)
}

fn openai_frames(reply: &Reply, delay: Duration) -> Vec<(Duration, String)> {
    let choice = &reply.body["choices"][0];
    let content = pieces(choice["message"]["content"].as_str().unwrap_or(""), reply.chunks);
    let n = content.len().max(1);
    let mut frames = Vec::new();
    for k in 0..n {
        let mut delta = json!({"role": "assistant", "content": content.get(k).cloned().unwrap_or_default()});
        if k + 1 == n {
            if let Some(calls) = choice["message"]["tool_calls"].as_array() {
                let calls: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| json!({"index": i, "id": c["id"], "type": "function", "function": c["function"]}))
                    .collect();
                delta["tool_calls"] = Value::Array(calls);
            }
        }
        let event = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
        frames.push((at(delay, k, n), format!("data: {event}\n\n")));
    }
    let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]});
    let usage = json!({"choices": [], "usage": reply.body["usage"]});
    frames.push((delay, format!("data: {end}\n\n")));
    frames.push((delay, format!("data: {usage}\n\n")));
    frames.push((delay, "data: [DONE]\n\n".to_string()));
    frames
}

fn anthropic_frames(reply: &Reply, delay: Duration) -> Vec<(Duration, String)> {
    let message = to_anthropic(200, &reply.body);
    let blocks = message["content"].as_array().cloned().unwrap_or_default();
    let frame = |event: Value| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap_or(""));
    let mut start = message.clone();
    start["content"] = json!([]);
    start["usage"]["output_tokens"] = json!(0);
    let mut frames = vec![(
        Duration::ZERO,
        frame(json!({"type": "message_start", "message": start})),
    )];
    // Each block's text (or tool input as JSON) in pieces; pieces are spread over the delay.
    let per_block = (reply.chunks / blocks.len().max(1)).max(1);
    let mut deltas: Vec<(usize, Value)> = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let (kind, key, whole) = match block["type"].as_str() {
            Some("tool_use") => ("input_json_delta", "partial_json", block["input"].to_string()),
            _ => ("text_delta", "text", block["text"].as_str().unwrap_or("").to_string()),
        };
        for piece in pieces(&whole, per_block) {
            deltas.push((i, json!({"type": kind, key: piece})));
        }
    }
    let n = deltas.len();
    let mut open: Option<usize> = None;
    for (k, (i, delta)) in deltas.into_iter().enumerate() {
        let when = at(delay, k, n);
        if open != Some(i) {
            if let Some(previous) = open {
                frames.push((when, frame(json!({"type": "content_block_stop", "index": previous}))));
            }
            let mut empty = blocks[i].clone();
            match empty["type"].as_str() {
                Some("tool_use") => empty["input"] = json!({}),
                _ => empty["text"] = json!(""),
            }
            frames.push((
                when,
                frame(json!({"type": "content_block_start", "index": i, "content_block": empty})),
            ));
            open = Some(i);
        }
        frames.push((
            when,
            frame(json!({"type": "content_block_delta", "index": i, "delta": delta})),
        ));
    }
    if let Some(last) = open {
        frames.push((delay, frame(json!({"type": "content_block_stop", "index": last}))));
    }
    frames.push((
        delay,
        frame(
            json!({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
            "usage": {"output_tokens": message["usage"]["output_tokens"]}}),
        ),
    ));
    frames.push((delay, frame(json!({"type": "message_stop"}))));
    frames
}
