//! The run's answers to what a tool asks while it runs (an MCP server's
//! sampling or elicitation request), for one step's call:
//!
//! - a model call goes through the run's model port with the executor's
//!   model, so it is budgeted, metered, told as an event and written to the
//!   ledger under role `sampling`, with the step that asked. Refused in plan
//!   mode unless `sampling_in_plan_mode` allows it: a read-only run should
//!   not spend tokens on a server's behalf without being told it may.
//! - a question goes to the run's approver (the person at the terminal, for
//!   the CLI), and the answer is recorded in the ledger as a decision; when
//!   nobody can answer now (`--approve later`, `serve`), the run waits in the
//!   ledger for one and the step runs again once it is given.

use async_trait::async_trait;

use crate::context::RunContext;
use crate::llm::{ChatRequest, Message, Role};
use crate::plan::Step;
use crate::policy::Mode;
use crate::report::Waiting;
use crate::store::{Action, Decision};
use crate::tools::asking::{Asker, Elicited, Question, Sampled, SamplingRequest, Speaker};

/// Answers what one step's tool call asks.
pub(super) struct RunAsker<'a> {
    ctx: &'a RunContext,
    step: &'a Step,
    /// The plan version the step runs under.
    version: u32,
}

impl<'a> RunAsker<'a> {
    pub fn new(ctx: &'a RunContext, step: &'a Step, version: u32) -> RunAsker<'a> {
        RunAsker { ctx, step, version }
    }
}

#[async_trait]
impl Asker for RunAsker<'_> {
    async fn sample(&self, request: SamplingRequest) -> Result<Sampled, String> {
        let options = &self.ctx.setting.options;
        if options.mode == Mode::Plan && !options.sampling_in_plan_mode {
            return Err("an MCP server's sampling request is refused in plan mode (sampling_in_plan_mode = true in planexec.toml allows it)".to_string());
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
        chat.step_id = Some(self.step.id.clone());
        chat.max_tokens = Some(request.max_tokens.max(1));
        if request.temperature.is_some() {
            chat.temperature = request.temperature;
        }
        let calls = &self.ctx.calls;
        let response = calls.chat(chat).await.map_err(|e| e.to_string())?;
        Ok(Sampled {
            text: response.content.unwrap_or_default(),
            model: calls.models.get(Role::Sampling).model.clone(),
        })
    }

    async fn elicit(&self, question: Question) -> Elicited {
        let control = &self.ctx.control;
        if let Some(answer) = control.inbox.answer(&self.step.id, &question.message) {
            return Elicited::Answer(answer); // given while the run waited: recorded then
        }
        if control.approver.decides_later() {
            let waiting = Waiting::Answer {
                plan_version: self.version,
                step_id: self.step.id.clone(),
                question: question.message.clone(),
                schema: question.schema.clone(),
            };
            let why = waiting.describe();
            control.inbox.pause(waiting);
            return Elicited::Waits(why);
        }
        let answer = control.approver.elicit(self.step, &question).await;
        let action = Action::Answer {
            step: self.step.id.clone(),
            question: question.message,
            answer: answer.clone(),
        };
        self.ctx
            .recording
            .ledger
            .decision(&Decision::new("approver", action))
            .await;
        answer.map_or(Elicited::Declined, Elicited::Answer)
    }
}
