//! Opening a ledger: which database a target names, checking and migrating
//! its schema on one connection, then the pool every write goes through.

use std::time::Duration;

use planexec::store::StoreError;
use sqlx::any::AnyPoolOptions;

use crate::backend::Backend;
use crate::error::classify;
use crate::ledger::SqlStore;
use crate::sqlite::{self, Durability};
use crate::{postgres, schema};

impl SqlStore {
    /// Open (creating and migrating as needed) the ledger at `target`: a
    /// `postgres://` or `postgresql://` URL, a `sqlite:` URL, or a file path.
    pub async fn open(target: &str) -> Result<SqlStore, StoreError> {
        SqlStore::open_with(target, Durability::default()).await
    }

    pub async fn open_with(target: &str, durability: Durability) -> Result<SqlStore, StoreError> {
        sqlx::any::install_default_drivers();
        if postgres::is_url(target) {
            return SqlStore::connect(
                target.to_string(),
                Backend::Postgres,
                postgres::redact_url(target),
                durability,
            )
            .await;
        }
        let (url, location) = sqlite::url_and_location(target)?;
        SqlStore::connect(url, Backend::Sqlite, location, durability).await
    }

    async fn connect(
        url: String,
        backend: Backend,
        location: String,
        durability: Durability,
    ) -> Result<SqlStore, StoreError> {
        // Check and migrate on one connection first: its errors are the real
        // ones (a pool would retry a damaged file until it timed out).
        {
            use sqlx::Connection;
            let mut conn = sqlx::AnyConnection::connect(&url)
                .await
                .map_err(|e| classify(e, &location, "open"))?;
            if let Some(sql) = backend.before_check() {
                sqlx::raw_sql(sql)
                    .execute(&mut conn)
                    .await
                    .map_err(|e| classify(e, &location, "open"))?;
            }
            let current = schema::check(&mut conn, backend, &location).await?;
            if let Some(sql) = backend.after_check() {
                sqlx::raw_sql(sql)
                    .execute(&mut conn)
                    .await
                    .map_err(|e| classify(e, &location, "open"))?;
            }
            schema::migrate(&mut conn, current, &location).await?;
            let _ = conn.close().await;
        }
        let pool = AnyPoolOptions::new()
            .max_connections(backend.max_connections())
            .acquire_timeout(Duration::from_secs(30))
            // A ping before every statement would double the cost of each write.
            .test_before_acquire(false)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if let Some(sql) = backend.on_each_connection(durability) {
                        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            })
            .connect(&url)
            .await
            .map_err(|e| classify(e, &location, "open"))?;
        Ok(SqlStore { pool, location })
    }
}
