//! One reply being generated: the job it answers, the sequence of the KV
//! cache it lives in, its grammar and output so far, and the tokens it feeds
//! the model next. Several slots share each decode ([`super::Engine`]).

use std::sync::Mutex;
use std::time::Instant;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::job::{EngineStats, Generation, Job, PromptCache};
use super::sampling::{next_token, Sampler};
use crate::forced::{self, ForcedText};

/// A reply as it is generated: its bytes, how many were streamed, its tokens.
#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    /// Bytes of `bytes` already streamed (a character may span tokens).
    streamed: usize,
    generated: u64,
    /// Of `generated`, tokens the grammar forced (fed without sampling).
    forced: u64,
    /// The reply was stopped because it ended in a loop.
    looped: bool,
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

/// What a slot does after choosing.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Decode `feed` and choose again.
    Decode,
    /// The reply is whole.
    Done,
}

pub(super) struct Slot {
    pub job: Job,
    /// The KV cache sequence holding this reply's prompt and output.
    pub seq: i32,
    pub prompt_len: usize,
    pub cache: PromptCache,
    pub prompt_ms: u64,
    started: Instant,
    grammar: Option<LlamaSampler>,
    sampler: Option<Sampler>,
    out: Output,
    /// Tokens to decode next: the one chosen, and what the grammar forces after it.
    pub feed: Vec<LlamaToken>,
    /// The position of `feed`'s first token.
    pub pos: i32,
}

impl Slot {
    pub fn new(
        model: &LlamaModel,
        job: Job,
        seq: i32,
        prompt_len: usize,
        cache: PromptCache,
        prompt_ms: u64,
    ) -> Result<Slot, (Job, String)> {
        let grammar = match job.grammar.as_deref().map(|g| LlamaSampler::grammar(model, g, "root")) {
            None => None,
            Some(Ok(g)) => Some(g),
            Some(Err(e)) => return Err((job, format!("the grammar is invalid: {e}"))),
        };
        let sampler = job.sampling.map(Sampler::new);
        Ok(Slot {
            job,
            seq,
            prompt_len,
            cache,
            prompt_ms,
            started: Instant::now(),
            grammar,
            sampler,
            out: Output::default(),
            feed: Vec::new(),
            pos: prompt_len as i32,
        })
    }

    /// The most tokens this reply may hold in the KV cache: its prompt and
    /// the reply's limit.
    pub fn reserved(&self) -> usize {
        self.prompt_len + self.job.max_tokens as usize
    }

    /// Choose what follows from the logits of the last token fed: the next
    /// token, then whatever the grammar forces after it, to be decoded together.
    pub fn choose(&mut self, model: &LlamaModel, forced: &ForcedText, logits: &[f32]) -> Result<Next, String> {
        let vocab = model.vocab();
        self.pos += self.feed.len() as i32;
        self.feed.clear();
        let Some(token) = next_token(logits, self.grammar.as_mut(), self.sampler.as_mut()) else {
            return Err("the output grammar allows no next token (the grammar is unsatisfiable)".to_string());
        };
        if vocab.is_eog(token) {
            return Ok(Next::Done);
        }
        self.feed.push(token);
        self.out.push(&vocab, token);
        let max_tokens = u64::from(self.job.max_tokens);
        let mut complete = false;
        if let Some(g) = self.grammar.as_mut() {
            g.accept(token);
            let room = max_tokens.saturating_sub(self.out.generated) as usize;
            let (text, ends) = forced.peek(g, room.min(forced::MAX_RUN));
            let mut run = vocab.tokenize(text.as_bytes(), false, false);
            if !ends {
                run.pop();
            }
            complete = ends;
            self.out.forced += run.len() as u64;
            for t in run {
                g.accept(t);
                self.feed.push(t);
                self.out.push(&vocab, t);
            }
        }
        self.out.stream(self.job.stream.as_ref());
        // A reply writing one block over and over would only go on to its
        // limit (minutes here): it is stopped, and cut.
        if !complete && planexec::text::repeating_tail(&self.out.bytes).is_some() {
            tracing::warn!(
                generated = self.out.generated,
                "the local model's reply ended in a loop: stopped"
            );
            self.out.looped = true;
            return Ok(Next::Done);
        }
        // The grammar allows nothing more, or the limit is reached: the reply
        // is whole, and what was just written needs no decode.
        if complete || self.out.generated >= max_tokens {
            Ok(Next::Done)
        } else {
            Ok(Next::Decode)
        }
    }

    /// The finished reply, and the job to send it to; its call is counted in `stats`.
    pub fn finish(self, stats: &Mutex<EngineStats>) -> (Job, Generation) {
        let generate_ms = self.started.elapsed().as_millis() as u64;
        tracing::trace!(text = %String::from_utf8_lossy(&self.out.bytes), "local model output");
        tracing::debug!(
            prompt = self.prompt_len,
            reused = self.cache.read,
            saved = self.cache.written,
            generated = self.out.generated,
            forced = self.out.forced,
            prompt_ms = self.prompt_ms,
            generate_ms,
            "local model call"
        );
        let mut s = stats.lock().unwrap();
        s.calls += 1;
        s.prompt_tokens += self.prompt_len as u64;
        s.evaluated_prompt_tokens += (self.prompt_len - self.cache.read) as u64;
        s.generated_tokens += self.out.generated;
        s.forced_tokens += self.out.forced;
        s.prompt_ms += self.prompt_ms;
        s.generate_ms += generate_ms;
        drop(s);
        let generation = Generation {
            text: String::from_utf8_lossy(&self.out.bytes).into_owned(),
            prompt_tokens: self.prompt_len as u64,
            cached_tokens: self.cache.read as u64,
            saved_tokens: self.cache.written as u64,
            completion_tokens: self.out.generated,
            looped: self.out.looped,
        };
        (self.job, generation)
    }
}
