//! The run's answer to a tool's model calls (an MCP server's sampling
//! request): the executor's model, through the run's model port, so the
//! call is budgeted, metered, told as an event and written to the ledger
//! under role `sampling`, with the step that asked. Refused in plan mode
//! unless `sampling_in_plan_mode` allows it: a read-only run should not
//! spend tokens on a server's behalf without being told it may.

use async_trait::async_trait;

use crate::context::{ModelCalls, Setting};
use crate::llm::{ChatRequest, Message, Role};
use crate::plan::Step;
use crate::policy::Mode;
use crate::tools::sampling::{Sampled, Sampler, SamplingRequest, Speaker};

/// Answers the sampling requests of one step's tool call.
pub(super) struct RunSampler<'a> {
    calls: &'a ModelCalls,
    step: &'a str,
    refused: Option<&'static str>,
}

impl<'a> RunSampler<'a> {
    pub fn new(calls: &'a ModelCalls, setting: &Setting, step: &'a Step) -> RunSampler<'a> {
        let options = &setting.options;
        let refused = (options.mode == Mode::Plan && !options.sampling_in_plan_mode).then_some(
            "an MCP server's sampling request is refused in plan mode (sampling_in_plan_mode = true in planexec.toml allows it)",
        );
        RunSampler {
            calls,
            step: &step.id,
            refused,
        }
    }
}

#[async_trait]
impl Sampler for RunSampler<'_> {
    async fn sample(&self, request: SamplingRequest) -> Result<Sampled, String> {
        if let Some(why) = self.refused {
            return Err(why.to_string());
        }
        let mut messages: Vec<Message> = request.system.into_iter().map(Message::system).collect();
        for (speaker, text) in request.messages {
            messages.push(match speaker {
                Speaker::User => Message::user(text),
                Speaker::Assistant => Message::Assistant {
                    content: Some(text),
                    tool_calls: Vec::new(),
                },
            });
        }
        let mut chat = ChatRequest::new(Role::Sampling, "", messages);
        chat.step_id = Some(self.step.to_string());
        chat.max_tokens = Some(request.max_tokens.max(1));
        if request.temperature.is_some() {
            chat.temperature = request.temperature;
        }
        let response = self.calls.chat(chat).await.map_err(|e| e.to_string())?;
        Ok(Sampled {
            text: response.content.unwrap_or_default(),
            model: self.calls.models.get(Role::Sampling).model.clone(),
        })
    }
}
