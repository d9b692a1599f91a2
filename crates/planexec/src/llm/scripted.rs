//! A scripted model: a [`ChatModel`] that answers from a script instead of a
//! model, in process, with no network. For tests of programs built on
//! planexec (and planexec's own): script replies per role, optionally for
//! requests whose text contains a needle, then read back every request.
//!
//! Token usage is counted from what is sent and received (about four
//! characters a token), so budgets and reports behave as with a real model.
//! A streamed call hands its reply over in pieces, yielding to the runtime
//! between them, so steps dispatched from a streamed plan interleave with it
//! the same way on every run.
//!
//! ```
//! use planexec::llm::scripted::{ScriptedModel, ScriptedReply};
//! use planexec::Role;
//!
//! let model = ScriptedModel::new();
//! model.reply(Role::Planner, ScriptedReply::json(&serde_json::json!({"goal": "g", "steps": []})));
//! model.always(Role::Synthesizer, ScriptedReply::text("done"));
//! ```

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::Value;

use super::{ChatModel, ChatRequest, ChatResponse, LlmError, Role, TextSink, TokenUsage, ToolCall};

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct ScriptedReply {
    outcome: Result<ChatResponse, LlmError>,
    /// Pieces a streamed call hands the text over in.
    pieces: usize,
}

impl ScriptedReply {
    /// A reply whose text is `text`.
    pub fn text(text: impl Into<String>) -> ScriptedReply {
        ScriptedReply {
            outcome: Ok(ChatResponse {
                content: Some(text.into()),
                finish_reason: Some("stop".to_string()),
                ..ChatResponse::default()
            }),
            pieces: 1,
        }
    }

    /// A reply whose text is `value` as JSON.
    pub fn json(value: &Value) -> ScriptedReply {
        ScriptedReply::text(value.to_string())
    }

    /// A reply with one native tool call.
    pub fn tool_call(name: &str, arguments: &Value) -> ScriptedReply {
        ScriptedReply {
            outcome: Ok(ChatResponse {
                content: None,
                tool_calls: vec![ToolCall {
                    id: format!("call_{name}"),
                    name: name.to_string(),
                    arguments: arguments.clone(),
                }],
                finish_reason: Some("tool_calls".to_string()),
                ..ChatResponse::default()
            }),
            pieces: 1,
        }
    }

    /// A failed call.
    pub fn error(error: LlmError) -> ScriptedReply {
        ScriptedReply {
            outcome: Err(error),
            pieces: 1,
        }
    }

    /// When the call streams, hand the text over in `pieces` pieces.
    pub fn streamed(mut self, pieces: usize) -> ScriptedReply {
        self.pieces = pieces.max(1);
        self
    }
}

struct Rule {
    role: Role,
    contains: Option<String>,
    replies: VecDeque<ScriptedReply>,
    /// Keep answering with the last reply.
    repeat_last: bool,
}

/// A model that answers from a script. Rules are tried in the order they were
/// added; the first whose role matches (and whose needle the request's text
/// contains) and that has a reply left answers.
#[derive(Default)]
pub struct ScriptedModel {
    rules: Mutex<Vec<Rule>>,
    requests: Mutex<Vec<ChatRequest>>,
    plan_help: std::sync::atomic::AtomicBool,
}

impl ScriptedModel {
    pub fn new() -> ScriptedModel {
        ScriptedModel::default()
    }

    /// Whether it asks for the small-model help, as the embedded model does
    /// ([`ChatModel::wants_plan_help`]; no by default, as a hosted model).
    pub fn set_plan_help(&self, on: bool) {
        self.plan_help.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn push(&self, role: Role, contains: Option<&str>, replies: Vec<ScriptedReply>, repeat_last: bool) {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).push(Rule {
            role,
            contains: contains.map(str::to_string),
            replies: replies.into(),
            repeat_last,
        });
    }

    /// Answer the next request from `role` with `reply`, once.
    pub fn reply(&self, role: Role, reply: ScriptedReply) {
        self.push(role, None, vec![reply], false);
    }

    /// Answer requests from `role` with these replies, in order, each once.
    pub fn replies(&self, role: Role, replies: Vec<ScriptedReply>) {
        self.push(role, None, replies, false);
    }

    /// Answer every request from `role` with `reply`.
    pub fn always(&self, role: Role, reply: ScriptedReply) {
        self.push(role, None, vec![reply], true);
    }

    /// Answer requests from `role` whose text contains `needle` with these replies, in order.
    pub fn replies_containing(&self, role: Role, needle: &str, replies: Vec<ScriptedReply>) {
        self.push(role, Some(needle), replies, false);
    }

