//! What the embedded-model benches share: which model they run.

use std::path::PathBuf;

/// The model to bench: `PLANEXEC_BENCH_MODEL`, or the pulled small model.
/// `None` outside `cargo bench` (`cargo test` runs bench targets too, without `--bench`).
pub fn bench_model() -> Option<PathBuf> {
    if !std::env::args().any(|a| a == "--bench") {
        return None;
    }
    let path = std::env::var_os("PLANEXEC_BENCH_MODEL")
        .map(PathBuf::from)
        .or_else(|| planexec_local::weights::installed(&planexec_local::weights::SMALL))
        .expect("no model: run `planexec model pull small` or set PLANEXEC_BENCH_MODEL");
    Some(path)
}
