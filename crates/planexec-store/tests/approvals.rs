//! Runs that wait for people, over real ledgers (SQLite files and PostgreSQL):
//! a run paused for approval, decided on by "another process" (a second agent
//! over the same ledger), then resumed; rejected; edited; steered while it
//! runs; and one owner per run, with leases that expire.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use planexec::report::RunStatus;
use planexec::store::{Action, Lease, Waiting};
use planexec::{
    Agent, ApproveLater, Approver, AutoApprove, CancelToken, Mode, Plan, ResumeError, ResumeOptions, RunOptions,
    RunStore, StepStatus,
};
use planexec_store::SqlStore;
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::json;

fn two_step_plan() -> serde_json::Value {
    json!({"goal": "count", "steps": [
        step("s1", "fetch", "a", &[]),
        step("s2", "append", "{{s1}}", &["s1"]),
    ]})
}

fn server() -> ScriptedServer {
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&two_step_plan()));
    server.role("synthesizer").always(Reply::content("appended fetch(a)"));
    server
}

/// A SQLite ledger in `dir`, and a PostgreSQL one when a server is configured.
async fn ledgers(dir: &std::path::Path) -> Vec<Arc<dyn RunStore>> {
    let db = dir.join("ledger.db");
    let mut stores: Vec<Arc<dyn RunStore>> = vec![Arc::new(SqlStore::open(db.to_str().unwrap()).await.unwrap())];
    if let Some(pg) = postgres_database().await {
        stores.push(Arc::new(SqlStore::open(&pg.url).await.unwrap()));
    }
    stores
}

/// An agent over `store` whose counting tools keep their evidence in `work`
/// and take `sleep_ms` per call, in `mode`, deciding with `approver`.
fn agent_with(
    server: &ScriptedServer,
    work: &Path,
    sleep_ms: u64,
    store: &Arc<dyn RunStore>,
    mode: Mode,
    approver: Arc<dyn Approver>,
) -> Agent {
    agent_builder(
        &server.base_url(),
        "k",
        counting_tools(work, Duration::from_millis(sleep_ms), None),
        store.clone(),
    )
    .options(options(mode))
    .approver(approver)
    .build()
}

fn options(mode: Mode) -> RunOptions {
    RunOptions {
        mode,
        retry_backoff: Duration::from_millis(5),
        tool_retries: 0,
        max_steps: 12,
        lease_ttl: Duration::from_millis(300),
        ..RunOptions::default()
    }
}

#[tokio::test]
async fn a_paused_run_is_approved_from_another_process_and_resumed_to_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    for store in ledgers(dir.path()).await {
        let work = tempfile::tempdir().unwrap();
        let later = agent_with(&server, work.path(), 5, &store, Mode::Auto, Arc::new(ApproveLater));
        let paused = later.run("count things").await;
        assert_eq!(paused.status, RunStatus::AwaitingApproval, "{:?}", paused.error);
        assert_eq!(paused.waiting, Some(Waiting::Plan { version: 1 }));
        assert_eq!(count(&work.path().join("calls").join("s1")), 0, "nothing ran");
        let stored = store.load_run(&paused.run_id).await.unwrap().unwrap();
        assert_eq!(stored.status, RunStatus::AwaitingApproval);
        assert_eq!(stored.lease, None, "the process that paused gave its lease up");

        // Not before a decision: the resume says how to decide.
        let other = agent_with(&server, work.path(), 5, &store, Mode::Auto, Arc::new(AutoApprove));
        let e = other
            .resume(&paused.run_id, &ResumeOptions::default(), &CancelToken::new())
            .await
            .unwrap_err();
        assert!(matches!(e, ResumeError::AwaitingApproval { .. }), "{e}");
        assert!(e.to_string().contains("planexec approve"), "{e}");

        // Another process approves, then resumes.
        let waited = other.approve(&paused.run_id, None, "alice").await.unwrap();
        assert_eq!(waited, Waiting::Plan { version: 1 });
        let report = other
            .resume(&paused.run_id, &ResumeOptions::default(), &CancelToken::new())
            .await
            .unwrap();
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        assert_eq!(count(&work.path().join("effects").join("s2")), 1);

        // The same answer as a run approved at once.
        let auto = agent_with(&server, work.path(), 5, &store, Mode::Auto, Arc::new(AutoApprove))
            .run("count things")
            .await;
        assert_eq!(report.answer, auto.answer);
        let stored = store.load_run(&paused.run_id).await.unwrap().unwrap();
        let approval = &stored.decisions[0];
        assert_eq!(approval.by, "alice");
        assert!(matches!(approval.action, Action::Approve { version: 1, .. }));
        assert_eq!(stored.approved_version, Some(1));
    }
}

