//! The planexec run ledger in SQLite or PostgreSQL: an implementation of
//! [`planexec::store::RunStore`] on `sqlx`'s `Any` driver, so both databases run
//! the same SQL.
//!
//! One file a concern: what differs per database in `sqlite` and `postgres`
//! (and `backend`, which asks the right one); the shared SQL in
//! `ledger`, `rows`, `schema` and `templates` (plan reuse); opening in `open`; errors in `error`. Both
//! databases pass one conformance suite (`tests/conformance.rs`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), planexec::StoreError> {
//! let ledger = planexec_store::SqlStore::open("/tmp/ledger.db").await?; // or "postgres://…"
//! # Ok(()) }
//! ```
//!
//! Every write is one transaction, committed before the call returns (SQLite in
//! WAL mode with `synchronous=FULL` by default), so a killed process leaves a
//! ledger that is consistent at every instant. Large values (step arguments and
//! outputs, model messages and replies) are stored once by their SHA-256 in
//! `blobs` and referenced from the rows that use them; the system prompt every
//! request repeats is held once. Requests are recorded as the provider got them,
//! which never includes API keys or headers.

mod backend;
mod error;
mod ledger;
mod open;
mod postgres;
mod rows;
mod schema;
mod sqlite;
mod templates;

pub use ledger::SqlStore;
pub use schema::SCHEMA_VERSION;
pub use sqlite::Durability;