    /// Answer every request from `role` whose text contains `needle` with `reply`.
    pub fn always_containing(&self, role: Role, needle: &str, reply: ScriptedReply) {
        self.push(role, Some(needle), vec![reply], true);
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The requests made for `role`, in order.
    pub fn requests_from(&self, role: Role) -> Vec<ChatRequest> {
        self.requests().into_iter().filter(|r| r.role == role).collect()
    }

    fn next_reply(&self, request: &ChatRequest) -> Result<ScriptedReply, LlmError> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(request.clone());
        let text = serde_json::to_string(request).unwrap_or_default();
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        let rule = rules.iter_mut().find(|r| {
            r.role == request.role
                && !r.replies.is_empty()
                && r.contains.as_deref().is_none_or(|needle| text.contains(needle))
        });
        let Some(rule) = rule else {
            return Err(LlmError::BadRequest(format!(
                "the scripted model has no reply left for this {} request",
                request.role
            )));
        };
        let reply = match (rule.repeat_last, rule.replies.len()) {
            (true, 1) => rule.replies[0].clone(),
            _ => rule.replies.pop_front().expect("a rule with replies left"),
        };
        Ok(reply)
    }
}

/// About four characters a token, of the request as sent and of the reply.
fn counted(request: &ChatRequest, response: &ChatResponse) -> TokenUsage {
    let sent = serde_json::to_string(&request.messages).map_or(0, |s| s.len())
        + serde_json::to_string(&request.tools).map_or(0, |s| s.len())
        + request
            .response_format
            .as_ref()
            .map_or(0, |f| f.schema.to_string().len());
    let received = response.content.as_deref().map_or(0, str::len)
        + serde_json::to_string(&response.tool_calls).map_or(0, |s| s.len());
    TokenUsage {
        prompt_tokens: (sent / 4) as u64,
        completion_tokens: (received / 4).max(1) as u64,
        ..TokenUsage::default()
    }
}

/// `text` in `n` pieces of about equal length, cut at character boundaries.
fn pieces(text: &str, n: usize) -> Vec<&str> {
    let chars: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let count = chars.len() - 1;
    let n = n.clamp(1, count.max(1));
    (0..n)
        .map(|k| &text[chars[k * count / n]..chars[(k + 1) * count / n]])
        .collect()
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn describe(&self) -> String {
        "scripted model".to_string()
    }

    fn provider_name(&self) -> &str {
        "scripted"
    }

    fn wants_plan_help(&self) -> bool {
        self.plan_help.load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let reply = self.next_reply(&request)?;
        let mut response = reply.outcome?;
        response.usage = counted(&request, &response);
        Ok(response)
    }

    async fn chat_stream(&self, request: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        let reply = self.next_reply(&request)?;
        let mut response = reply.outcome?;
        if let Some(text) = &response.content {
            for piece in pieces(text, reply.pieces) {
                on_text(piece);
                tokio::task::yield_now().await;
            }
        }
        response.usage = counted(&request, &response);
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn request(role: Role, text: &str) -> ChatRequest {
        ChatRequest::new(role, "m", vec![Message::user(text)])
    }

    #[tokio::test]
    async fn rules_answer_in_order_and_say_when_nothing_is_left() {
        let model = ScriptedModel::new();
        model.replies_containing(
            Role::Planner,
            "special",
            vec![ScriptedReply::text("for the special one")],
        );
        model.replies(
            Role::Planner,
            vec![ScriptedReply::text("one"), ScriptedReply::text("two")],
        );
        model.always(Role::Synthesizer, ScriptedReply::text("again"));
        let say = |r: Result<ChatResponse, LlmError>| r.map(|r| r.content.unwrap_or_default());
        assert_eq!(say(model.chat(request(Role::Planner, "plain")).await).unwrap(), "one");
        assert_eq!(
            say(model.chat(request(Role::Planner, "a special task")).await).unwrap(),
            "for the special one"
        );
        assert_eq!(say(model.chat(request(Role::Planner, "x")).await).unwrap(), "two");
        let err = model.chat(request(Role::Planner, "x")).await.unwrap_err();
        assert!(
            err.to_string().contains("no reply left for this planner request"),
            "{err}"
        );
        for _ in 0..3 {
            assert_eq!(say(model.chat(request(Role::Synthesizer, "x")).await).unwrap(), "again");
        }
        assert_eq!(model.requests_from(Role::Planner).len(), 4);
        let usage = model.chat(request(Role::Synthesizer, "x")).await.unwrap().usage;
        assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    }

    #[tokio::test]
    async fn a_streamed_reply_comes_in_pieces_that_add_up_to_it() {
        let model = ScriptedModel::new();
        model.reply(Role::Planner, ScriptedReply::text("héllo wörld, streamed").streamed(5));
        let seen = Mutex::new(Vec::new());
        let sink = |piece: &str| seen.lock().unwrap().push(piece.to_string());
        let response = model.chat_stream(request(Role::Planner, "x"), &sink).await.unwrap();
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 5);
        assert_eq!(seen.concat(), "héllo wörld, streamed");
        assert_eq!(response.content.as_deref(), Some("héllo wörld, streamed"));
        assert_eq!(pieces("ab", 5), ["a", "b"]);
        assert_eq!(pieces("", 3), [""]);
    }
}
