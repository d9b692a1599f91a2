//! What the engine's worker thread holds between jobs: the model, which tokens
//! each KV-cache sequence holds, the prefix store and the counters. Its
//! methods live beside what they do: admitting and stepping replies in
//! `engine`, placing a prompt in the cache in `prompt`.

use std::sync::{Arc, Mutex};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;

use super::job::EngineStats;
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
