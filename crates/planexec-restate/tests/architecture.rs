//! The shape of the Restate crate, checked on its source as every crate's is:
//! no import circle between files and no function longer than a screen.

planexec_testkit::architecture_tests!();
