//! Resume through the library: finished steps are taken from the ledger and
//! not run again, in-flight side effects need a decision, a finished run is
//! left alone, and a ledger that fails stops the run instead of letting work
//! go unrecorded.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::{agent_builder, count, counting_tools, workload_plan, SIDE_EFFECT_STEPS};
use planexec::report::{Clarification, PlanVersion, RunStatus};
use planexec::result::StepResult;
use planexec::store::{
    Decision, Lease, ModelExchange, RunEnd, RunFilter, RunHeader, RunStore, RunSummary, StepStart, StoreError,
    StoreErrorKind, StoredRun, Waiting,
};
use planexec::{
    CancelToken, Event, MemoryStore, ResumeError, ResumeOptions, Role, RunOptions, StepSelection, StepStatus,
};
use planexec_store::SqlStore;
use planexec_testkit::{Reply, ScriptedServer};

const SECRET: &str = "sk-test-SECRET-0123456789";

fn server() -> ScriptedServer {
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&workload_plan()));
    server.role("synthesizer").always(Reply::content("all ten steps ran"));
    server
}

#[tokio::test]
async fn a_failed_run_resumes_without_rerunning_finished_steps() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ledger.db");
    let blocker = dir.path().join("blocked");
    std::fs::write(&blocker, "").unwrap();
    let server = server();
    let store: Arc<dyn RunStore> = Arc::new(SqlStore::open(db.to_str().unwrap()).await.unwrap());
    let tools = || counting_tools(dir.path(), Duration::from_millis(5), Some(blocker.clone()));
    // The blocked step fails as it is (no recovery, no replan), for the
    // resume to continue it.
    let no_replans = RunOptions {
        max_replans: 0,
        recover: planexec::Recover::Replan,
        tool_retries: 0,
        max_steps: 12,
        ..RunOptions::default()
    };
    let agent = agent_builder(&server.base_url(), SECRET, tools(), store.clone())
        .options(no_replans.clone())
        .build();
    let first = agent.run("count things").await;
    assert_eq!(first.status, RunStatus::Failed, "{:?}", first.error);
    for id in ["s1", "s2", "s3", "s4"] {
        assert_eq!(count(&dir.path().join("calls").join(id)), 1, "{id} ran once");
    }

    // The cause goes away; the run continues where it stopped.
    std::fs::remove_file(&blocker).unwrap();
    let agent = agent_builder(&server.base_url(), SECRET, tools(), store.clone())
        .options(no_replans)
        .build();
    let report = agent
        .resume(&first.run_id, &ResumeOptions::default(), &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.run_id, first.run_id);
    for id in ["s1", "s2", "s3", "s4"] {
        assert_eq!(
            count(&dir.path().join("calls").join(id)),
            1,
            "finished step {id} was not run again"
        );
    }
    for id in SIDE_EFFECT_STEPS {
        assert_eq!(
            count(&dir.path().join("effects").join(id)),
            1,
            "{id}'s effect happened once"
        );
    }
    assert_eq!(
        report.step("s10").and_then(|s| s.output.clone()),
        Some(serde_json::json!(
            "append(fetch(append(fetch(append(fetch(a)+fetch(b))|append(fetch(c)+fetch(d)))))!)"
        ))
    );
    // The planner was not asked again, and its first call is still counted.
    assert_eq!(server.requests_from("planner").len(), 1);
    assert_eq!(report.usage.role(Role::Planner).calls, 1);
    assert_eq!(report.usage.role(Role::Synthesizer).calls, 1);

    let stored = store.load_run(&first.run_id).await.unwrap().unwrap();
    assert_eq!((stored.status, stored.resumes), (RunStatus::Succeeded, 1));
    assert_eq!(stored.answer.as_deref(), Some("all ten steps ran"));
    assert_eq!(
        stored.exchanges.len(),
        2,
        "planner and synthesizer exchanges are recorded"
    );
    let planner_request = stored.exchanges[0].request.to_string();
    assert!(
        planner_request.contains("count things"),
        "the request is recorded as sent"
    );

    // A finished run is left as it is.
    let e = agent
        .resume(&first.run_id, &ResumeOptions::default(), &CancelToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, ResumeError::Finished { .. }), "{e}");
    assert!(e.to_string().contains("already finished (succeeded)"), "{e}");
    assert_eq!(store.load_run(&first.run_id).await.unwrap().unwrap(), stored);

    // API keys never reach the ledger.
    drop(agent);
    for name in ["ledger.db", "ledger.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join(name)) {
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(SECRET), "{name} holds the API key");
            assert!(!text.to_lowercase().contains("authorization"), "{name} holds a header");
        }
    }
}

