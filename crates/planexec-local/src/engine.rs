//! The inference engine: one llama.cpp model and context on a worker thread.
//!
//! Requests arrive on a queue, so one model instance serves concurrent steps
//! safely. The context keeps the tokens of the previous prompt in its KV cache;
//! a new prompt evaluates only what follows the longest common prefix. Every
//! role's prompt starts with the same system prompt and tool list, so that
//! prefix is computed once per run instead of once per call, and its state is
//! saved on disk so the next process loads it ([`PrefixStore`]). Decoding is greedy
//! (optionally grammar-constrained), so runs are repeatable; text the grammar
//! forces is fed in batches instead of sampled token by token ([`ForcedText`]).

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::oneshot;

use crate::forced::{self, ForcedText};
use crate::prefix_store::{Lookup, PrefixStore};

/// Settings of the engine.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub model_path: PathBuf,
    /// Context size in tokens.
    pub n_ctx: u32,
    /// CPU threads (default: all cores).
    pub threads: i32,
    /// Reuse the KV cache for a prompt's common prefix with the previous one.
    pub prefix_reuse: bool,
    /// Where evaluated system messages are kept between processes
    /// ([`PrefixStore`]); `None` evaluates them in every process.
    pub prefix_states: Option<PathBuf>,
}

impl EngineConfig {
    pub fn new(model_path: impl Into<PathBuf>) -> EngineConfig {
        EngineConfig {
            model_path: model_path.into(),
            n_ctx: 8192,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get() as i32),
            prefix_reuse: true,
            prefix_states: Some(crate::weights::model_dir().join("prefix-states")),
        }
    }
}

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
}

/// One generation request.
pub struct Job {
    /// (role, content) pairs; roles are `system`, `user`, `assistant`.
    pub messages: Vec<(String, String)>,
    pub grammar: Option<String>,
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

/// Tokens a sampled choice is drawn from (the most likely ones the grammar allows).
const TOP_K: usize = 40;

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
}

/// How many tokens a prompt must share with an earlier one beyond its
/// system message before that shared prefix gets a saved state of its own:
/// loading a state (tens of MB, checksummed) must cost less than evaluating it.
const MIN_SHARED: usize = 48;

/// How much of a prompt the caches gave (`read`) and took (`written`), in tokens.
struct PromptCache {
    read: usize,
    written: usize,
}

/// llama.cpp's backend may be initialised once per process.
fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default().with_logs_enabled(false));
            LlamaBackend::init().map_err(|e| format!("cannot start llama.cpp: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A handle to the worker thread. Dropping the last handle stops the thread.
pub struct Engine {
    jobs: Mutex<mpsc::Sender<Job>>,
    stats: Arc<Mutex<EngineStats>>,
    pub config: EngineConfig,
}

impl Engine {
    /// Load the model and start the worker; returns once the model is loaded.
    pub fn start(config: EngineConfig) -> Result<Engine, String> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let stats = Arc::new(Mutex::new(EngineStats::default()));
        let worker_stats = stats.clone();
        let worker_config = config.clone();
        std::thread::Builder::new()
            .name("planexec-llama".into())
            .spawn(move || worker(worker_config, rx, ready_tx, worker_stats))
            .map_err(|e| format!("cannot start the model thread: {e}"))?;
        ready_rx
            .recv()
            .map_err(|_| "the model thread stopped while loading".to_string())??;
        Ok(Engine {
            jobs: Mutex::new(tx),
            stats,
            config,
        })
    }

    pub fn submit(&self, job: Job) -> Result<(), String> {
        self.jobs
            .lock()
            .unwrap()
            .send(job)
            .map_err(|_| "the model thread has stopped".to_string())
    }

    pub fn stats(&self) -> EngineStats {
        *self.stats.lock().unwrap()
    }

    pub fn reset_stats(&self) {
        let load_ms = self.stats.lock().unwrap().load_ms;
        *self.stats.lock().unwrap() = EngineStats {
            load_ms,
            ..EngineStats::default()
        };
    }
}

fn worker(
    config: EngineConfig,
    jobs: mpsc::Receiver<Job>,
    ready: mpsc::Sender<Result<(), String>>,
    stats: Arc<Mutex<EngineStats>>,
) {
    let started = Instant::now();
    let backend = match backend() {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let model = match LlamaModel::load_from_file(backend, &config.model_path, &LlamaModelParams::default()) {
        Ok(m) => m,
        Err(e) => {
            let _ = ready.send(Err(format!(
                "cannot load the model {}: {e} (is it a GGUF file?)",
                config.model_path.display()
            )));
            return;
        }
    };
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(config.n_ctx))
        .with_n_batch(512)
        .with_n_ubatch(512)
        .with_n_threads(config.threads)
        .with_n_threads_batch(config.threads)
        .with_n_seq_max(1);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(format!("cannot create a model context: {e}")));
            return;
        }
    };
    // The model's own chat template; llama.cpp recognises the common ones.
    let template = model
        .chat_template(None)
        .or_else(|_| LlamaChatTemplate::new("chatml"))
        .map_err(|e| format!("no chat template: {e}"));
    let template = match template {
        Ok(t) => t,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    stats.lock().unwrap().load_ms = started.elapsed().as_millis() as u64;
    let _ = ready.send(Ok(()));

    let mut state = State {
        model: &model,
        template,
        cached: Vec::new(),
        prefix_reuse: config.prefix_reuse,
        prefix_store: config
            .prefix_states
            .clone()
            .filter(|_| config.prefix_reuse)
            .map(|dir| PrefixStore::new(dir, &config.model_path, config.n_ctx)),
        forced: ForcedText::new(&model),
    };
    while let Ok(job) = jobs.recv() {
        let result = state.generate(&mut ctx, &job, &stats);
        let _ = job.reply.send(result);
    }
}

