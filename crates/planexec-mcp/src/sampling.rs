//! A server's `sampling/createMessage`, answered by the run: while a step's
//! call of one of the server's tools runs, that call's [`Sampler`] (the
//! run's executor model, metered and recorded as role `sampling`) is
//! reachable here; a request that comes when no call is running, or that
//! the run refuses (plan mode), gets an error the server can show.
//!
//! With several calls of one server running at once, a request is answered
//! for the one that started first: MCP does not say which call asked.
//!
//! Sampling is deprecated by the protocol's newest revision (SEP-2577), but
//! servers of the current one (server-everything among them) still send it.
#![allow(deprecated)]

use std::sync::Mutex;

use planexec::tools::sampling::{Sampled, Sampler, SamplingRequest, Speaker};
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::ErrorData;
use tokio::sync::{mpsc, oneshot};

/// A request on its way to a running call, with where its answer goes.
type Asked = (SamplingRequest, oneshot::Sender<Result<Sampled, String>>);

/// The running calls of one server that can answer sampling requests.
#[derive(Default)]
pub(crate) struct Samplers {
    open: Mutex<Vec<(u64, mpsc::UnboundedSender<Asked>)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Samplers {
    /// Run `call` while answering, with `sampler`, the requests that come for it.
    pub async fn during<T>(&self, sampler: &dyn Sampler, call: impl std::future::Future<Output = T>) -> T {
        let (tx, mut rx) = mpsc::unbounded_channel::<Asked>();
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.open.lock().unwrap_or_else(|e| e.into_inner()).push((id, tx));
        tokio::pin!(call);
        let out = loop {
            tokio::select! {
                out = &mut call => break out,
                Some((request, reply)) = rx.recv() => {
                    let _ = reply.send(sampler.sample(request).await);
                }
            }
        };
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(i, _)| *i != id);
        out
    }

    /// Answer a server's request through the earliest running call.
    pub async fn answer(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorData> {
        let target = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .map(|(_, tx)| tx.clone());
        let Some(target) = target else {
            return Err(ErrorData::invalid_request(
                "planexec answers sampling requests only while a plan step is calling one of this server's tools",
                None,
            ));
        };
        let (reply, answer) = oneshot::channel();
        target
            .send((request_of(params), reply))
            .map_err(|_| ErrorData::internal_error("the call that could answer has ended", None))?;
        let sampled = answer
            .await
            .map_err(|_| ErrorData::internal_error("the call that could answer has ended", None))?
            .map_err(|why| ErrorData::invalid_request(why, None))?;
        let mut result = CreateMessageResult::new(SamplingMessage::assistant_text(sampled.text), sampled.model);
        result.stop_reason = Some("endTurn".to_string());
        Ok(result)
    }
}

/// The protocol's request as the run's sampler takes it: text parts only
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
