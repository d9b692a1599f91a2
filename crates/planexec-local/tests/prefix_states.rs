//! Saved system-message states on the real embedded model: the first process
//! evaluates and saves the state, the next loads it instead of evaluating, and
//! a corrupted or stale state file is detected, deleted and rebuilt, with the
//! same reply every time.

mod common;

use std::path::{Path, PathBuf};

use planexec::llm::{ChatModel, ChatRequest, Message};
use planexec_local::{EngineConfig, EngineStats, LocalModel};

/// Longer than one cell of the engine's 16-token grid (states end on it).
const SYSTEM: &str =
    "You are a terse assistant inside a test of saved prompt states. You answer with one word, in lower case, \
and nothing else: no punctuation, no explanation, no greeting and no closing remark. The questions are about \
the rainbow. Colours of the rainbow, in their order from the outside of the bow to the inside: red, orange, \
yellow, green, blue, indigo, violet.";

/// A fresh model (as a new process would load it) asked the rainbow question:
/// its reply, the call's cache usage and the engine's counters.
async fn ask(states: &Path, system: &str) -> (String, planexec::llm::TokenUsage, EngineStats) {
    ask_with(states, system, "Which colour of the rainbow comes first?").await
}

/// A fresh model asked `question` under `system`.
async fn ask_with(states: &Path, system: &str, question: &str) -> (String, planexec::llm::TokenUsage, EngineStats) {
    let mut config = EngineConfig::new(common::model());
    config.prefix_states = Some(states.to_path_buf());
    let model = LocalModel::load(config).unwrap();
    let request = ChatRequest::new(
        planexec::Role::Executor,
        "local",
        vec![Message::system(system), Message::user(question)],
    );
    let reply = model.chat(request).await.unwrap();
    (reply.content.unwrap_or_default(), reply.usage, model.stats())
}

fn state_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "state"))
        .collect();
    files.sort();
    files
}

#[test]
fn a_saved_prefix_is_loaded_and_a_corrupted_or_stale_one_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let states = dir.path().join("states");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        // First process: evaluated and saved.
        let (first, usage, stats) = ask(&states, SYSTEM).await;
        assert_eq!((stats.prefix_saves, stats.prefix_loads), (1, 0), "{stats:?}");
        assert!(
            usage.cache_write_tokens > 20 && usage.cache_read_tokens == 0,
            "{usage:?}"
        );
        let files = state_files(&states);
        assert_eq!(files.len(), 1, "{files:?}");
        let state = files[0].clone();

        // Next process: loaded, not evaluated; the same reply.
        let (again, usage, stats) = ask(&states, SYSTEM).await;
        assert_eq!((stats.prefix_loads, stats.prefix_saves), (1, 0), "{stats:?}");
        assert!(usage.cache_read_tokens > 20, "{usage:?}");
        assert_eq!(
            stats.evaluated_prompt_tokens,
            usage.prompt_tokens - usage.cache_read_tokens,
            "{stats:?}"
        );
        assert_eq!(again, first);

        // Corrupted (bytes flipped past the header): detected, deleted, rebuilt.
        let mut bytes = std::fs::read(&state).unwrap();
        let middle = bytes.len() / 2;
        for b in &mut bytes[middle..middle + 64] {
            *b ^= 0x5a;
        }
        std::fs::write(&state, &bytes).unwrap();
        let (rebuilt, _, stats) = ask(&states, SYSTEM).await;
        assert_eq!(
            (stats.prefix_rebuilds, stats.prefix_saves, stats.prefix_loads),
            (1, 1, 0),
            "{stats:?}"
        );
        assert_eq!(rebuilt, first);
        let (_, _, stats) = ask(&states, SYSTEM).await;
        assert_eq!(stats.prefix_loads, 1, "the rebuilt state loads: {stats:?}");

        // Stale: a state of other tokens under this prefix's name (with a
        // matching checksum, so only the tokens give it away).
        let french = format!("You answer in French. {SYSTEM}");
        let (_, _, _) = ask(&states, &french).await;
        let other = state_files(&states).into_iter().find(|p| *p != state).unwrap();
        std::fs::copy(&other, &state).unwrap();
        std::fs::copy(other.with_extension("sha256"), state.with_extension("sha256")).unwrap();
        let (stale, _, stats) = ask(&states, SYSTEM).await;
        assert_eq!((stats.prefix_rebuilds, stats.prefix_saves), (1, 1), "{stats:?}");
        assert_eq!(stale, first);
    });
}