/// Greedy choice under an optional grammar. Checking the unconstrained best token
/// first, and masking the whole vocabulary (~150k tokens) only when the grammar
/// rejects it, makes constrained decoding nearly as fast as free decoding.
/// `None` when the grammar allows no token at all (accepting one anyway would abort llama.cpp).
fn next_token(
    logits: &[f32],
    grammar: Option<&mut LlamaSampler>,
    sampling: Option<&mut Sampler>,
) -> Option<LlamaToken> {
    if let Some(sampler) = sampling {
        return sampler.pick(logits, grammar);
    }
    let argmax = |data: &mut dyn Iterator<Item = (usize, f32)>| {
        data.fold(
            (0usize, f32::NEG_INFINITY),
            |best, (i, l)| if l > best.1 { (i, l) } else { best },
        )
    };
    let (best, best_logit) = argmax(&mut logits.iter().copied().enumerate());
    let best = LlamaToken::new(best as i32);
    let Some(grammar) = grammar else { return Some(best) };
    let mut single = LlamaTokenDataArray::new(vec![LlamaTokenData::new(best, best_logit, 0.0)], false);
    grammar.apply(&mut single);
    if single.data[0].logit().is_finite() {
        return Some(best);
    }
    let mut all = vocabulary(logits);
    grammar.apply(&mut all);
    let (i, logit) = argmax(&mut all.data.iter().map(|d| (d.id().0 as usize, d.logit())));
    logit.is_finite().then(|| LlamaToken::new(i as i32))
}

/// Every token of the vocabulary with its logit, for a grammar to mask.
fn vocabulary(logits: &[f32]) -> LlamaTokenDataArray {
    LlamaTokenDataArray::from_iter(
        logits
            .iter()
            .enumerate()
            .map(|(i, &l)| LlamaTokenData::new(LlamaToken::new(i as i32), l, 0.0)),
        false,
    )
}

/// A seeded temperature sampler over the grammar-allowed top-k tokens.
struct Sampler {
    temperature: f32,
    rng: u64,
}

impl Sampler {
    fn new(sampling: Sampling) -> Sampler {
        Sampler {
            temperature: sampling.temperature.max(0.01),
            rng: sampling.seed | 1,
        }
    }

