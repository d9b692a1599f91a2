//! The shape of the MCP adapter, checked on its source as every crate's is: no
//! import circle between files (a module's `mod.rs` is a file like any other)
//! and no function longer than a screen.

planexec_testkit::architecture_tests!();
