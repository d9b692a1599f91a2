//! What reaches a running run from people while it goes: steering messages for
//! the replanner, a cancel, calls approved while the run was paused, and the
//! run's own decision to pause for approval. The ledger's heartbeat
//! (`run/owner.rs`) fills it; the DAG loop and the executor read it.
//!
//! Either a steering message or a pause *holds* the current pass: steps that
//! are running finish, no new step starts, and the loop reaches its next
//! decision point.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::store::Waiting;

#[derive(Default)]
pub(crate) struct Inbox {
    steers: Mutex<VecDeque<(u64, String)>>,
    pause: Mutex<Option<Waiting>>,
    /// Every step that paused in this pass, whichever pause was kept: each
    /// runs again on resume (and asks again), none has failed.
    paused: Mutex<Vec<String>>,
    cancelled_by: Mutex<Option<String>>,
    approved: Mutex<Vec<(String, Value)>>,
    /// Answers to tools' questions given while the run waited: (step, question, answer).
    answers: Mutex<Vec<(String, String, Value)>>,
    /// Fired to hold the pass in progress; a new one per pass.
    hold: Mutex<CancelToken>,
}

impl Inbox {
    /// A steering message (decision `seq`) for the next decision point.
    pub fn steer(&self, seq: u64, message: String) {
        let mut steers = self.steers.lock().unwrap();
        if !steers.iter().any(|(s, _)| *s == seq) {
            steers.push_back((seq, message));
        }
        self.hold.lock().unwrap().cancel();
    }

    /// The oldest steering message not applied yet.
    pub fn next_steer(&self) -> Option<(u64, String)> {
        self.steers.lock().unwrap().pop_front()
    }

    pub fn has_steer(&self) -> bool {
        !self.steers.lock().unwrap().is_empty()
    }

    /// The run must wait for `waiting`. A call's confirmation joins the other
    /// calls of the pass that wait for theirs, and holds nothing: the steps
    /// that need no decision go on, so a wave's decisions are all asked at
    /// once. Any other pause holds the pass, and the first of those wins.
    pub fn pause(&self, waiting: Waiting) {
        if let Some(step) = waiting.step_id() {
            self.paused.lock().unwrap().push(step.to_string());
        }
        let mut pause = self.pause.lock().unwrap();
        let call = waiting.calls().into_iter().next();
        let (kept, holds) = match (pause.take(), call) {
            (None, call) => (waiting, call.is_none()),
            (Some(held @ Waiting::Step { .. }), Some(call)) => (held.with_call(call), false),
            (Some(first), _) => (first, true),
        };
        *pause = Some(kept);
        drop(pause);
        if holds {
            self.hold.lock().unwrap().cancel();
        }
    }

    pub fn take_pause(&self) -> Option<Waiting> {
        self.paused.lock().unwrap().clear();
        self.pause.lock().unwrap().take()
    }

    /// Whether step `step_id` paused in this pass (for a confirmation or an answer).
    pub fn is_paused_at(&self, step_id: &str) -> bool {
        self.paused.lock().unwrap().iter().any(|s| s == step_id)
    }

    pub fn cancelled(&self, by: &str) {
        self.cancelled_by.lock().unwrap().get_or_insert_with(|| by.to_string());
    }

    /// Who cancelled the run from the ledger, if someone did.
    pub fn cancelled_by(&self) -> Option<String> {
        self.cancelled_by.lock().unwrap().clone()
    }

    pub fn give_answers(&self, answers: Vec<(String, String, Value)>) {
        self.answers.lock().unwrap().extend(answers);
    }

    /// The answer a person gave, while the run waited, to `question` of step `step_id`.
    pub fn answer(&self, step_id: &str, question: &str) -> Option<Value> {
        let answers = self.answers.lock().unwrap();
        answers
            .iter()
            .find(|(s, q, _)| s == step_id && q == question)
            .map(|(_, _, a)| a.clone())
    }

    pub fn approve_calls(&self, calls: Vec<(String, Value)>) {
        self.approved.lock().unwrap().extend(calls);
    }

    /// Whether a person approved this call of step `step_id` while the run waited.
    pub fn is_approved(&self, step_id: &str, args: &Value) -> bool {
        let approved = self.approved.lock().unwrap();
        approved.iter().any(|(s, a)| s == step_id && a == args)
    }

    /// A fresh hold for the pass about to start (fired at once if a steer is already waiting).
    pub fn new_hold(&self) -> CancelToken {
        let token = CancelToken::new();
        if self.has_steer() {
            token.cancel();
        }
        *self.hold.lock().unwrap() = token.clone();
        token
    }
}
