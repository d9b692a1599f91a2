//! Requests in flight together share decodes on the real embedded model:
//! each gets its own KV cache sequence, and each reply is the one it gets
//! when asked alone (greedy decoding), so batching changes the time, not the text.

mod common;

use std::sync::Mutex;

use planexec::llm::{ChatModel, ChatRequest, Message};
use planexec_local::{EngineConfig, LocalModel};

/// Long enough (well over 16 tokens, one cell of the engine's evaluation grid)
/// that the second request can borrow the first one's cells for it.
const SYSTEM: &str =
    "You are a terse assistant inside a test of a language model runtime that runs two requests at once. \
Answer in a few words, with no preamble, no explanation and no closing remark. When asked for a list, give only \
its items, separated as the question asks, in their usual order, and stop after the last one.";

/// The model runs one test at a time: two at once would share the two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn question(text: &str) -> ChatRequest {
    question_under(SYSTEM, text)
}

fn question_under(system: &str, text: &str) -> ChatRequest {
    let mut request = ChatRequest::new(
        planexec::Role::Executor,
        "local",
        vec![Message::system(system), Message::user(text)],
    );
    request.max_tokens = Some(48);
    request
}

fn model(sequences: u32) -> LocalModel {
    let mut config = EngineConfig::new(common::model());
    config.prefix_states = None;
    config.sequences = sequences;
    LocalModel::load(config).unwrap()
}

/// A model with a context of `n_ctx` tokens that lends a prompt the cells
/// of one in flight when `lends` (prefix reuse).
fn small_context_model(n_ctx: u32, lends: bool) -> LocalModel {
    let mut config = EngineConfig::new(common::model());
    config.prefix_states = None;
    config.n_ctx = n_ctx;
    config.prefix_reuse = lends;
    LocalModel::load(config).unwrap()
}

async fn answer(model: &LocalModel, text: &str) -> String {
    model.chat(question(text)).await.unwrap().content.unwrap_or_default()
}

#[test]
fn two_requests_in_flight_share_decodes_and_get_the_replies_they_get_alone() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let questions = [
        "Count from 1 to 15, separated by commas.",
        "List the days of the week, separated by commas.",
    ];
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let alone = model(1);
        let mut expected = Vec::new();
        for q in questions {
            expected.push(answer(&alone, q).await);
        }
        assert_eq!(alone.stats().shared_decodes, 0);
        drop(alone);

        let together = model(4);
        let (a, b) = tokio::join!(answer(&together, questions[0]), answer(&together, questions[1]));
        let stats = together.stats();
        assert_eq!(stats.most_in_flight, 2, "{stats:?}");
        assert!(stats.shared_decodes > 10, "{stats:?}");
        assert_eq!([a, b], [expected[0].clone(), expected[1].clone()]);
        assert!(
            expected[0].contains("14") && expected[1].contains("Wednesday"),
            "{expected:?}"
        );
        // The second prompt shares the first one's system message: its cells
        // are lent, not evaluated again.
        assert!(stats.evaluated_prompt_tokens < stats.prompt_tokens - 10, "{stats:?}");
    });
}

/// Two prompts of ~650 tokens under one long system message, each with room
/// for a 48-token reply, in a context of 1,024 tokens: side by side they fit
/// only because the second borrows the first one's cells for the system
/// message, which are then in the cache once.
#[test]
fn prompts_that_fit_the_context_together_only_by_sharing_cells_run_together_and_others_wait() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let shelves: Vec<String> = (1..=60)
        .map(|i| format!("shelf {i} holds box {}", i * 7 % 61))
        .collect();
    let system = format!(
        "{SYSTEM} Reference data, not needed for the questions you will be asked: {}.",
        shelves.join("; ")
    );
    let questions = [
        "Count from 1 to 15, separated by commas.",
        "List the days of the week, separated by commas.",
    ];
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        for lends in [true, false] {
            let model = small_context_model(1024, lends);
            let (a, b) = tokio::join!(
                model.chat(question_under(&system, questions[0])),
                model.chat(question_under(&system, questions[1]))
            );
            let (a, b) = (a.unwrap(), b.unwrap());
            let stats = model.stats();
            let prompt = a.usage.prompt_tokens;
            assert!(
                (2 * (prompt + 48) > 1024) && prompt + 48 <= 1024,
                "each prompt must fit alone but not twice over: {prompt} tokens"
            );
            // Lent cells: both in flight. None lent: the second waits its turn.
            let in_flight = if lends { 2 } else { 1 };
            assert_eq!(stats.most_in_flight, in_flight, "lends: {lends}, {stats:?}");
            assert_eq!(stats.shared_decodes > 10, lends, "lends: {lends}, {stats:?}");
            let (a, b) = (a.content.unwrap_or_default(), b.content.unwrap_or_default());
            assert!(
                a.contains("14") && b.contains("Wednesday"),
                "lends: {lends}: {a:?} {b:?}"
            );
        }
    });
}
