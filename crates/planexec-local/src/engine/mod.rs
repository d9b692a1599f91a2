//! The inference engine: one llama.cpp model and context on a worker thread.
//!
//! Requests arrive on a queue, so one model instance serves concurrent steps
//! safely. Each request in flight has its own sequence of the KV cache (a
//! [`slot::Slot`]), and every decode carries the next tokens of all of them:
//! on a CPU one decode of two tokens costs little more than one of one, so two
//! parallel steps take about the time of one. A sequence keeps the tokens of
//! its previous prompt; a new prompt evaluates only what follows the longest
//! prefix it shares with any sequence ([`prompt`]). Every role's prompt starts
//! with the same system prompt and tool list, so that prefix is computed once
//! per run instead of once per call, and its state is saved on disk so the
//! next process loads it ([`PrefixStore`]). Decoding is greedy (optionally
//! grammar-constrained), so runs are repeatable; text the grammar forces is fed
//! in batches instead of sampled token by token ([`ForcedText`]).

mod grid;
mod job;
mod prompt;
mod sampling;
mod slot;
mod state;

use std::collections::VecDeque;
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
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};

use crate::forced::ForcedText;
use crate::prefix_store::PrefixStore;
use slot::{Next, Slot};
use state::{Admission, Placement, State};

pub(crate) use grid::GRID;
pub use job::{EngineStats, Generation, Job, Sampling};

/// Settings of the engine.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub model_path: PathBuf,
    /// Context size in tokens, shared by the sequences in flight.
    pub n_ctx: u32,
    /// CPU threads (default: all cores).
    pub threads: i32,
    /// Reuse the KV cache for a prompt's common prefix with the previous one.
    pub prefix_reuse: bool,
    /// Where evaluated system messages are kept between processes
    /// ([`PrefixStore`]); `None` evaluates them in every process.
    pub prefix_states: Option<PathBuf>,
    /// Most requests decoded together (each in its own KV cache sequence);
    /// 1 serves them one after another.
    pub sequences: u32,
}

impl EngineConfig {
    pub fn new(model_path: impl Into<PathBuf>) -> EngineConfig {
        EngineConfig {
            model_path: model_path.into(),
            // Two steps of a plan (prompts of ~2,700 tokens, replies of up
            // to 1,536) fit side by side, each with its own saved prompt
            // state; in 8,192 the second waited or evaluated its end again.
            // The KV cache is 28 KB a token on 1.5B, 12 KB on 0.5B.
            n_ctx: 12288,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get() as i32),
            prefix_reuse: true,
            prefix_states: Some(crate::weights::model_dir().join("prefix-states")),
            sequences: 4,
        }
    }
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
    let loaded = backend().and_then(|backend| {
        let model =
            LlamaModel::load_from_file(backend, &config.model_path, &LlamaModelParams::default()).map_err(|e| {
                format!(
                    "cannot load the model {}: {e} (is it a GGUF file?)",
                    config.model_path.display()
                )
            })?;
        Ok((backend, model))
    });
    let (backend, model) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let sequences = config.sequences.max(1);
    // One cache for all sequences ("unified"): a prefix two sequences share
    // is kept once, and one long prompt may use all of it.
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(config.n_ctx))
        .with_n_batch(512)
        .with_n_ubatch(512)
        .with_n_threads(config.threads)
        .with_n_threads_batch(config.threads)
        .with_n_seq_max(sequences)
        .with_kv_unified(true);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(format!("cannot create a model context: {e}")));
            return;
        }
    };
    // The model's own chat template; llama.cpp recognises the common ones.
    let template = match model.chat_template(None).or_else(|_| LlamaChatTemplate::new("chatml")) {
        Ok(t) => t,
        Err(e) => {
            let _ = ready.send(Err(format!("no chat template: {e}")));
            return;
        }
    };
    stats.lock().unwrap().load_ms = started.elapsed().as_millis() as u64;
    let _ = ready.send(Ok(()));

    let mut state = State {
        model: &model,
        template,
        cached: vec![Vec::new(); sequences as usize],
        exact: vec![0; sequences as usize],
        prefix_reuse: config.prefix_reuse,
        prefix_store: config
            .prefix_states
            .clone()
            .filter(|_| config.prefix_reuse)
            .map(|dir| PrefixStore::new(dir, &config.model_path, config.n_ctx)),
        forced: ForcedText::new(&model),
        lost: None,
        stats,
    };
    state.serve(&mut ctx, &jobs);
}

