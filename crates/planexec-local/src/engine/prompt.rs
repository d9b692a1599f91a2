//! Bringing a prompt into one sequence of the KV cache, evaluating as little
//! as possible: what the sequence already holds from its previous prompt,
//! what another sequence holds (a step started beside this one shares its
//! system message), and what a saved prefix state holds ([`PrefixStore`]).

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaChatMessage;
use llama_cpp_2::token::LlamaToken;

use super::grid::{on_grid, GRID, MIN_SHARED};
use super::job::{Job, PromptCache};
use super::state::{Placement, State};
use crate::prefix_store::{Lookup, PrefixStore};

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl State<'_> {
    /// The job's messages in the model's chat template, as tokens that leave
    /// room in the context for the reply.
    pub(super) fn prompt_tokens(&self, n_ctx: usize, job: &Job) -> Result<Vec<LlamaToken>, String> {
        // A NUL byte ends a C string, and llama.cpp takes messages as C
        // strings: one in a file shown to the model (a photo's bytes that
        // read as UTF-8) is said as U+FFFD, as an undecodable byte is.
        let chat = job
            .messages
            .iter()
            .map(|(role, content)| LlamaChatMessage::new(role.clone(), content.replace('\0', "\u{FFFD}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("a message cannot be passed to the model: {e}"))?;
        let prompt = self
            .model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| format!("cannot apply the chat template: {e}"))?;
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), true, true);
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

    /// The free sequence whose cache shares most with `tokens`.
    pub(super) fn free_sequence(&self, busy: &[i32], tokens: &[LlamaToken]) -> Option<i32> {
        (0..self.cached.len() as i32)
            .filter(|s| !busy.contains(s))
            .max_by_key(|&s| (common_prefix(&self.cached[s as usize], tokens), std::cmp::Reverse(s)))
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

    /// Evaluate `tokens[from..]` into sequence `seq` (which holds
    /// `tokens[..from]`), one cell of the [`GRID`] per batch, asking for
    /// logits of the last one when `logits` is set.
    fn evaluate(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        seq: i32,
        tokens: &[LlamaToken],
        from: usize,
        logits: bool,
    ) -> Result<(), String> {
        let cell = GRID.min(ctx.n_batch() as usize);
        let last = tokens.len() - 1;
        let mut start = from;
        while start < tokens.len() {
            let end = ((start / cell + 1) * cell).min(tokens.len());
            batch.clear();
            for (pos, &t) in tokens.iter().enumerate().take(end).skip(start) {
                batch
                    .add(t, pos as i32, &[seq], logits && pos == last)
                    .map_err(|e| format!("batch: {e}"))?;
            }
            self.decode(ctx, batch, "evaluating the prompt")?;
            self.cached[seq as usize].extend_from_slice(&tokens[start..end]);
            if start % cell == 0 && end % cell == 0 && self.exact[seq as usize] == start {
                self.exact[seq as usize] = end;
            }
            start = end;
        }
        Ok(())
    }

    /// Make sequence `seq` hold `prefix` (of which it holds the start):
    /// load its saved state, or evaluate it and save it for the next process.
    fn restore_prefix(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        store: &PrefixStore,
        seq: i32,
        prefix: &[LlamaToken],
    ) -> Result<PromptCache, String> {
        if let Some(loaded) = self.load_prefix(ctx, store, seq, prefix) {
            return Ok(loaded);
        }
        // What the sequence holds (nothing after a failed load).
        let keep = self.cached[seq as usize].len();
        self.evaluate(ctx, batch, seq, prefix, keep, false)?;
        store.save(ctx, seq, prefix);
        self.stats.lock().unwrap().prefix_saves += 1;
        Ok(PromptCache {
            read: keep,
            written: prefix.len(),
            ..PromptCache::default()
        })
    }

    /// Load the saved state of `prefix` into sequence `seq`, if there is a
    /// usable one. A broken one is deleted and leaves the sequence empty.
    fn load_prefix(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        store: &PrefixStore,
        seq: i32,
        prefix: &[LlamaToken],
    ) -> Option<PromptCache> {
        match store.load(ctx, seq, prefix) {
            Lookup::Loaded => {
                self.cached[seq as usize] = prefix.to_vec();
                self.exact[seq as usize] = on_grid(prefix.len());
                self.stats.lock().unwrap().prefix_loads += 1;
                Some(PromptCache {
                    read: prefix.len(),
                    ..PromptCache::default()
                })
            }
            Lookup::Broken(_) => {
                self.cached[seq as usize].clear();
                self.exact[seq as usize] = 0;
                self.stats.lock().unwrap().prefix_rebuilds += 1;
                None
            }
            Lookup::Missing => None,
        }
    }

    /// Bring sequence `seq` (which holds the start of the prompt) to hold
    /// the longest saved prefix of `tokens`. When the prompt shares more with
    /// an earlier one (by [`MIN_SHARED`] tokens) than any state holds, that
    /// shared prefix is evaluated and saved; when nothing holds its system
    /// message, that is.
    fn restore_saved_prefixes(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        store: &PrefixStore,
        seq: i32,
        job: &Job,
        tokens: &[LlamaToken],
    ) -> Result<PromptCache, String> {
        let last = tokens.len() - 1;
        let saved = on_grid(store.longest_saved(tokens).min(last));
        let shared = on_grid(store.shared_prefix(tokens).min(last));
        store.remember(tokens);
        let mut loaded = None;
        if saved > self.cached[seq as usize].len() {
            loaded = self.load_prefix(ctx, store, seq, &tokens[..saved]);
        }
        // What the sequence holds (nothing after a failed load).
        let held = self.cached[seq as usize].len();
        let mut cache = loaded.unwrap_or(PromptCache {
            read: held,
            ..PromptCache::default()
        });
        let system = on_grid(self.system_prefix_len(job, tokens).unwrap_or(0));
        if system > held {
            cache = self.restore_prefix(ctx, batch, store, seq, &tokens[..system])?;
        }
        let held = self.cached[seq as usize].len();
        if shared >= held + MIN_SHARED {
            self.evaluate(ctx, batch, seq, &tokens[..shared], held, false)?;
            store.save(ctx, seq, &tokens[..shared]);
            self.stats.lock().unwrap().prefix_saves += 1;
            cache.written += shared;
        }
        Ok(cache)
    }

    /// The other sequence that holds more of `tokens` than `seq`'s first
    /// `keep`, and how much: it lends `seq` those cells.
    fn donor(&self, seq: i32, tokens: &[LlamaToken], keep: usize) -> Option<(i32, usize)> {
        (0..self.cached.len() as i32)
            .filter(|&s| s != seq && self.prefix_reuse)
            .map(|s| (s, self.reusable(s, tokens)))
            .max_by_key(|&(_, n)| n)
            .filter(|&(_, n)| n > keep)
    }

    /// The reply in flight (of those in `busy`) that would lend a prompt
    /// given sequence `seq` its first cells, and how many.
    pub(super) fn lender(&self, seq: i32, busy: &[i32], tokens: &[LlamaToken]) -> Option<(i32, usize)> {
        let own = if self.prefix_reuse {
            self.reusable(seq, tokens)
        } else {
            0
        };
        self.donor(seq, tokens, own).filter(|(donor, _)| busy.contains(donor))
    }

    /// How much of `tokens` (short of its last, which is evaluated for its
    /// logits) sequence `seq` holds and may reuse or lend: on the grid, and
    /// only what was evaluated there (not a reply's tokens).
    fn reusable(&self, seq: i32, tokens: &[LlamaToken]) -> usize {
        let held = common_prefix(&self.cached[seq as usize], tokens).min(tokens.len() - 1);
        on_grid(held.min(self.exact[seq as usize]))
    }

    /// Keep the first `keep` tokens of sequence `seq`; what it keeps.
    fn truncate(&mut self, ctx: &mut LlamaContext<'_>, seq: i32, keep: usize) -> usize {
        let cached = &mut self.cached[seq as usize];
        let keep = keep.min(cached.len());
        let keep = match ctx.clear_kv_cache_seq(Some(seq as u32), Some(keep as u32), None) {
            Ok(true) => keep,
            _ => {
                let _ = ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
                0
            }
        };
        cached.truncate(keep);
        self.exact[seq as usize] = self.exact[seq as usize].min(keep);
        keep
    }

    /// Bring the placement's sequence to hold all of `tokens`, evaluating
    /// only what neither the caches nor a saved prefix hold. The last token is
    /// always evaluated, for its logits. Sequences neither busy nor the
    /// placement's are emptied: their cells are room for this prompt and its reply.
    pub(super) fn prepare_prompt(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        batch: &mut LlamaBatch,
        at: &Placement<'_>,
        job: &Job,
        tokens: &[LlamaToken],
    ) -> Result<PromptCache, String> {
        let (seq, busy) = (at.seq, at.busy);
        let own = if self.prefix_reuse {
            self.reusable(seq, tokens)
        } else {
            0
        };
        let mut keep = self.truncate(ctx, seq, own);
        let mut lent_by = None;
        // Another sequence may hold more of the prompt: its cells are shared, not copied.
        if let Some((donor, n)) = self.donor(seq, tokens, keep) {
            if ctx
                .copy_kv_cache_seq(donor, seq, Some(keep as u32), Some(n as u32))
                .is_ok()
            {
                self.cached[seq as usize].extend_from_slice(&tokens[keep..n]);
                self.exact[seq as usize] = n;
                keep = n;
                lent_by = busy.contains(&donor).then_some((donor, n));
            }
        }
        if at.needs_lent && lent_by.is_none() {
            return Err(
                "the model's context has no room for this prompt beside the replies in flight: \
                        sharing their cells failed; ask again, or lower the parallelism"
                    .to_string(),
            );
        }
        for idle in (0..self.cached.len() as i32).filter(|s| *s != seq && !busy.contains(s)) {
            let _ = ctx.clear_kv_cache_seq(Some(idle as u32), None, None);
            self.cached[idle as usize].clear();
            self.exact[idle as usize] = 0;
        }
        let mut cache = match self.prefix_store.clone() {
            // A saved state would replace the lent cells with cells of its own.
            Some(store) if !at.needs_lent => self.restore_saved_prefixes(ctx, batch, &store, seq, job, tokens)?,
            _ => PromptCache {
                read: keep,
                ..PromptCache::default()
            },
        };
        // A saved state loaded into the sequence replaced the lent cells with its own.
        cache.lent_by = lent_by.filter(|_| cache.read <= keep);
        let from = self.cached[seq as usize].len();
        self.evaluate(ctx, batch, seq, tokens, from, true)?;
        Ok(cache)
    }
}
