//! Run ids: `run-<unix ms, hex>-<random>`, so that they sort by time.

use crate::result::now_ms;

/// A new run id.
pub fn new_run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(now_ms());
    format!("run-{:011x}-{:04x}", now_ms(), h.finish() & 0xffff)
}
