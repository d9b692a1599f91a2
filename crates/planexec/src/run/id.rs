//! Run ids: `run-<unix ms, hex>-<4 hex digits>`, so that they sort by time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::result::now_ms;

/// A new run id. The last part starts at a random number in each process
/// and counts up, so ids made in the same millisecond by one process (a
/// server or a bench starting many runs at once) never collide, and ids of
/// different processes rarely do.
pub fn new_run_id() -> String {
    static START: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let start = *START.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(now_ms());
        h.write_u32(std::process::id());
        h.finish()
    });
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("run-{:011x}-{:04x}", now_ms(), start.wrapping_add(n) & 0xffff)
}

#[cfg(test)]
mod tests {
    use super::new_run_id;

    #[test]
    fn ids_made_together_in_one_process_differ() {
        let mut ids: Vec<String> = (0..1000).map(|_| new_run_id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 1000);
    }
}