#[tokio::test]
async fn a_rejected_run_ends_with_the_reason_and_an_edited_plan_runs_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    for store in ledgers(dir.path()).await {
        let work = tempfile::tempdir().unwrap();
        let agent = agent_with(&server, work.path(), 5, &store, Mode::Auto, Arc::new(ApproveLater));

        let first = agent.run("count things").await;
        agent.reject(&first.run_id, "do not touch s2", "bob").await.unwrap();
        let stored = store.load_run(&first.run_id).await.unwrap().unwrap();
        assert_eq!(stored.status, RunStatus::Rejected);
        let error = stored.report().error.unwrap_or_default();
        assert!(error.contains("rejected by bob: do not touch s2"), "{error}");
        let e = agent.approve(&first.run_id, None, "bob").await.unwrap_err();
        assert!(e.to_string().contains("not waiting for approval"), "{e}");

        let second = agent.run("count things").await;
        let edited: Plan = serde_json::from_value(json!({"goal": "count", "steps": [
            step("e1", "fetch", "edited", &[]),
        ]}))
        .unwrap();
        // An edit naming a tool that does not exist is refused, and nothing changes.
        let bad: Plan = serde_json::from_value(json!({"goal": "count", "steps": [
            step("e1", "delete_everything", "x", &[]),
        ]}))
        .unwrap();
        let e = agent.edit(&second.run_id, bad, "carol").await.unwrap_err();
        assert!(e.to_string().contains("delete_everything"), "{e}");
        let version = agent.edit(&second.run_id, edited, "carol").await.unwrap();
        assert_eq!(version, 2);
        let report = agent
            .resume(&second.run_id, &ResumeOptions::default(), &CancelToken::new())
            .await
            .unwrap();
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        assert_eq!(count(&work.path().join("calls").join("e1")), 1, "the edit ran");
        assert_eq!(count(&work.path().join("calls").join("s1")), 0, "the proposal did not");
        assert_eq!(report.plans[1].reason, "edited by carol");
    }
}

#[tokio::test]
async fn a_step_with_side_effects_waits_for_its_own_approval_with_its_resolved_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    for store in ledgers(dir.path()).await {
        let work = tempfile::tempdir().unwrap();
        let agent = agent_with(&server, work.path(), 5, &store, Mode::Ask, Arc::new(ApproveLater));
        let run = agent.run("count things").await;
        agent.approve(&run.run_id, None, "dan").await.unwrap();
        let report = agent
            .resume(&run.run_id, &ResumeOptions::default(), &CancelToken::new())
            .await
            .unwrap();
        // The read ran; the write waits, with the arguments it will run with.
        assert_eq!(report.status, RunStatus::AwaitingApproval, "{:?}", report.error);
        let expected = Waiting::Step {
            plan_version: 1,
            step_id: "s2".into(),
            tool: "append".into(),
            args: json!({"key": "s2", "input": "fetch(a)"}),
            also: Vec::new(),
        };
        assert_eq!(report.waiting, Some(expected));
        assert_eq!(count(&work.path().join("calls").join("s2")), 0);
        let s2 = report.steps.iter().find(|s| s.id == "s2").unwrap();
        assert_eq!(s2.status, StepStatus::Pending);

        let e = agent.approve(&run.run_id, Some("s1"), "dan").await.unwrap_err();
        assert!(e.to_string().contains("not for step s1"), "{e}");
        agent.approve(&run.run_id, Some("s2"), "dan").await.unwrap();
        let report = agent
            .resume(&run.run_id, &ResumeOptions::default(), &CancelToken::new())
            .await
            .unwrap();
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        assert_eq!(
            count(&work.path().join("calls").join("s1")),
            1,
            "the read was not repeated"
        );
        assert_eq!(count(&work.path().join("effects").join("s2")), 1);
    }
}

