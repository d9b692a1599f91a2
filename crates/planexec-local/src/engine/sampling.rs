//! Choosing the next token from a position's logits: greedy (repeatable) or
//! seeded temperature sampling, under an optional grammar.

use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

use super::job::Sampling;

/// Tokens a sampled choice is drawn from (the most likely ones the grammar allows).
const TOP_K: usize = 40;

/// Greedy choice under an optional grammar. Checking the unconstrained best token
/// first, and masking the whole vocabulary (~150k tokens) only when the grammar
/// rejects it, makes constrained decoding nearly as fast as free decoding.
/// `None` when the grammar allows no token at all (accepting one anyway would abort llama.cpp).
pub(super) fn next_token(
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
pub(super) struct Sampler {
    temperature: f32,
    rng: u64,
}

impl Sampler {
    pub(super) fn new(sampling: Sampling) -> Sampler {
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