#[tokio::test]
async fn in_flight_side_effects_are_run_again_or_skipped_as_decided() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    // s6 taken as done has no output, so s7 (which uses it) fails saying so;
    // the revision reads what s6 appended instead of using its output.
    let mut revision = workload_plan();
    revision["steps"][6] = common::step("s7", "fetch", "{{s5}}|s6 appended", &["s5", "s6"]);
    server.role("replanner").always(Reply::json(&revision));
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    let agent = agent_builder(
        &server.base_url(),
        SECRET,
        counting_tools(dir.path(), Duration::from_millis(300), None),
        store.clone(),
    )
    .build();
    // Stop the run while s5 and s6 (both writes) are running.
    let cancel = CancelToken::new();
    let started = Arc::new(Mutex::new(Vec::<String>::new()));
    {
        let (cancel, started) = (cancel.clone(), started.clone());
        agent.events().on_event(move |e| {
            if let Event::StepStarted { step_id, .. } = e {
                let mut s = started.lock().unwrap();
                s.push(step_id.clone());
                if s.contains(&"s5".to_string()) && s.contains(&"s6".to_string()) {
                    cancel.cancel();
                }
            }
        });
    }
    let first = agent.run_cancellable("count things", None, &cancel).await;
    assert_eq!(first.status, RunStatus::Interrupted);
    let before = store.load_run(&first.run_id).await.unwrap().unwrap();
    let mut in_flight: Vec<&str> = before.in_flight().iter().map(|s| s.result.id.as_str()).collect();
    in_flight.sort();
    assert_eq!(in_flight, ["s5", "s6"]);

    // Undecided: the resume names the steps and the flags, and changes nothing.
    let agent = agent_builder(
        &server.base_url(),
        SECRET,
        counting_tools(dir.path(), Duration::from_millis(5), None),
        store.clone(),
    )
    .build();
    let e = agent
        .resume(&first.run_id, &ResumeOptions::default(), &CancelToken::new())
        .await
        .unwrap_err();
    let message = e.to_string();
    assert!(matches!(e, ResumeError::InflightUndecided { .. }), "{message}");
    assert!(
        message.contains("s5 (append") && message.contains("s6 (append"),
        "{message}"
    );
    assert!(
        message.contains("--rerun-inflight") && message.contains("--skip-inflight"),
        "{message}"
    );
    assert_eq!(store.load_run(&first.run_id).await.unwrap().unwrap(), before);

    // Asking for both on one step is refused.
    let both = ResumeOptions {
        rerun_inflight: StepSelection::All,
        skip_inflight: StepSelection::Only(vec!["s6".into()]),
    };
    let e = agent
        .resume(&first.run_id, &both, &CancelToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, ResumeError::Conflict { .. }), "{e}");

    let decided = ResumeOptions {
        rerun_inflight: StepSelection::Only(vec!["s5".into()]),
        skip_inflight: StepSelection::Only(vec!["s6".into()]),
    };
    let report = agent
        .resume(&first.run_id, &decided, &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let versions = &store.load_run(&first.run_id).await.unwrap().unwrap().plans;
    assert!(
        versions
            .last()
            .unwrap()
            .reason
            .contains("args.input uses the output of s6, which is unknown"),
        "{versions:?}"
    );
    assert_eq!(count(&dir.path().join("calls").join("s5")), 2, "s5 was run again");
    assert_eq!(count(&dir.path().join("calls").join("s6")), 1, "s6 was taken as done");
    for id in ["s1", "s2", "s3", "s4"] {
        assert_eq!(count(&dir.path().join("calls").join(id)), 1, "{id} was not run again");
    }
    assert!(report
        .steps
        .iter()
        .any(|s| s.id == "s6" && s.status == StepStatus::Skipped));
    let after = store.load_run(&first.run_id).await.unwrap().unwrap();
    assert!(after.in_flight().is_empty());
}

