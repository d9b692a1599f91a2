//! `cargo bench -p planexec-local --bench decode`
//!
//! What decoding several replies together costs on this machine, beside one:
//! one llama.cpp decode of N tokens, each in its own sequence (as the engine
//! decodes N replies in flight), against a decode of one, for N = 1 to 8, and
//! prompt evaluation in batches of 16, 64 and 256 tokens. Two parallel steps
//! can cost little more than one only where the N = 2 figure is near 1x. The
//! model is the pulled `small` one, or `PLANEXEC_BENCH_MODEL=FILE` (any GGUF:
//! run it on other weight formats to compare their kernels). Prints medians;
//! asserts nothing about time.

mod common;

use std::num::NonZeroU32;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

/// Decodes timed per row count, after one untimed.
const ROUNDS: usize = 24;
const SEQUENCES: i32 = 8;

/// Median milliseconds of one decode of `n` tokens, one in each of the first
/// `n` sequences (which hold the same prompt of `prompt_len` tokens).
fn decode_ms(ctx: &mut LlamaContext<'_>, batch: &mut LlamaBatch, token: LlamaToken, n: i32, prompt_len: i32) -> f64 {
    let mut times = Vec::with_capacity(ROUNDS);
    for round in 0..=ROUNDS as i32 {
        batch.clear();
        for seq in 0..n {
            batch.add(token, prompt_len + round, &[seq], true).expect("batch");
        }
        let started = Instant::now();
        ctx.decode(batch).expect("decode");
        if round > 0 {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    for seq in 0..SEQUENCES {
        let _ = ctx.clear_kv_cache_seq(Some(seq as u32), Some(prompt_len as u32), None);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Tokens per second evaluating `tokens` into a spare sequence in batches of `size`.
fn prompt_tps(ctx: &mut LlamaContext<'_>, batch: &mut LlamaBatch, tokens: &[LlamaToken], size: usize) -> f64 {
    let seq = SEQUENCES - 1;
    let _ = ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
    let started = Instant::now();
    for (c, chunk) in tokens.chunks(size).enumerate() {
        batch.clear();
        for (i, t) in chunk.iter().enumerate() {
            let pos = (c * size + i) as i32;
            batch.add(*t, pos, &[seq], i + 1 == chunk.len()).expect("batch");
        }
        ctx.decode(batch).expect("decode");
    }
    tokens.len() as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let Some(path) = common::bench_model() else {
        return;
    };
    llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default().with_logs_enabled(false));
    let backend = LlamaBackend::init().expect("llama.cpp");
    let model = LlamaModel::load_from_file(&backend, &path, &LlamaModelParams::default()).expect("load the model");
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get() as i32);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(4096))
        .with_n_batch(512)
        .with_n_ubatch(512)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        .with_n_seq_max(SEQUENCES as u32)
        .with_kv_unified(true);
    let mut ctx = model.new_context(&backend, params).expect("a context");
    let text = "You are one part of a plan-and-execute agent; the steps of a plan run in parallel. ".repeat(160);
    let all = model.vocab().tokenize(text.as_bytes(), true, false);
    let mut batch = LlamaBatch::new(512, SEQUENCES);
    println!("model: {} ({threads} threads)", path.display());
    let short = &all[..256.min(all.len())];
    for size in [16, 64, 256] {
        println!(
            "prompt evaluation, batches of {size:>3}  {:>8.1} tok/s",
            prompt_tps(&mut ctx, &mut batch, short, size)
        );
    }
    decodes(&mut ctx, &mut batch, short);
    // A step's prompt is ~2,700 tokens: every decode then also attends over
    // them, once per sequence, though they share the cells.
    let long = &all[..2048.min(all.len())];
    prompt_tps(&mut ctx, &mut batch, long, 256);
    decodes(&mut ctx, &mut batch, long);
}

/// Every sequence holds `prompt`; each decode adds one token to n of them.
fn decodes(ctx: &mut LlamaContext<'_>, batch: &mut LlamaBatch, prompt: &[LlamaToken]) {
    let prompt_len = prompt.len() as i32;
    for seq in 0..SEQUENCES - 1 {
        let _ = ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
        ctx.copy_kv_cache_seq(SEQUENCES - 1, seq, None, None).expect("copy");
    }
    let one = decode_ms(ctx, batch, prompt[1], 1, prompt_len);
    println!("after a prompt of {prompt_len} tokens:");
    println!("  one decode of 1 token                {one:>8.1} ms");
    for n in [2, 3, 4, 8] {
        let ms = decode_ms(ctx, batch, prompt[1], n, prompt_len);
        println!(
            "  one decode of {n} tokens in {n} sequences {:>6.2}x one  ({ms:.1} ms)",
            ms / one
        );
    }
}
