//! One owner per run: the process executing a run holds a lease on it in the
//! ledger and renews it at a heartbeat, so a second process cannot resume a
//! run that is really running, and a run left by a killed process can be taken
//! over once its lease expires. The heartbeat also reads the decisions people
//! made since the last beat: steering messages go to the run's [`Inbox`], a
//! cancel stops the run.

use std::sync::Arc;
use std::time::Duration;

use crate::cancel::CancelToken;
use crate::inbox::Inbox;
use crate::result::now_ms;
use crate::store::{Action, Lease, RunStore, StoreError};

/// The lease this process holds on a run, with its heartbeat.
pub(crate) struct Owner {
    store: Arc<dyn RunStore>,
    run_id: String,
    name: String,
    heartbeat: tokio::task::JoinHandle<()>,
}

/// Who may take a run's lease, and what the heartbeat feeds.
pub(crate) struct Claim {
    pub store: Arc<dyn RunStore>,
    pub run_id: String,
    pub ttl: Duration,
    pub inbox: Arc<Inbox>,
    pub stop: CancelToken,
    /// Decisions up to this number were read before the run started.
    pub seen: u64,
}

fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// A name for this process's lease: process id, host and a random part.
fn owner_name() -> String {
    let tail = super::id::new_run_id();
    format!("pid {} on {} ({})", std::process::id(), host(), &tail[tail.len() - 4..])
}

/// Whether `owner` names a process on this machine that is gone: its lease
/// need not be waited out. Only where `/proc` can tell; elsewhere the lease expires.
fn died_here(owner: &str) -> bool {
    let Some(rest) = owner.strip_prefix("pid ") else {
        return false;
    };
    let Some((pid, rest)) = rest.split_once(" on ") else {
        return false;
    };
    let same_host = rest.rsplit_once(" (").is_some_and(|(h, _)| h == host());
    let proc_fs = std::path::Path::new("/proc/self").exists();
    same_host && proc_fs && pid.parse::<u32>().is_ok() && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

impl Owner {
    /// Take the run's lease and start the heartbeat. `Ok(Err(holder))` when
    /// another process holds a lease that has not expired.
    pub async fn take(claim: Claim) -> Result<Result<Owner, Lease>, StoreError> {
        let name = owner_name();
        let lease = Lease {
            owner: name.clone(),
            expires_at: now_ms() + claim.ttl.as_millis() as u64,
        };
        if let Some(holder) = claim.store.take_lease(&claim.run_id, &lease, now_ms()).await? {
            if !died_here(&holder.owner) {
                return Ok(Err(holder));
            }
            // Its process is gone: taken over as if the lease had expired.
            let after_expiry = holder.expires_at + 1;
            if let Some(holder) = claim.store.take_lease(&claim.run_id, &lease, after_expiry).await? {
                return Ok(Err(holder));
            }
        }
        let owner = Owner {
            store: claim.store.clone(),
            run_id: claim.run_id.clone(),
            name: name.clone(),
            heartbeat: tokio::spawn(beat(claim, name)),
        };
        Ok(Ok(owner))
    }

    /// Stop the heartbeat and give the lease up.
    pub async fn release(self) {
        self.heartbeat.abort();
        if let Err(e) = self.store.release_lease(&self.run_id, &self.name).await {
            tracing::warn!("could not release the lease on run {}: {e}", self.run_id);
        }
    }
}

/// Every third of the lease's time: renew it, and read new decisions.
async fn beat(claim: Claim, name: String) {
    let every = (claim.ttl / 3).max(Duration::from_millis(20));
    let mut seen = claim.seen;
    loop {
        tokio::time::sleep(every).await;
        let lease = Lease {
            owner: name.clone(),
            expires_at: now_ms() + claim.ttl.as_millis() as u64,
        };
        match claim.store.take_lease(&claim.run_id, &lease, now_ms()).await {
            Ok(None) => {}
            Ok(Some(holder)) => {
                // Another process took the run over (this one stalled past its
                // lease): two owners must not go on, so this one stops.
                tracing::error!(
                    "run {}: the lease was taken over by {}; stopping here",
                    claim.run_id,
                    holder.owner
                );
                claim.inbox.cancelled(&holder.owner);
                claim.stop.cancel();
                return;
            }
            Err(e) => tracing::warn!("could not renew the lease on run {}: {e}", claim.run_id),
        }
        match claim.store.load_decisions(&claim.run_id).await {
            Ok(decisions) => {
                let fresh: Vec<_> = decisions.into_iter().filter(|d| d.seq > seen).collect();
                for d in fresh {
                    seen = d.seq;
                    match d.action {
                        Action::Steer { message } => claim.inbox.steer(d.seq, message),
                        Action::Cancel => {
                            claim.inbox.cancelled(&d.by);
                            claim.stop.cancel();
                        }
                        _ => {}
                    }
                }
            }
            Err(e) => tracing::warn!("could not read the decisions of run {}: {e}", claim.run_id),
        }
    }
}
