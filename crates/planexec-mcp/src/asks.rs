//! What a server asks its client while one of its tools runs, answered by
//! the run: `sampling/createMessage` by the run's executor model (metered and
//! recorded as role `sampling`), `elicitation/create` by the run's approver
//! (the person at the terminal, for the CLI) and recorded as a decision.
//! While a step's call of one of the server's tools runs, that call's
//! [`Asker`] is reachable here; a request that comes when no call is running,
//! or that the run refuses (sampling in plan mode), gets an error or a
//! decline the server can show.
//!
//! With several calls of one server running at once, a request is answered
//! for the one that started first: MCP does not say which call asked.
//!
//! Sampling is deprecated by the protocol's newest revision (SEP-2577), but
//! servers of the current one (server-everything among them) still send it.
#![allow(deprecated)]

use std::sync::Mutex;

use planexec::tools::asking::{Asker, Elicited, Question, Sampled, SamplingRequest, Speaker};
use planexec::ToolError;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Role,
    SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::ErrorData;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A request on its way to a running call, with where its answer goes.
enum Asked {
    Sample(SamplingRequest, oneshot::Sender<Result<Sampled, String>>),
    Elicit(Question, oneshot::Sender<Elicited>),
}

/// The running calls of one server that can answer its requests.
#[derive(Default)]
pub(crate) struct Askers {
    open: Mutex<Vec<(u64, mpsc::UnboundedSender<Asked>)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Askers {
    /// Run `call` while answering, with `asker`, the requests that come for
    /// it. A question the run cannot answer now stops the call: the step
    /// fails as waiting, and the run pauses for the answer.
    pub async fn during(
        &self,
        asker: &dyn Asker,
        call: impl std::future::Future<Output = Result<Value, ToolError>>,
    ) -> Result<Value, ToolError> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Asked>();
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.open.lock().unwrap_or_else(|e| e.into_inner()).push((id, tx));
        tokio::pin!(call);
        let out = loop {
            tokio::select! {
                out = &mut call => break out,
                Some(asked) = rx.recv() => match asked {
                    Asked::Sample(request, reply) => { let _ = reply.send(asker.sample(request).await); }
                    Asked::Elicit(question, reply) => {
                        let elicited = asker.elicit(question).await;
                        let _ = reply.send(elicited.clone());
                        if let Elicited::Waits(why) = elicited {
                            break Err(ToolError::denied(format!("not done yet: the run waits for {why}")));
                        }
                    }
                },
            }
        };
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(i, _)| *i != id);
        out
    }

    /// The earliest running call, or why there is none.
    fn target(&self) -> Result<mpsc::UnboundedSender<Asked>, ErrorData> {
        let first = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .map(|(_, tx)| tx.clone());
        first.ok_or_else(|| {
            ErrorData::invalid_request(
                "planexec answers a server's requests only while a plan step is calling one of its tools",
                None,
            )
        })
    }

    /// Answer a server's sampling request through the earliest running call.
    pub async fn sample(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorData> {
        let (reply, answer) = oneshot::channel();
        let gone = || ErrorData::internal_error("the call that could answer has ended", None);
        self.target()?
            .send(Asked::Sample(request_of(params), reply))
            .map_err(|_| gone())?;
        let sampled = answer
            .await
            .map_err(|_| gone())?
            .map_err(|why| ErrorData::invalid_request(why, None))?;
        let mut result = CreateMessageResult::new(SamplingMessage::assistant_text(sampled.text), sampled.model);
        result.stop_reason = Some("endTurn".to_string());
        Ok(result)
    }

    /// Answer a server's form elicitation through the earliest running call
    /// (a URL elicitation, or no call running, is declined).
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = params
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let Ok(target) = self.target() else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let question = Question {
            message,
            schema: serde_json::to_value(requested_schema).unwrap_or(Value::Null),
        };
        let (reply, answer) = oneshot::channel();
        if target.send(Asked::Elicit(question, reply)).is_err() {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        Ok(match answer.await {
            Ok(Elicited::Answer(content)) => {
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = Some(content);
                result
            }
            // The run waits for a person: this call is being stopped.
            Ok(Elicited::Waits(_)) => ElicitResult::new(ElicitationAction::Cancel),
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// The protocol's request as the run's asker takes it: text parts only
/// (images, audio and tool blocks are described, not sent).
fn request_of(params: CreateMessageRequestParams) -> SamplingRequest {
    let messages = params
        .messages
        .into_iter()
        .map(|m| {
            let speaker = match m.role {
                Role::Assistant => Speaker::Assistant,
                _ => Speaker::User,
            };
            let text: Vec<String> = m
                .content
                .into_vec()
                .into_iter()
                .map(|block| match block {
                    SamplingMessageContentBlock::Text(t) => t.text,
                    _ => "[a part planexec does not send to the model: not text]".to_string(),
                })
                .collect();
            (speaker, text.join("\n"))
        })
        .collect();
    SamplingRequest {
        system: params.system_prompt,
        messages,
        max_tokens: params.max_tokens,
        temperature: params.temperature,
    }
}
