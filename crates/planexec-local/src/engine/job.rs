//! What the engine is asked and answers: a [`Job`] in, a [`Generation`] out,
//! with the [`EngineStats`] benchmarks read and the `PromptCache` account of
//! how much of one prompt the caches gave.

use tokio::sync::oneshot;

/// Counters for benchmarks and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    pub calls: u64,
    /// Tokens of all prompts, as sent.
    pub prompt_tokens: u64,
    /// Prompt tokens actually evaluated (the rest came from the KV cache).
    pub evaluated_prompt_tokens: u64,
    pub generated_tokens: u64,
    /// Of `generated_tokens`, those the grammar forced: fed to the model in
    /// batches instead of sampled one decode at a time.
    pub forced_tokens: u64,
    pub prompt_ms: u64,
    pub generate_ms: u64,
    pub load_ms: u64,
    /// System messages whose evaluated state was loaded from disk.
    pub prefix_loads: u64,
    /// System messages evaluated and saved to disk (after a broken state too).
    pub prefix_saves: u64,
    /// Saved states found corrupted or stale, deleted and evaluated again.
    pub prefix_rebuilds: u64,
    /// Decodes that carried tokens of more than one request.
    pub shared_decodes: u64,
    /// Most requests in flight at once.
    pub most_in_flight: u64,
    /// Decodes of one token of one reply, and their time in microseconds.
    pub lone_decodes: u64,
    pub lone_decode_us: u64,
    /// Decodes of one token of each of two replies, and their time: beside
    /// the lone ones, what decoding two replies together costs on this machine.
    pub pair_decodes: u64,
    pub pair_decode_us: u64,
}

/// One generation request.
pub struct Job {
    /// (role, content) pairs; roles are `system`, `user`, `assistant`.
    pub messages: Vec<(String, String)>,
    pub grammar: Option<String>,
    /// Most tokens to generate; 0 only brings the prompt into the KV cache
    /// (saving its system message's state), for [`LocalModel::prepare`](crate::LocalModel).
    pub max_tokens: u32,
    /// How the next token is picked: greedy when `None` (repeatable), else
    /// sampled from the grammar-allowed top tokens at this temperature.
    pub sampling: Option<Sampling>,
    /// Receives the text as it is generated (whole UTF-8 characters), when set.
    pub stream: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    pub reply: oneshot::Sender<Result<Generation, String>>,
}

/// Temperature sampling, seeded so that a run can be repeated.
#[derive(Debug, Clone, Copy)]
pub struct Sampling {
    pub temperature: f32,
    pub seed: u64,
}

#[derive(Debug, Clone)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: u64,
    /// Of `prompt_tokens`, those whose state came from the KV cache or a
    /// saved prefix instead of being evaluated.
    pub cached_tokens: u64,
    /// Of `prompt_tokens`, those evaluated and saved as a prefix state.
    pub saved_tokens: u64,
    pub completion_tokens: u64,
    /// The reply was stopped before its end because it ended in a loop.
    pub looped: bool,
}

/// How much of a prompt the caches gave (`read`) and took (`written`), in tokens.
#[derive(Default)]
pub(crate) struct PromptCache {
    pub(crate) read: usize,
    pub(crate) written: usize,
    /// The sequence of a reply in flight that lent the prompt its first
    /// cells, and how many: they are in the cache once, for both.
    pub(crate) lent_by: Option<(i32, usize)>,
}
