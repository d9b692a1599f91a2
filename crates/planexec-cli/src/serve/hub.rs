//! The events of the runs this server executes, kept per run and numbered, so
//! a browser that reconnects with `Last-Event-ID` gets exactly what it missed,
//! then the live stream.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::broadcast;

/// An event with its number within its run.
type Numbered = (u64, Value);

/// One run's events so far, and a channel for the ones to come.
struct RunEvents {
    log: Vec<Numbered>,
    live: broadcast::Sender<Numbered>,
}

#[derive(Default)]
pub struct Hub {
    runs: Mutex<HashMap<String, RunEvents>>,
}

impl Hub {
    /// Record an event of `run_id` and send it to the streams open on it.
    pub fn publish(&self, run_id: &str, event: Value) {
        let mut runs = self.runs.lock().unwrap();
        let entry = runs.entry(run_id.to_string()).or_insert_with(|| RunEvents {
            log: Vec::new(),
            live: broadcast::channel(1024).0,
        });
        let id = entry.log.len() as u64 + 1;
        entry.log.push((id, event.clone()));
        let _ = entry.live.send((id, event));
    }

    /// The events after `after`, and a receiver for later ones (subscribed
    /// under the same lock, so none falls between the two).
    pub fn follow(&self, run_id: &str, after: u64) -> (Vec<Numbered>, broadcast::Receiver<Numbered>) {
        let mut runs = self.runs.lock().unwrap();
        let entry = runs.entry(run_id.to_string()).or_insert_with(|| RunEvents {
            log: Vec::new(),
            live: broadcast::channel(1024).0,
        });
        let missed = entry.log.iter().filter(|(id, _)| *id > after).cloned().collect();
        (missed, entry.live.subscribe())
    }
}
