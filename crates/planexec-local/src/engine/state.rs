//! What the engine's worker thread holds between jobs: the model, which tokens
//! each KV-cache sequence holds, the prefix store and the counters; with the
//! types its methods take and give (`Placement`, `Admission`). The methods
//! live beside what they do: admitting and stepping replies in `engine`,
//! placing a prompt in the cache in `prompt`.

use std::sync::{Arc, Mutex};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;

use super::job::{EngineStats, Job};
use super::slot::Slot;
use crate::forced::ForcedText;
use crate::prefix_store::PrefixStore;

pub(super) struct State<'m> {
    pub(super) model: &'m LlamaModel,
    pub(super) template: LlamaChatTemplate,
    /// For each sequence, the tokens whose keys and values it holds, in order.
    pub(super) cached: Vec<Vec<LlamaToken>>,
    /// For each sequence, how many of its first tokens were evaluated in
    /// whole cells of the [`GRID`] (or loaded as such): only these are
    /// reused, so a reuse gives the numbers a fresh evaluation would.
    pub(super) exact: Vec<usize>,
    pub(super) prefix_reuse: bool,
    pub(super) prefix_store: Option<PrefixStore>,
    pub(super) forced: ForcedText,
    /// Why the KV cache was lost, if a decode failed: every reply in flight fails.
    pub(super) lost: Option<String>,
    pub(super) stats: Arc<Mutex<EngineStats>>,
}

impl State<'_> {
    /// Decode a batch; on failure forget the KV cache, whose contents are then unknown.
    pub(super) fn decode(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        doing: &str,
    ) -> Result<(), String> {
        ctx.decode(batch).map_err(|e| {
            self.cached.iter_mut().for_each(Vec::clear);
            self.exact.iter_mut().for_each(|n| *n = 0);
            ctx.clear_kv_cache();
            let why = format!("{doing} failed: {e}");
            self.lost = Some(why.clone());
            why
        })
    }
}

/// What became of a job offered a sequence.
pub(super) enum Admission {
    /// Its prompt is in the cache and its first tokens are chosen.
    Started(Slot),
    /// Answered already (an error, or a reply whole after its first token).
    Answered,
    /// No room beside the replies in flight: offered again when one ends.
    Wait(Job),
}

/// Where a prompt goes in the KV cache, beside the replies in flight.
pub(super) struct Placement<'a> {
    /// The free sequence it goes into.
    pub seq: i32,
    /// The sequences of the replies in flight: left as they are.
    pub busy: &'a [i32],
    /// The context has room for the prompt and its reply only with the cells
    /// a reply in flight lends it: no saved state may replace them.
    pub needs_lent: bool,
}
