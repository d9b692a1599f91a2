//! Steering: a message a person sent a running (or paused) run. At the loop's
//! next decision point the replanner revises the steps not yet run to follow
//! it; the revision is recorded as a plan version whose reason quotes the
//! message, and the ledger notes which message it read, so a resumed run does
//! not apply it twice. A steering revision does not count against the replan
//! bound: it is the user's, not a failure's.

use crate::events::Event;
use crate::replanner::ReplanTrigger;
use crate::run::{Exit, Run};
use crate::store::{Action, Decision};

/// On a durable engine, move the steering messages it kept since the last
/// time into the run's inbox (elsewhere the ledger's heartbeat fills it).
pub(crate) async fn collect(run: &mut Run) {
    let Some(engine) = run.ctx.setting.engine.clone() else {
        return;
    };
    for message in engine.steering().await.unwrap_or_default() {
        run.steered_on_engine += 1;
        run.ctx.control.inbox.steer(run.steered_on_engine, message);
    }
}

/// Apply every steering message waiting in the run's inbox (or, on a
/// durable engine, kept by it), oldest first.
pub(crate) async fn apply(run: &mut Run) -> Result<(), Exit> {
    collect(run).await;
    while let Some((seq, message)) = run.ctx.control.inbox.next_steer() {
        let current = run.plan().clone();
        let completed = run.completed(&current);
        let trigger = ReplanTrigger::Steered(&message);
        let revised = super::drive::ask_replanner(run, &current, &completed, trigger)
            .await?
            .map_err(|e| Exit::failed(format!("revising the plan as steered (\"{message}\") failed: {e}")))?;
        run.adopt(revised, format!("steered: {message}")).await;
        if let Some(reason) = run.plan().infeasible.clone() {
            return Err(Exit::infeasible(format!(
                "steered with \"{message}\", the replanner found the task infeasible: {reason}"
            )));
        }
        let applied = Action::SteerApplied {
            steer: seq,
            version: run.version,
        };
        run.ctx
            .recording
            .ledger
            .decision(&Decision::new("planexec", applied))
            .await;
        run.ctx.recording.events.emit(Event::Steered {
            message,
            version: run.version,
        });
    }
    Ok(())
}
