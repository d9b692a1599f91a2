//! A ledger that cannot be used must say why and what to do, never panic, and
//! never damage what it already holds: corrupt and foreign files, a schema from
//! a newer planexec, a full disk (a tiny tmpfs) and a read-only file system.

use std::path::Path;
use std::process::Command;

use planexec::report::{PlanVersion, RunStatus};
use planexec::result::{StepResult, StepStatus};
use planexec::store::{RunHeader, RunStore, StoreErrorKind};
use planexec::Plan;
use planexec_store::SqlStore;
use serde_json::json;

fn header(id: &str) -> RunHeader {
    RunHeader {
        run_id: id.to_string(),
        task: "count things".into(),
        options: json!({}),
        started_at: 1,
    }
}

fn done(id: &str, output: serde_json::Value) -> StepResult {
    StepResult {
        id: id.to_string(),
        tool: Some("echo".into()),
        agent: None,
        status: StepStatus::Succeeded,
        attempts: 1,
        args: None,
        output: Some(output),
        error: None,
        started_at: Some(1),
        finished_at: Some(2),
        model_calls: 0,
        calls: Vec::new(),
        refused: false,
        worker: None,
    }
}

async fn open(path: &Path) -> Result<SqlStore, planexec::StoreError> {
    SqlStore::open(path.to_str().unwrap()).await
}

#[tokio::test]
async fn a_file_that_is_not_sqlite_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let bytes = b"these are my notes, not a database\n".repeat(200);
    std::fs::write(&path, &bytes).unwrap();
    let e = open(&path).await.err().expect("a text file is not a ledger");
    assert_eq!(e.kind, StoreErrorKind::Corrupt);
    assert!(e.message.contains("is not a SQLite database"), "{e}");
    assert!(e.message.contains("--db"), "says what to do: {e}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file is untouched");
}

#[tokio::test]
async fn a_damaged_ledger_gives_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    {
        let store = open(&path).await.unwrap();
        store.create_run(&header("run-1")).await.unwrap();
        store.close().await;
    }
    // Keep the SQLite header, scribble over the pages after it.
    let mut bytes = std::fs::read(&path).unwrap();
    for b in bytes.iter_mut().skip(100) {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let _ = std::fs::remove_file(dir.path().join("ledger.db-wal"));
    let outcome = match open(&path).await {
        Err(e) => Err(e),
        Ok(store) => store.load_run("run-1").await.map(|_| ()),
    };
    let e = outcome.expect_err("a damaged ledger cannot be read");
    assert_eq!(e.kind, StoreErrorKind::Corrupt, "{e}");
    assert!(e.message.contains("damaged"), "{e}");
}

#[tokio::test]
async fn a_foreign_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    sqlx::any::install_default_drivers();
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&url).await.unwrap();
    sqlx::raw_sql("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')")
        .execute(&mut conn)
        .await
        .unwrap();
    drop(conn);
    let before = std::fs::read(&path).unwrap();
    let e = open(&path)
        .await
        .err()
        .expect("another program's database is not a ledger");
    assert_eq!(e.kind, StoreErrorKind::Foreign);
    assert!(
        e.message.contains("not a planexec ledger") && e.message.contains("users"),
        "{e}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "no table was added");
}

#[tokio::test]
async fn a_newer_schema_is_refused_and_its_records_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    {
        let store = open(&path).await.unwrap();
        store.create_run(&header("run-1")).await.unwrap();
        store.close().await;
    }
    let url = format!("sqlite://{}", path.display());
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&url).await.unwrap();
    sqlx::raw_sql("INSERT INTO planexec_schema (version, applied_at) VALUES (99, 0)")
        .execute(&mut conn)
        .await
        .unwrap();
    drop(conn);
    let e = open(&path).await.err().expect("a newer schema is refused");
    assert_eq!(e.kind, StoreErrorKind::SchemaTooNew);
    assert!(
        e.message.contains("schema version 99") && e.message.contains("Upgrade planexec"),
        "{e}"
    );
    // Still there for the newer planexec.
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&url).await.unwrap();
    let n: i64 = sqlx::Row::get(
        &sqlx::query("SELECT COUNT(*) AS n FROM runs")
            .fetch_one(&mut conn)
            .await
            .unwrap(),
        "n",
    );
    assert_eq!(n, 1);
}