/// A ledger that fills up when a given step's result is written.
struct FillsUpAt {
    inner: MemoryStore,
    step: &'static str,
}

#[async_trait]
impl RunStore for FillsUpAt {
    fn describe(&self) -> String {
        "test ledger".into()
    }
    async fn create_run(&self, run: &RunHeader) -> Result<(), StoreError> {
        self.inner.create_run(run).await
    }
    async fn add_plan(&self, run_id: &str, version: &PlanVersion, replans: u32) -> Result<(), StoreError> {
        self.inner.add_plan(run_id, version, replans).await
    }
    async fn approve_plan(&self, run_id: &str, version: u32) -> Result<(), StoreError> {
        self.inner.approve_plan(run_id, version).await
    }
    async fn set_clarifications(&self, run_id: &str, c: &[Clarification]) -> Result<(), StoreError> {
        self.inner.set_clarifications(run_id, c).await
    }
    async fn step_started(&self, run_id: &str, start: &StepStart) -> Result<(), StoreError> {
        self.inner.step_started(run_id, start).await
    }
    async fn step_finished(&self, run_id: &str, seq: u64, v: u32, result: &StepResult) -> Result<(), StoreError> {
        if result.id == self.step {
            return Err(StoreError::new(StoreErrorKind::Full, "the test ledger is full"));
        }
        self.inner.step_finished(run_id, seq, v, result).await
    }
    async fn record_exchange(&self, run_id: &str, x: &ModelExchange) -> Result<(), StoreError> {
        self.inner.record_exchange(run_id, x).await
    }
    async fn finish_run(&self, run_id: &str, end: &RunEnd) -> Result<(), StoreError> {
        self.inner.finish_run(run_id, end).await
    }
    async fn reopen_run(&self, run_id: &str) -> Result<(), StoreError> {
        self.inner.reopen_run(run_id).await
    }
    async fn load_run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError> {
        self.inner.load_run(run_id).await
    }
    async fn list_runs(&self, f: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        self.inner.list_runs(f).await
    }
    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError> {
        self.inner.delete_run(run_id).await
    }
    async fn set_waiting(&self, run_id: &str, waiting: Option<&Waiting>) -> Result<(), StoreError> {
        self.inner.set_waiting(run_id, waiting).await
    }
    async fn add_decision(&self, run_id: &str, decision: &Decision) -> Result<u64, StoreError> {
        self.inner.add_decision(run_id, decision).await
    }
    async fn load_decisions(&self, run_id: &str) -> Result<Vec<Decision>, StoreError> {
        self.inner.load_decisions(run_id).await
    }
    async fn take_lease(&self, run_id: &str, lease: &Lease, now: u64) -> Result<Option<Lease>, StoreError> {
        self.inner.take_lease(run_id, lease, now).await
    }
    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError> {
        self.inner.release_lease(run_id, owner).await
    }
    async fn save_template(&self, template: &planexec::templates::PlanTemplate) -> Result<(), StoreError> {
        self.inner.save_template(template).await
    }
    async fn list_templates(&self) -> Result<Vec<planexec::templates::PlanTemplate>, StoreError> {
        self.inner.list_templates().await
    }
    async fn delete_template(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_template(id).await
    }
}

#[tokio::test]
async fn a_ledger_that_fails_stops_the_run_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    let store = Arc::new(FillsUpAt {
        inner: MemoryStore::new(),
        step: "s7",
    });
    let agent = agent_builder(
        &server.base_url(),
        SECRET,
        counting_tools(dir.path(), Duration::from_millis(5), None),
        store.clone(),
    )
    .build();
    let report = agent.run("count things").await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.clone().unwrap_or_default();
    assert!(
        error.contains("the run ledger could not be written: the test ledger is full"),
        "{error}"
    );
    assert!(error.contains(&format!("planexec resume {}", report.run_id)), "{error}");
    // Nothing after s7 ran, and no answer was written.
    assert_eq!(count(&dir.path().join("calls").join("s8")), 0);
    assert!(server.requests_from("synthesizer").is_empty());
    let stored = store.load_run(&report.run_id).await.unwrap().unwrap();
    assert_eq!(
        stored.status,
        RunStatus::Failed,
        "the end of the run was still recorded"
    );
}