    /// xorshift64: small, and the same sequence for the same seed.
    fn next_unit(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick(&mut self, logits: &[f32], grammar: Option<&mut LlamaSampler>) -> Option<LlamaToken> {
        let mut all = vocabulary(logits);
        if let Some(grammar) = grammar {
            grammar.apply(&mut all);
        }
        let mut allowed: Vec<(LlamaToken, f32)> = all
            .data
            .iter()
            .filter(|d| d.logit().is_finite())
            .map(|d| (d.id(), d.logit()))
            .collect();
        allowed.sort_by(|a, b| b.1.total_cmp(&a.1));
        allowed.truncate(TOP_K);
        let top = allowed.first()?.1;
        let weights: Vec<f64> = allowed
            .iter()
            .map(|(_, l)| (((l - top) / self.temperature) as f64).exp())
            .collect();
        let mut target = self.next_unit() * weights.iter().sum::<f64>();
        for ((token, _), w) in allowed.iter().zip(&weights) {
            if target < *w {
                return Some(*token);
            }
            target -= w;
        }
        allowed.last().map(|(t, _)| *t)
    }
}

/// A reply as it is generated: its bytes, how many were streamed, its tokens.
#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    /// Bytes of `bytes` already streamed (a character may span tokens).
    streamed: usize,
    generated: u64,
    /// Of `generated`, tokens the grammar forced (fed without sampling).
    forced: u64,
}

impl Output {
    fn push(&mut self, vocab: &llama_cpp_2::vocab::LlamaVocab<'_>, token: LlamaToken) {
        vocab.token_to_piece_into(token, &mut self.bytes, false, None);
        self.generated += 1;
    }

    /// Send the whole UTF-8 characters not streamed yet.
    fn stream(&mut self, to: Option<&tokio::sync::mpsc::UnboundedSender<String>>) {
        let Some(stream) = to else { return };
        let whole = match std::str::from_utf8(&self.bytes[self.streamed..]) {
            Ok(text) => text.len(),
            Err(e) => e.valid_up_to(),
        };
        if whole > 0 {
            let _ =
                stream.send(String::from_utf8_lossy(&self.bytes[self.streamed..self.streamed + whole]).into_owned());
            self.streamed += whole;
        }
    }
}

struct State<'m> {
    model: &'m LlamaModel,
    template: LlamaChatTemplate,
    /// Tokens whose keys and values are in the KV cache (sequence 0), in order.
    cached: Vec<LlamaToken>,
    prefix_reuse: bool,
    prefix_store: Option<PrefixStore>,
    forced: ForcedText,
}

