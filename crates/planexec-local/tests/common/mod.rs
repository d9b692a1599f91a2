//! What the tests on the real embedded model share.

use std::path::PathBuf;

/// The model the tests run: `PLANEXEC_TEST_MODEL`, or the pulled small model.
pub fn model() -> PathBuf {
    if let Some(p) = std::env::var_os("PLANEXEC_TEST_MODEL") {
        return PathBuf::from(p);
    }
    planexec_local::weights::installed(&planexec_local::weights::SMALL)
        .expect("the small model is not installed: run `cargo run -p planexec-cli -- model pull small` (or set PLANEXEC_TEST_MODEL)")
}
