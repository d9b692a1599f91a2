//! The shape of the core, checked on its source so that it stays easy to see:
//!
//! - no import circles between files (a module's `mod.rs` is a file like any
//!   other; the graph is `planexec_testkit::structure`'s, shared by every crate);
//! - no function longer than a screen (120 lines) outside tests;
//! - the shared DAG loop fits on one screen of its own (80 lines);
//! - no `macro_rules!` in the run loop or the strategies (early exits are
//!   values, not macros with a hidden `return`);
//! - `Strategy` variants are named only in `strategy/`: the roles ask the
//!   strategy's profile instead.

use std::path::Path;

use planexec_testkit::structure::{check_no_circles, code, long_functions, source_files, ImportGraph};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

#[test]
fn no_import_circles_between_files() {
    let files = check_no_circles(Path::new(SRC)).unwrap_or_else(|e| panic!("{e}"));
    assert!(files > 80, "the check read the whole crate ({files} files)");
    // The check sees what it should: the roles use the context, the strategies
    // the run, a re-exported name is followed to the file that defines it, and
    // the tools stand below the plan, using only the reference syntax.
    let graph = ImportGraph::of_crate(Path::new(SRC));
    assert!(graph.imports("planner.rs", "context.rs"));
    assert!(graph.imports("strategy/dag.rs", "run/mod.rs"));
    assert!(graph.imports("policy.rs", "strategy/kind.rs"));
    assert!(graph.imports("tools/registry.rs", "refs.rs"));
    assert!(!graph.imports("tools/registry.rs", "plan/mod.rs"));
    assert!(!graph.imports("refs.rs", "plan/types.rs"));
}

#[test]
fn no_function_is_longer_than_a_screen() {
    let long = long_functions(Path::new(SRC), 120);
    assert!(long.is_empty(), "functions over 120 lines: {long:?}");
}

#[test]
fn the_shared_dag_loop_fits_on_one_screen() {
    let text = std::fs::read_to_string(Path::new(SRC).join("strategy/dag.rs")).unwrap();
    let start = text.find("pub(crate) async fn drive(").expect("dag::drive");
    let body = &text[start..];
    let lines = body.lines().position(|l| l == "}").expect("its end") + 1;
    assert!(lines <= 80, "dag::drive is {lines} lines");
}

#[test]
fn the_run_loop_and_the_strategies_use_no_macros_and_only_strategy_names_its_variants() {
    let variants = ["PlanExecute", "ReplanEachStep", "Rewoo", "Compiler", "React"];
    for (module, file, text) in source_files(Path::new(SRC)) {
        let code = code(&text);
        let in_loop = matches!(module.first().map(String::as_str), Some("run" | "strategy")) || file == "agent.rs";
        assert!(!(in_loop && code.contains("macro_rules!")), "{file} defines a macro");
        if module.first().map(String::as_str) != Some("strategy") {
            for v in variants {
                assert!(
                    !code.contains(&format!("Strategy::{v}")),
                    "{file} names Strategy::{v}: ask the strategy's profile instead"
                );
            }
        }
    }
}

#[test]
fn the_run_context_is_four_parts_and_a_role_takes_only_the_parts_it_uses() {
    let context = std::fs::read_to_string(Path::new(SRC).join("context.rs")).unwrap();
    let start = context.find("pub(crate) struct RunContext {").expect("RunContext");
    let body = &context[start..start + context[start..].find("\n}").expect("its end")];
    let fields = body.lines().filter(|l| l.trim_start().starts_with("pub ")).count();
    assert!(fields <= 4, "RunContext has {fields} fields");
    // Roles that never confirm, steer or record a step take the parts, not the whole.
    for file in [
        "synthesizer.rs",
        "replanner.rs",
        "executor/expected.rs",
        "strategy/react.rs",
    ] {
        let text = code(&std::fs::read_to_string(Path::new(SRC).join(file)).unwrap());
        assert!(
            !text.contains("ctx: &RunContext"),
            "{file} takes the whole RunContext: pass the parts it uses"
        );
    }
}
