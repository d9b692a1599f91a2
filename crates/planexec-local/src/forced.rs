//! Text the output grammar forces, found without asking the model.
//!
//! Much of a structured reply is fixed by its grammar: in a plan, after a
//! step's description closes, `, "tool": "` can only follow. Sampling those
//! tokens one by one costs a full decode each (most of a local plan's time),
//! though the model has no choice in them. [`ForcedText`] probes the grammar
//! with one token per printable character: while exactly one character is
//! allowed, that character is forced. The engine then feeds the forced run to
//! the model in one batch, which costs little more than one token, all but its
//! last token: the model writes that one itself, so that it may join it with
//! what it chooses next as its own tokenizer would (`": "` is followed by
//! `" null"` or `" \""` as one token, never by a lone space).

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

/// The longest forced run taken at once (the batch it is decoded in must hold it).
pub const MAX_RUN: usize = 96;

/// One single-character token per probe character, and end-of-generation.
pub struct ForcedText {
    probes: Vec<(char, LlamaToken)>,
    end: LlamaToken,
}

/// What the grammar allows next, as far as the probes can tell.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// The one character allowed, and its probe token.
    Char(char, LlamaToken),
    End,
    Choice,
}

impl ForcedText {
    /// Probes for the printable ASCII characters and newline, plus two
    /// non-ASCII ones: where the grammar allows any character (inside a
    /// string) several probes pass, so nothing is taken as forced.
    pub fn new(model: &LlamaModel) -> ForcedText {
        let vocab = model.vocab();
        let probes = (' '..='~')
            .chain(['\n', 'é', '中'])
            .filter_map(|c| match vocab.tokenize(c.to_string().as_bytes(), false, false)[..] {
                [token] => Some((c, token)),
                _ => None,
            })
            .collect();
        ForcedText {
            probes,
            end: vocab.eos(),
        }
    }

    fn next(&self, grammar: &mut LlamaSampler) -> Next {
        let mut candidates = LlamaTokenDataArray::new(
            self.probes
                .iter()
                .map(|(_, t)| *t)
                .chain([self.end])
                .map(|t| LlamaTokenData::new(t, 0.0, 0.0))
                .collect(),
            false,
        );
        grammar.apply(&mut candidates);
        let mut allowed = candidates.data.iter().filter(|d| d.logit().is_finite());
        match (allowed.next(), allowed.next()) {
            (Some(only), None) if only.id() == self.end => Next::End,
            (Some(only), None) => self
                .probes
                .iter()
                .find(|(_, t)| *t == only.id())
                .map_or(Next::Choice, |(c, t)| Next::Char(*c, *t)),
            _ => Next::Choice,
        }
    }

    /// The text the grammar forces from here (at most `max` characters), and
    /// whether the grammar then allows only the end of the reply. `grammar`
    /// itself is left as it is: the caller accepts what it feeds the model.
    pub fn peek(&self, grammar: &LlamaSampler, max: usize) -> (String, bool) {
        let mut probe = grammar.clone();
        let mut text = String::new();
        while text.len() < max {
            match self.next(&mut probe) {
                Next::Char(c, token) => {
                    probe.accept(token);
                    text.push(c);
                }
                Next::End => return (text, true),
                Next::Choice => break,
            }
        }
        (text, false)
    }
}
