//! The ledger's schema and its versioned migrations, run when a ledger is opened.
//!
//! `planexec_schema` holds the version. A database with a newer version than
//! this build knows is refused (it was written by a newer planexec), and so is
//! a database with other tables and no version (not a planexec ledger): neither
//! is touched. The SQL is portable between SQLite and PostgreSQL (TEXT and
//! BIGINT only).

use planexec::store::{StoreError, StoreErrorKind};
use sqlx::Row;

use sqlx::AnyConnection;

use crate::backend::Backend;

/// Migrations in order; migration `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: runs, plan versions, step executions (each from its start to its end), model
    // exchanges, and large values stored once by hash.
    "CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        task TEXT NOT NULL,
        options TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        finished_at BIGINT,
        elapsed_ms BIGINT NOT NULL,
        answer TEXT,
        error TEXT,
        replans BIGINT NOT NULL,
        resumes BIGINT NOT NULL,
        approved_version BIGINT,
        clarifications TEXT NOT NULL
    );
    CREATE INDEX runs_by_start ON runs (started_at);
    CREATE TABLE plan_versions (
        run_id TEXT NOT NULL,
        version BIGINT NOT NULL,
        reason TEXT NOT NULL,
        plan TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (run_id, version)
    );
    CREATE TABLE step_runs (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        step_id TEXT NOT NULL,
        plan_version BIGINT NOT NULL,
        tool TEXT,
        status TEXT NOT NULL,
        attempts BIGINT NOT NULL,
        args_json TEXT,
        args_hash TEXT,
        output_json TEXT,
        output_hash TEXT,
        error TEXT,
        started_at BIGINT,
        finished_at BIGINT,
        model_calls BIGINT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE model_exchanges (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        role TEXT NOT NULL,
        step_id TEXT,
        model TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        response_hash TEXT,
        error TEXT,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        cost TEXT,
        latency_ms BIGINT NOT NULL,
        at BIGINT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE blobs (
        hash TEXT PRIMARY KEY,
        body TEXT NOT NULL
    );
    CREATE TABLE blob_refs (
        run_id TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (run_id, hash)
    );
    CREATE INDEX blob_refs_by_hash ON blob_refs (hash);",
    // 2: the agent profile of an agent step (its inner calls are rows of
    // their own, with ids `<step>.<n>`).
    "ALTER TABLE step_runs ADD COLUMN agent TEXT;",
    // 3: runs that wait for people: what a paused run waits for, the lease of
    // the process executing a run, and the decisions people made (approve,
    // reject, edit, steer, cancel), append-only.
    "ALTER TABLE runs ADD COLUMN waiting TEXT;
    ALTER TABLE runs ADD COLUMN lease_owner TEXT;
    ALTER TABLE runs ADD COLUMN lease_expires BIGINT;
    CREATE TABLE decisions (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        body TEXT NOT NULL,
        at BIGINT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );",
    // 4: what the runtime changed in a plan the model wrote (calls written
    // twice merged, the small-model help's mends), with its plan version.
    "ALTER TABLE plan_versions ADD COLUMN mends TEXT;",
    // 5: plan templates: the plans of runs that succeeded, with their task's
    // literals as parameters, for reuse by tasks of the same shape.
    "CREATE TABLE plan_templates (
        id TEXT PRIMARY KEY,
        body TEXT NOT NULL,
        saved_at BIGINT NOT NULL
    );",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

fn fail(e: sqlx::Error, location: &str, doing: &str) -> StoreError {
    crate::error::classify(e, location, doing)
}

async fn tables(conn: &mut AnyConnection, backend: Backend, location: &str) -> Result<Vec<String>, StoreError> {
    let rows = sqlx::query(backend.tables_query())
        .fetch_all(&mut *conn)
        .await
        .map_err(|e| fail(e, location, "read its tables"))?;
    Ok(rows
        .iter()
        .filter_map(|r| r.try_get::<String, _>("name").ok())
        .collect())
}

/// The ledger's schema version (0 for an empty database), or a refusal for a
/// foreign database or a newer schema. Writes nothing.
pub(crate) async fn check(conn: &mut AnyConnection, backend: Backend, location: &str) -> Result<i64, StoreError> {
    let tables = tables(conn, backend, location).await?;
    let current = if tables.iter().any(|t| t == "planexec_schema") {
        let row = sqlx::query("SELECT CAST(MAX(version) AS BIGINT) AS version FROM planexec_schema")
            .fetch_one(&mut *conn)
            .await
            .map_err(|e| fail(e, location, "read its schema version"))?;
        row.try_get::<Option<i64>, _>("version").ok().flatten().unwrap_or(0)
    } else if tables.is_empty() {
        0
    } else {
        let shown: Vec<&str> = tables.iter().take(5).map(String::as_str).collect();
        return Err(StoreError::new(
            StoreErrorKind::Foreign,
            format!(
                "{location} is a database but not a planexec ledger (it has tables {}{}): it was left as it is. Choose another ledger with --db or PLANEXEC_DB",
                shown.join(", "),
                if tables.len() > 5 { ", …" } else { "" }
            ),
        ));
    };
    if current > SCHEMA_VERSION {
        return Err(StoreError::new(
            StoreErrorKind::SchemaTooNew,
            format!(
                "the ledger {location} has schema version {current}, but this planexec knows versions up to {SCHEMA_VERSION}: it was written by a newer planexec. Upgrade planexec, or choose another ledger with --db"
            ),
        ));
    }
    Ok(current)
}

/// Bring the ledger from version `current` (see [`check`]) to [`SCHEMA_VERSION`],
/// one transaction per migration.
pub(crate) async fn migrate(conn: &mut AnyConnection, current: i64, location: &str) -> Result<(), StoreError> {
    use sqlx::Connection;
    if current == 0 {
        sqlx::raw_sql(
            "CREATE TABLE IF NOT EXISTS planexec_schema (version BIGINT NOT NULL, applied_at BIGINT NOT NULL)",
        )
        .execute(&mut *conn)
        .await
        .map_err(|e| fail(e, location, "create its schema"))?;
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let version = i as i64 + 1;
        let doing = format!("migrate to schema version {version}");
        let mut tx = conn.begin().await.map_err(|e| fail(e, location, &doing))?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(*sql))
            .execute(&mut *tx)
            .await
            .map_err(|e| fail(e, location, &doing))?;
        sqlx::query("INSERT INTO planexec_schema (version, applied_at) VALUES ($1, $2)")
            .bind(version)
            .bind(planexec::result::now_ms() as i64)
            .execute(&mut *tx)
            .await
            .map_err(|e| fail(e, location, &doing))?;
        tx.commit().await.map_err(|e| fail(e, location, &doing))?;
    }
    Ok(())
}
