//! Requests in flight together share decodes on the real embedded model:
//! each gets its own KV cache sequence, and each reply is the one it gets
//! when asked alone (greedy decoding), so batching changes the time, not the text.

mod common;

use planexec::llm::{ChatModel, ChatRequest, Message};
use planexec_local::{EngineConfig, LocalModel};

/// Long enough (well over 16 tokens, one cell of the engine's evaluation grid)
/// that the second request can borrow the first one's cells for it.
const SYSTEM: &str =
    "You are a terse assistant inside a test of a language model runtime that runs two requests at once. \
Answer in a few words, with no preamble, no explanation and no closing remark. When asked for a list, give only \
its items, separated as the question asks, in their usual order, and stop after the last one.";

fn question(text: &str) -> ChatRequest {
    let mut request = ChatRequest::new(
        planexec::Role::Executor,
        "local",
        vec![Message::system(SYSTEM), Message::user(text)],
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

async fn answer(model: &LocalModel, text: &str) -> String {
    model.chat(question(text)).await.unwrap().content.unwrap_or_default()
}

#[test]
fn two_requests_in_flight_share_decodes_and_get_the_replies_they_get_alone() {
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