#[tokio::test]
async fn large_values_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let store = open(&path).await.unwrap();
    store.create_run(&header("run-1")).await.unwrap();
    let big = json!({"text": "y".repeat(200_000)});
    for seq in 1..=5 {
        store
            .step_finished("run-1", seq, 1, &done(&format!("s{seq}"), big.clone()))
            .await
            .unwrap();
    }
    store.close().await;
    let size = std::fs::metadata(&path).unwrap().len()
        + std::fs::metadata(dir.path().join("ledger.db-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    assert!(
        size < 600_000,
        "five copies of a 200 kB output take {size} bytes: it is stored more than once"
    );
    let store = open(&path).await.unwrap();
    let run = store.load_run("run-1").await.unwrap().unwrap();
    assert!(run.steps.iter().all(|s| s.result.output.as_ref() == Some(&big)));
}

/// A tmpfs mounted for one test (these tests run as root in CI).
struct Mount(tempfile::TempDir);

impl Mount {
    fn tmpfs(size: &str) -> Option<Mount> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            if std::env::var_os("PLANEXEC_REQUIRE_MOUNT").is_some() {
                panic!("cannot mount a tmpfs (needs root), and PLANEXEC_REQUIRE_MOUNT is set");
            }
            eprintln!("skipped: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(Mount(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn remount(&self, options: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(self.0.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount {options}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.0.path()).status();
    }
}

#[tokio::test]
async fn a_full_disk_is_a_clear_error_and_earlier_records_survive() {
    let Some(mount) = Mount::tmpfs("1m") else { return };
    let path = mount.path().join("ledger.db");
    let store = open(&path).await.unwrap();
    store.create_run(&header("run-1")).await.unwrap();
    store
        .add_plan(
            "run-1",
            &PlanVersion {
                version: 1,
                reason: "initial plan".into(),
                plan: serde_json::from_value::<Plan>(json!({"goal": "g", "steps": []})).unwrap(),
                mends: Vec::new(),
            },
            0,
        )
        .await
        .unwrap();
    // Distinct outputs (so none is shared) until the disk is full.
    let mut written = 0u64;
    let error = loop {
        written += 1;
        let output = json!({"n": written, "text": format!("{written}").repeat(20_000)});
        match store
            .step_finished("run-1", written, 1, &done(&format!("s{written}"), output))
            .await
        {
            Ok(()) => assert!(written < 200, "a 1 MiB disk never filled"),
            Err(e) => break e,
        }
    };
    assert_eq!(error.kind, StoreErrorKind::Full, "{error}");
    assert!(
        error.message.contains("full") && error.message.contains("--db"),
        "{error}"
    );
    store.close().await;

    // Make room, and everything committed before the failure is there.
    mount.remount("size=64m");
    let store = open(&path).await.unwrap();
    let run = store.load_run("run-1").await.unwrap().expect("the run survived");
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(run.plans.len(), 1);
    assert_eq!(
        run.steps.len() as u64,
        written - 1,
        "every step committed before the failure is kept"
    );
    assert!(run.steps.iter().all(|s| s.result.status == StepStatus::Succeeded));
}

#[tokio::test]
async fn a_read_only_ledger_is_a_clear_error_and_left_intact() {
    let Some(mount) = Mount::tmpfs("8m") else { return };
    let path = mount.path().join("ledger.db");
    {
        let store = open(&path).await.unwrap();
        store.create_run(&header("run-1")).await.unwrap();
        store.step_finished("run-1", 1, 1, &done("s1", json!(1))).await.unwrap();
        store.close().await;
    }
    let before = std::fs::read(&path).unwrap();
    mount.remount("ro");
    let outcome = match open(&path).await {
        Err(e) => Err(e),
        Ok(store) => store.create_run(&header("run-2")).await,
    };
    let e = outcome.expect_err("nothing can be written to a read-only file system");
    assert!(
        matches!(e.kind, StoreErrorKind::ReadOnly | StoreErrorKind::Unavailable),
        "{e:?}"
    );
    assert!(e.message.contains("read-only") || e.message.contains("cannot"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    mount.remount("rw");
    let store = open(&path).await.unwrap();
    let run = store.load_run("run-1").await.unwrap().unwrap();
    assert_eq!(run.steps.len(), 1);
}
