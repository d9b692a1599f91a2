//! The structure check on a crate laid out on disk with a deliberate circle:
//! what every crate's `tests/architecture.rs` relies on to fail on a new one.

use std::path::Path;

use planexec_testkit::structure::{check_no_circles, ImportGraph};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/circle/src");

#[test]
fn a_deliberate_circle_in_a_fixture_crate_fails_the_check_and_is_named() {
    let graph = ImportGraph::of_crate(Path::new(FIXTURE));
    assert_eq!(graph.len(), 3);
    assert!(graph.imports("plan.rs", "tools.rs"));
    assert!(graph.imports("tools.rs", "plan.rs"));
    let error = check_no_circles(Path::new(FIXTURE)).expect_err("the fixture has a circle");
    assert!(error.contains("2 files: plan.rs -> tools.rs -> plan.rs"), "{error}");
    assert!(error.contains("tools.rs -> plan.rs"), "{error}");
}

#[test]
fn this_crate_has_no_circle() {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    check_no_circles(src).unwrap_or_else(|e| panic!("{e}"));
}