#[test]
fn a_prompt_another_process_shared_most_of_gets_a_state_at_that_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let states = dir.path().join("states");
    // A long fixed head in the user message (as the planner's instructions
    // are), then what changes from call to call.
    let head = "Read the question below with care. It is about the rainbow, whose colours are listed in the \
system message in their order; answer with the colour only, in lower case, with no punctuation, no \
explanation and nothing before or after it. Questions:";
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        // First: only the system message is saved; the prompt is remembered.
        let (_, _, stats) = ask_with(&states, SYSTEM, &format!("{head} Which colour comes first?")).await;
        assert_eq!((stats.prefix_saves, stats.prefix_loads), (1, 0), "{stats:?}");
        // Second, another question after the same head: the shared part is saved too.
        let (_, usage, stats) = ask_with(&states, SYSTEM, &format!("{head} Which colour comes last?")).await;
        assert_eq!((stats.prefix_loads, stats.prefix_saves), (1, 1), "{stats:?}");
        let shared = usage.cache_write_tokens;
        // Third, the second question again with more after it: it shares a
        // little more with the second prompt than the saved state holds, not
        // enough for another state, so the longest saved one it starts with is loaded.
        let (_, usage, stats) = ask_with(&states, SYSTEM, &format!("{head} Which colour comes last? Be brief.")).await;
        assert_eq!((stats.prefix_loads, stats.prefix_saves), (1, 0), "{stats:?}");
        assert_eq!(usage.cache_read_tokens, shared, "{usage:?}");
        // States end on the 16-token grid: at most one cell before the question.
        assert!(
            usage.prompt_tokens - usage.cache_read_tokens < 16 + 20,
            "only the question is evaluated: {usage:?}"
        );
    });
}

#[test]
fn a_prepared_system_prompt_is_where_the_next_process_starts_and_nothing_is_generated() {
    let dir = tempfile::tempdir().unwrap();
    let states = dir.path().join("states");
    let load = || {
        let mut config = EngineConfig::new(common::model());
        config.prefix_states = Some(states.clone());
        LocalModel::load(config).unwrap()
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        // `model pull`: the system message is evaluated and saved; no reply.
        let model = load();
        let prepared = model.prepare(SYSTEM).await.unwrap();
        assert!(prepared.evaluated_tokens > 20, "{prepared:?}");
        assert_eq!(prepared.kept_tokens, prepared.evaluated_tokens, "{prepared:?}");
        let stats = model.stats();
        assert_eq!((stats.prefix_saves, stats.generated_tokens), (1, 0), "{stats:?}");
        assert_eq!(state_files(&states).len(), 1);
        // Asked again in the same process: its cache holds it already.
        let again = model.prepare(SYSTEM).await.unwrap();
        assert_eq!((again.kept_tokens, again.evaluated_tokens), (prepared.kept_tokens, 0));
        drop(model);

        // The next process's first call loads it instead of evaluating it,
        // and replies as a process that evaluated it would.
        let (reply, usage, stats) = ask(&states, SYSTEM).await;
        assert_eq!((stats.prefix_loads, stats.prefix_saves), (1, 0), "{stats:?}");
        assert_eq!(usage.cache_read_tokens, prepared.kept_tokens, "{usage:?}");
        let elsewhere = dir.path().join("elsewhere");
        let (cold, _, _) = ask(&elsewhere, SYSTEM).await;
        assert_eq!(reply, cold);

        // Preparing again in a new process loads the state: nothing to evaluate.
        let model = load();
        let loaded = model.prepare(SYSTEM).await.unwrap();
        assert_eq!((loaded.kept_tokens, loaded.evaluated_tokens), (prepared.kept_tokens, 0));
        assert_eq!(model.stats().prefix_loads, 1);
    });
}