/// Two calls with side effects in one wave (and a read beside them): both
/// wait at once, each is decided on its own, in any order; the approved one
/// runs on resume while the other still waits; rejecting the run then keeps
/// what ran, recorded.
#[tokio::test]
async fn the_parallel_calls_of_a_wave_wait_together_and_are_decided_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    server
        .role("planner")
        .always(Reply::json(&json!({"goal": "count", "steps": [
            step("s1", "append", "one", &[]),
            step("s2", "append", "two", &[]),
            step("s3", "fetch", "a", &[]),
        ]})));
    server.role("synthesizer").always(Reply::content("done"));
    for store in ledgers(dir.path()).await {
        let work = tempfile::tempdir().unwrap();
        let agent = agent_with(&server, work.path(), 5, &store, Mode::Ask, Arc::new(ApproveLater));
        let run = agent.run("count things").await;
        agent.approve(&run.run_id, None, "dan").await.unwrap();
        let (options, cancel) = (ResumeOptions::default(), CancelToken::new());
        let resume = || agent.resume(&run.run_id, &options, &cancel);
        let report = resume().await.unwrap();

        // Both writes wait at once; the read, which needs no decision, ran.
        assert_eq!(report.status, RunStatus::AwaitingApproval, "{:?}", report.error);
        let waits = report.waiting.clone().expect("what it waits for");
        let mut waiting: Vec<String> = waits.calls().into_iter().map(|c| c.step_id).collect();
        waiting.sort();
        assert_eq!(waiting, ["s1", "s2"], "{waits:?}");
        assert_eq!(count(&work.path().join("calls").join("s3")), 1);
        assert_eq!(count(&work.path().join("effects").join("s1")), 0);
        assert_eq!(count(&work.path().join("effects").join("s2")), 0);

        // s2 first: s1 still waits, in the ledger too.
        let approved = agent.approve(&run.run_id, Some("s2"), "dan").await.unwrap();
        assert_eq!(approved.calls().len(), 1, "{approved:?}");
        let stored = store.load_run(&run.run_id).await.unwrap().unwrap();
        assert_eq!(stored.status, RunStatus::AwaitingApproval);
        let still: Vec<String> = stored.waiting.unwrap().calls().into_iter().map(|c| c.step_id).collect();
        assert_eq!(still, ["s1"]);

        // Resumed: s2 runs while s1 still waits; the read is not repeated.
        let report = resume().await.unwrap();
        assert_eq!(report.status, RunStatus::AwaitingApproval, "{:?}", report.error);
        let waits = report.waiting.clone().unwrap();
        assert_eq!(waits.calls().len(), 1, "{waits:?}");
        assert_eq!(waits.calls()[0].step_id, "s1");
        assert_eq!(count(&work.path().join("effects").join("s2")), 1);
        assert_eq!(count(&work.path().join("effects").join("s1")), 0);
        assert_eq!(count(&work.path().join("calls").join("s3")), 1);
        let stored = store.load_run(&run.run_id).await.unwrap().unwrap();
        let still: Vec<String> = stored.waiting.unwrap().calls().into_iter().map(|c| c.step_id).collect();
        assert_eq!(still, ["s1"], "the ledger shows what it waits for now");
        // s2's approval is spent: with no new decision there is nothing to go on with.
        let e = resume().await.unwrap_err();
        assert!(matches!(e, ResumeError::AwaitingApproval { .. }), "{e}");

        // Rejected now: s2's effect stays done, and recorded.
        agent.reject(&run.run_id, "not s1", "dan").await.unwrap();
        let stored = store.load_run(&run.run_id).await.unwrap().unwrap();
        assert_eq!(stored.status, RunStatus::Rejected);
        let s2 = stored.steps.iter().rev().find(|s| s.result.id == "s2").unwrap();
        assert_eq!(s2.result.status, StepStatus::Succeeded);
        assert_eq!(count(&work.path().join("effects").join("s1")), 0);
    }
}