impl State<'_> {
    /// Decode a batch; on failure forget the KV cache, whose contents are then unknown.
    fn decode(&mut self, ctx: &mut LlamaContext<'_>, batch: &mut LlamaBatch, doing: &str) -> Result<(), String> {
        ctx.decode(batch).map_err(|e| {
            self.cached.clear();
            ctx.clear_kv_cache();
            format!("{doing} failed: {e}")
        })
    }

    /// The job's messages in the model's chat template, as tokens that leave
    /// room in the context for the reply.
    fn prompt_tokens(&self, ctx: &LlamaContext<'_>, job: &Job) -> Result<Vec<LlamaToken>, String> {
        let chat = job
            .messages
            .iter()
            .map(|(role, content)| LlamaChatMessage::new(role.clone(), content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("a message cannot be passed to the model: {e}"))?;
        let prompt = self
            .model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| format!("cannot apply the chat template: {e}"))?;
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), true, true);
        let n_ctx = ctx.n_ctx() as usize;
        if tokens.is_empty() {
            return Err("the prompt is empty".to_string());
        }
        if tokens.len() + job.max_tokens as usize > n_ctx {
            return Err(format!(
                "the prompt is {} tokens; with {} to generate it does not fit the model's context of {n_ctx} tokens",
                tokens.len(),
                job.max_tokens
            ));
        }
        Ok(tokens)
    }

    /// The length of the prompt's system message in tokens, when the prompt
    /// starts with one and something follows it: the part every call of a
    /// run (and every run with the same tools) shares.
    fn system_prefix_len(&self, job: &Job, tokens: &[LlamaToken]) -> Option<usize> {
        let (role, content) = job.messages.first().filter(|_| job.messages.len() > 1)?;
        if role != "system" {
            return None;
        }
        let message = LlamaChatMessage::new(role.clone(), content.clone()).ok()?;
        let text = self.model.apply_chat_template(&self.template, &[message], false).ok()?;
        let prefix = self.model.vocab().tokenize(text.as_bytes(), true, true);
        (!prefix.is_empty() && prefix.len() < tokens.len() && tokens.starts_with(&prefix)).then_some(prefix.len())
    }

    /// Evaluate `tokens[from..]` (the KV cache holds `tokens[..from]`),
    /// asking for logits of the last one when `logits` is set.
    fn evaluate(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        tokens: &[LlamaToken],
        from: usize,
        logits: bool,
    ) -> Result<(), String> {
        let n_batch = ctx.n_batch() as usize;
        let last = tokens.len() - 1;
        for (ci, chunk) in tokens[from..].chunks(n_batch).enumerate() {
            batch.clear();
            for (j, &t) in chunk.iter().enumerate() {
                let pos = from + ci * n_batch + j;
                batch
                    .add(t, pos as i32, &[0], logits && pos == last)
                    .map_err(|e| format!("batch: {e}"))?;
            }
            self.decode(ctx, batch, "evaluating the prompt")?;
            self.cached.extend_from_slice(chunk);
        }
        Ok(())
    }

    /// Make the KV cache hold `prefix` (of which it holds `keep` tokens):
    /// load its saved state, or evaluate it and save it for the next process.
    fn restore_prefix(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        store: &PrefixStore,
        prefix: &[LlamaToken],
        keep: usize,
        stats: &Mutex<EngineStats>,
    ) -> Result<PromptCache, String> {
        if let Some(loaded) = self.load_prefix(ctx, store, prefix, stats) {
            return Ok(loaded);
        }
        // A failed load leaves the KV cache cleared.
        let keep = keep.min(self.cached.len());
        self.evaluate(ctx, batch, prefix, keep, false)?;
        store.save(ctx, prefix);
        stats.lock().unwrap().prefix_saves += 1;
        Ok(PromptCache {
            read: keep,
            written: prefix.len(),
        })
    }

    /// Bring the KV cache (which holds `keep` tokens of the prompt) to hold
    /// the longest saved prefix of `tokens`: the one it shares with an earlier
    /// prompt when that is longer than its system message by [`MIN_SHARED`],
    /// else the system message. A prefix not saved yet is evaluated and saved.
    #[allow(clippy::too_many_arguments)]
    fn restore_saved_prefixes(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        store: &PrefixStore,
        job: &Job,
        tokens: &[LlamaToken],
        keep: usize,
        stats: &Mutex<EngineStats>,
    ) -> Result<PromptCache, String> {
        let system = self.system_prefix_len(job, tokens).unwrap_or(0);
        let shared = store.shared_prefix(tokens).min(tokens.len() - 1);
        store.remember(tokens);
        let mut cache = PromptCache { read: keep, written: 0 };
        if shared >= system.max(keep) + MIN_SHARED {
            // The longer state first: when it loads, the system one is not needed.
            if let Some(loaded) = self.load_prefix(ctx, store, &tokens[..shared], stats) {
                return Ok(loaded);
            }
        }
        let keep = keep.min(self.cached.len());
        if system > keep {
            cache = self.restore_prefix(ctx, batch, store, &tokens[..system], keep, stats)?;
        }
        if shared >= system.max(keep) + MIN_SHARED {
            let from = self.cached.len();
            self.evaluate(ctx, batch, &tokens[..shared], from, false)?;
            store.save(ctx, &tokens[..shared]);
            stats.lock().unwrap().prefix_saves += 1;
            cache.written += shared;
        }
        Ok(cache)
    }

    /// Load the saved state of `prefix`, if there is a usable one. A broken
    /// one is deleted and leaves the KV cache empty.
    fn load_prefix(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        store: &PrefixStore,
        prefix: &[LlamaToken],
        stats: &Mutex<EngineStats>,
    ) -> Option<PromptCache> {
        match store.load(ctx, prefix) {
            Lookup::Loaded => {
                self.cached = prefix.to_vec();
                stats.lock().unwrap().prefix_loads += 1;
                Some(PromptCache {
                    read: prefix.len(),
                    written: 0,
                })
            }
            Lookup::Broken(_) => {
                self.cached.clear();
                stats.lock().unwrap().prefix_rebuilds += 1;
                None
            }
            Lookup::Missing => None,
        }
    }

    /// Bring the KV cache to hold all of `tokens`, evaluating only what
    /// neither the cache nor a saved prefix holds. The last token is always
    /// evaluated, for its logits.
    fn prepare_prompt(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        job: &Job,
        tokens: &[LlamaToken],
        stats: &Mutex<EngineStats>,
    ) -> Result<PromptCache, String> {
        let common = if self.prefix_reuse {
            self.cached.iter().zip(tokens).take_while(|(a, b)| a == b).count()
        } else {
            0
        };
        let mut keep = common.min(tokens.len() - 1);
        match ctx.clear_kv_cache_seq(Some(0), Some(keep as u32), None) {
            Ok(true) => {}
            _ => {
                ctx.clear_kv_cache();
                keep = 0;
            }
        }
        self.cached.truncate(keep);
        let cache = match self.prefix_store.clone() {
            Some(store) => self.restore_saved_prefixes(ctx, batch, &store, job, tokens, keep, stats)?,
            None => PromptCache { read: keep, written: 0 },
        };
        let from = self.cached.len();
        self.evaluate(ctx, batch, tokens, from, true)?;
        Ok(cache)
    }

    fn generate(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        job: &Job,
        stats: &Mutex<EngineStats>,
    ) -> Result<Generation, String> {
        let tokens = self.prompt_tokens(ctx, job)?;
        let t_prompt = Instant::now();
        let mut batch = LlamaBatch::new(ctx.n_batch() as usize, 1);
        let cache = self.prepare_prompt(ctx, &mut batch, job, &tokens, stats)?;
        let vocab = self.model.vocab();
        let prompt_ms = t_prompt.elapsed().as_millis() as u64;

        let t_gen = Instant::now();
        let mut grammar = match &job.grammar {
            Some(g) => {
                Some(LlamaSampler::grammar(self.model, g, "root").map_err(|e| format!("the grammar is invalid: {e}"))?)
            }
            None => None,
        };
        let mut sampler = job.sampling.map(Sampler::new);
        let mut out = Output::default();
        let mut pos = tokens.len() as i32;
        while out.generated < u64::from(job.max_tokens) {
            let Some(token) = next_token(
                ctx.get_logits_ith(batch.n_tokens() - 1),
                grammar.as_mut(),
                sampler.as_mut(),
            ) else {
                return Err("the output grammar allows no next token (the grammar is unsatisfiable)".to_string());
            };
            if vocab.is_eog(token) {
                break;
            }
            let mut feed = vec![token];
            out.push(&vocab, token);
            let mut complete = false;
            if let Some(g) = grammar.as_mut() {
                g.accept(token);
                let room = (u64::from(job.max_tokens) - out.generated) as usize;
                let (text, ends) = self.forced.peek(g, room.min(forced::MAX_RUN));
                let mut run = vocab.tokenize(text.as_bytes(), false, false);
                if !ends {
                    run.pop();
                }
                complete = ends;
                out.forced += run.len() as u64;
                for t in run {
                    g.accept(t);
                    feed.push(t);
                    out.push(&vocab, t);
                }
            }
            out.stream(job.stream.as_ref());
            // The grammar allows nothing more: the reply is whole, and what
            // was just written needs no decode.
            if complete {
                break;
            }
            batch.clear();
            for (i, t) in feed.iter().enumerate() {
                batch
                    .add(*t, pos + i as i32, &[0], i + 1 == feed.len())
                    .map_err(|e| format!("batch: {e}"))?;
            }
            self.decode(ctx, &mut batch, "generating")?;
            self.cached.extend(&feed);
            pos += feed.len() as i32;
        }
        let (generated, out_forced, bytes) = (out.generated, out.forced, out.bytes);
        let generate_ms = t_gen.elapsed().as_millis() as u64;
        tracing::trace!(text = %String::from_utf8_lossy(&bytes), "local model output");

        let mut s = stats.lock().unwrap();
        s.calls += 1;
        s.prompt_tokens += tokens.len() as u64;
        s.evaluated_prompt_tokens += (tokens.len() - cache.read) as u64;
        s.generated_tokens += generated;
        s.forced_tokens += out_forced;
        s.prompt_ms += prompt_ms;
        s.generate_ms += generate_ms;
        drop(s);
        tracing::debug!(
            prompt = tokens.len(),
            reused = cache.read,
            saved = cache.written,
            generated,
            forced = out_forced,
            prompt_ms,
            generate_ms,
            "local model call"
        );
        Ok(Generation {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            prompt_tokens: tokens.len() as u64,
            cached_tokens: cache.read as u64,
            saved_tokens: cache.written as u64,
            completion_tokens: generated,
        })
    }
}
