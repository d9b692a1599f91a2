//! What a command ends with: its exit code, or [`BadInput`], a problem with
//! what the user asked for (exit code 2), said in words that say what to do.

/// Exit codes (documented in docs/configuration.md).
pub const EXIT_OK: u8 = 0;
pub const EXIT_RUN_FAILED: u8 = 1;
pub const EXIT_BAD_INPUT: u8 = 2;
pub const EXIT_INTERRUPTED: u8 = 130;

/// A problem with what the user asked for: exit code 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl From<String> for BadInput {
    fn from(s: String) -> BadInput {
        BadInput(s)
    }
}