#[tokio::test]
async fn a_steering_message_revises_the_running_plan_after_the_running_wave() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    server
        .role("planner")
        .always(Reply::json(&json!({"goal": "count", "steps": [
            step("s1", "fetch", "a", &[]),
            step("s2", "append", "{{s1}}", &["s1"]),
        ]})));
    server
        .role("replanner")
        .always(Reply::json(&json!({"goal": "count", "steps": [
            step("s1", "fetch", "a", &[]),
            step("w1", "append", "to a file instead", &["s1"]),
        ]})));
    server.role("synthesizer").always(Reply::content("done"));
    for store in ledgers(dir.path()).await {
        let work = tempfile::tempdir().unwrap();
        let agent = Arc::new(agent_with(
            &server,
            work.path(),
            900,
            &store,
            Mode::Auto,
            Arc::new(AutoApprove),
        ));
        let mut events = agent.events().subscribe();
        let running = tokio::spawn({
            let agent = agent.clone();
            async move { agent.run("count things").await }
        });
        let run_id = loop {
            if let Some(planexec::Event::RunStarted { run_id, .. }) = events.recv().await {
                break run_id;
            }
        };
        // While s1 runs, a person (through the ledger, as another process would) steers.
        tokio::time::sleep(Duration::from_millis(200)).await;
        planexec::decisions::steer(
            store.as_ref(),
            &run_id,
            "skip the upload, write to a file instead",
            "erin",
        )
        .await
        .unwrap();
        let report = running.await.unwrap();
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        assert_eq!(
            count(&work.path().join("calls").join("s1")),
            1,
            "the running step finished once"
        );
        assert_eq!(
            count(&work.path().join("calls").join("s2")),
            0,
            "the old next step never started"
        );
        assert_eq!(count(&work.path().join("calls").join("w1")), 1, "the revision ran");
        let steered = report.plans.last().unwrap();
        assert_eq!(steered.reason, "steered: skip the upload, write to a file instead");
        assert_eq!(
            report.replans, 0,
            "a person's revision does not use up the replan bound"
        );
        let stored = store.load_run(&run_id).await.unwrap().unwrap();
        assert!(stored
            .decisions
            .iter()
            .any(|d| matches!(d.action, Action::SteerApplied { steer: 1, version: 2 })));
        assert!(planexec::decisions::pending_steers(&stored.decisions).is_empty());
    }
}

#[tokio::test]
async fn one_owner_per_run_and_an_expired_lease_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    for store in ledgers(dir.path()).await {
        let work = tempfile::tempdir().unwrap();
        let agent = Arc::new(agent_with(
            &server,
            work.path(),
            600,
            &store,
            Mode::Auto,
            Arc::new(ApproveLater),
        ));
        let paused = agent.run("count things").await;
        agent.approve(&paused.run_id, None, "frank").await.unwrap();

        // A lease left by a process on another machine that has not expired: refused.
        let elsewhere = Lease {
            owner: "pid 4242 on another-host (beef)".into(),
            expires_at: planexec::result::now_ms() + 60_000,
        };
        assert_eq!(store.take_lease(&paused.run_id, &elsewhere, 0).await.unwrap(), None);
        let e = agent
            .resume(&paused.run_id, &ResumeOptions::default(), &CancelToken::new())
            .await
            .unwrap_err();
        assert!(matches!(e, ResumeError::Owned { .. }), "{e}");
        assert!(e.to_string().contains("pid 4242 on another-host"), "{e}");

        // Once it has expired, it is taken over.
        let expired = Lease {
            expires_at: planexec::result::now_ms() - 1,
            ..elsewhere
        };
        store.take_lease(&paused.run_id, &expired, 0).await.unwrap();
        let first = tokio::spawn({
            let agent = agent.clone();
            let id = paused.run_id.clone();
            async move { agent.resume(&id, &ResumeOptions::default(), &CancelToken::new()).await }
        });
        // While it runs, a second resume of the same run is refused, even
        // after more than one lease time: the heartbeat renews the lease.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let e = agent
            .resume(&paused.run_id, &ResumeOptions::default(), &CancelToken::new())
            .await
            .unwrap_err();
        assert!(matches!(e, ResumeError::Owned { .. }), "{e}");
        let report = first.await.unwrap().unwrap();
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        assert_eq!(count(&work.path().join("calls").join("s1")), 1);
        assert_eq!(store.load_run(&paused.run_id).await.unwrap().unwrap().lease, None);
    }
}
