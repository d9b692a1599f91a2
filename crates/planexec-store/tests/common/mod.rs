//! Helpers shared by the ledger tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh, empty PostgreSQL database for one test.
pub struct PgDatabase {
    pub url: String,
}

/// A new database on the server at `PLANEXEC_TEST_POSTGRES_URL` (`.ci/run` starts
/// one on loopback with `scripts/postgres.sh`). Without the variable the test is
/// skipped with a note, unless `PLANEXEC_REQUIRE_POSTGRES` is set (as in CI).
pub async fn postgres_database() -> Option<PgDatabase> {
    let Ok(admin) = std::env::var("PLANEXEC_TEST_POSTGRES_URL") else {
        if std::env::var_os("PLANEXEC_REQUIRE_POSTGRES").is_some() {
            panic!("PLANEXEC_REQUIRE_POSTGRES is set but PLANEXEC_TEST_POSTGRES_URL is not: start one with scripts/postgres.sh");
        }
        eprintln!("skipped: PLANEXEC_TEST_POSTGRES_URL is not set (scripts/postgres.sh starts a server)");
        return None;
    };
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "planexec_test_{}_{}_{}",
        std::process::id(),
        planexec::result::now_ms(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {admin}: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
    Some(PgDatabase {
        url: format!("{base}/{name}"),
    })
}
