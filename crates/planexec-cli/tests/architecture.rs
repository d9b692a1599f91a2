//! The shape of the command-line program, checked on its source as the core's is: no import
//! circle between files (a module's `mod.rs` is a file like any other) and no
//! function longer than a screen.

use std::path::Path;

use planexec_testkit::structure::{check_no_circles, long_functions};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

#[test]
fn no_import_circles_between_files() {
    check_no_circles(Path::new(SRC)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn no_function_is_longer_than_a_screen() {
    let long = long_functions(Path::new(SRC), 120);
    assert!(long.is_empty(), "functions over 120 lines: {long:?}");
}