impl State<'_> {
    /// Take jobs until the queue closes: start each while a sequence and room
    /// are free, and decode the replies in flight together.
    fn serve(&mut self, ctx: &mut LlamaContext<'_>, jobs: &mpsc::Receiver<Job>) {
        let mut slots: Vec<Slot> = Vec::new();
        let mut waiting: VecDeque<Job> = VecDeque::new();
        let mut batch = LlamaBatch::new(ctx.n_batch() as usize, 1);
        loop {
            if slots.is_empty() && waiting.is_empty() {
                match jobs.recv() {
                    Ok(job) => waiting.push_back(job),
                    Err(_) => return,
                }
            }
            waiting.extend(jobs.try_iter());
            while slots.len() < self.cached.len() {
                let Some(job) = waiting.pop_front() else { break };
                match self.admit(ctx, &mut batch, job, &slots) {
                    Admission::Started(slot) => start(&mut slots, slot),
                    Admission::Answered => {}
                    Admission::Wait(job) => {
                        waiting.push_front(job);
                        break;
                    }
                }
                self.fail_all_if_lost(&mut slots);
            }
            let mut s = self.stats.lock().unwrap();
            s.most_in_flight = s.most_in_flight.max(slots.len() as u64);
            drop(s);
            if !slots.is_empty() {
                self.step(ctx, &mut batch, &mut slots);
                self.fail_all_if_lost(&mut slots);
            }
        }
    }

    /// After a failed decode no reply in flight can go on.
    fn fail_all_if_lost(&mut self, slots: &mut Vec<Slot>) {
        if let Some(why) = self.lost.take() {
            for slot in slots.drain(..) {
                let _ = slot
                    .job
                    .reply
                    .send(Err(format!("{why} (while decoding several replies)")));
            }
        }
    }

    /// Give `job` a sequence: bring its prompt into the cache and choose its
    /// first tokens. With other replies in flight it waits while their room
    /// (prompt and reply limit each, cells they share counted once) leaves
    /// too little for it.
    fn admit(&mut self, ctx: &mut LlamaContext<'_>, batch: &mut LlamaBatch, job: Job, slots: &[Slot]) -> Admission {
        let n_ctx = ctx.n_ctx() as usize;
        let tokens = match self.prompt_tokens(n_ctx, &job) {
            Ok(tokens) => tokens,
            Err(e) => {
                let _ = job.reply.send(Err(e));
                return Admission::Answered;
            }
        };
        let busy: Vec<i32> = slots.iter().map(|s| s.seq).collect();
        let Some(seq) = self.free_sequence(&busy, &tokens) else {
            return Admission::Wait(job);
        };
        // Cells a reply in flight lends (its system message, say) are in the
        // cache once: counting them twice kept two steps of one plan, whose
        // prompts share most of their tokens, from ever running together.
        let in_use = cells_in_use(slots);
        let lent = self.lender(seq, &busy, &tokens).map_or(0, |(_, n)| n);
        let needed = tokens.len() + job.max_tokens as usize;
        if !slots.is_empty() && in_use + needed - lent > n_ctx {
            return Admission::Wait(job);
        }
        let at = Placement {
            seq,
            busy: &busy,
            needs_lent: !slots.is_empty() && in_use + needed > n_ctx,
        };
        let t_prompt = Instant::now();
        let cache = match self.prepare_prompt(ctx, batch, &at, &job, &tokens) {
            Ok(cache) => cache,
            Err(e) => {
                let _ = job.reply.send(Err(e));
                return Admission::Answered;
            }
        };
        let prompt_ms = t_prompt.elapsed().as_millis() as u64;
        let mut slot = match Slot::new(self.model, job, seq, tokens.len(), cache, prompt_ms) {
            Ok(slot) => slot,
            Err((job, e)) => {
                let _ = job.reply.send(Err(e));
                return Admission::Answered;
            }
        };
        if slot.job.max_tokens == 0 {
            // Asked only to bring its prompt into the cache (and save its system message).
            finish(slot, &self.stats);
            return Admission::Answered;
        }
        let logits = ctx.get_logits_ith(batch.n_tokens() - 1);
        match slot.choose(self.model, &self.forced, logits) {
            Ok(Next::Decode) => Admission::Started(slot),
            Ok(Next::Done) => {
                finish(slot, &self.stats);
                Admission::Answered
            }
            Err(e) => {
                let _ = slot.job.reply.send(Err(e));
                Admission::Answered
            }
        }
    }

    /// One decode for every reply in flight, then each chooses its next
    /// tokens; finished replies are sent and their slots freed.
    fn step(&mut self, ctx: &mut LlamaContext<'_>, batch: &mut LlamaBatch, slots: &mut Vec<Slot>) {
        batch.clear();
        let mut logits_at = Vec::with_capacity(slots.len());
        for slot in slots.iter() {
            for (i, t) in slot.feed.iter().enumerate() {
                let last = i + 1 == slot.feed.len();
                if let Err(e) = batch.add(*t, slot.pos + i as i32, &[slot.seq], last) {
                    self.lost = Some(format!("batch: {e}"));
                    return;
                }
            }
            logits_at.push(batch.n_tokens() - 1);
        }
        let t_decode = Instant::now();
        if self.decode(ctx, batch, "generating").is_err() {
            return;
        }
        let us = t_decode.elapsed().as_micros() as u64;
        let mut stats = self.stats.lock().unwrap();
        if slots.len() > 1 {
            stats.shared_decodes += 1;
        }
        match (slots.iter().all(|s| s.feed.len() == 1), slots.len()) {
            (true, 1) => {
                stats.lone_decodes += 1;
                stats.lone_decode_us += us;
            }
            (true, 2) => {
                stats.pair_decodes += 1;
                stats.pair_decode_us += us;
            }
            _ => {}
        }
        drop(stats);
        let mut i = 0;
        for at in logits_at {
            let slot = &mut slots[i];
            self.cached[slot.seq as usize].extend_from_slice(&slot.feed);
            match slot.choose(self.model, &self.forced, ctx.get_logits_ith(at)) {
                Ok(Next::Decode) => i += 1,
                Ok(Next::Done) => finish(slots.remove(i), &self.stats),
                Err(e) => {
                    let _ = slots.remove(i).job.reply.send(Err(e));
                }
            }
        }
    }
}

/// Put a started reply in flight. Replies its sequence lent cells to, for
/// an earlier reply, no longer count them as lent: the new prompt may not
/// share them (whether it does is not worth tracking; the count only errs high).
fn start(slots: &mut Vec<Slot>, slot: Slot) {
    for other in slots.iter_mut() {
        if other.cache.lent_by.is_some_and(|(by, _)| by == slot.seq) {
            other.cache.lent_by = None;
        }
    }
    slots.push(slot);
}

/// The most cells of the KV cache the replies in flight may hold: each one's
/// prompt and reply limit, less the cells another one in flight lent it.
fn cells_in_use(slots: &[Slot]) -> usize {
    let in_flight = |seq: i32| slots.iter().any(|s| s.seq == seq);
    slots
        .iter()
        .map(|slot| {
            let lent = slot
                .cache
                .lent_by
                .filter(|&(by, _)| in_flight(by))
                .map_or(0, |(_, n)| n);
            slot.reserved() - lent
        })
        .sum()
}

/// Count a finished reply and send it.
fn finish(slot: Slot, stats: &Mutex<EngineStats>) {
    let (job, generation) = slot.finish(stats);
    let _ = job.reply.send(Ok(generation));
}
