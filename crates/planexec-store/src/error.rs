//! A database error as a [`StoreError`] whose message says what to do. Each
//! backend names its own codes (`sqlite::error_kind`, `postgres::error_kind`);
//! the words of a message are the fallback for errors that carry no code.

use planexec::store::{StoreError, StoreErrorKind};

use crate::{postgres, sqlite};

/// A database error as a message that says what to do.
pub(crate) fn classify(e: sqlx::Error, location: &str, doing: &str) -> StoreError {
    let text = e.to_string();
    let code = e
        .as_database_error()
        .and_then(|d| d.code().map(|c| c.into_owned()))
        .unwrap_or_default();
    let by_code = sqlite::error_kind(&code).or_else(|| postgres::error_kind(&code));
    let lower = text.to_lowercase();
    // The first kind its code or its words name, in this order.
    let said = |kind: StoreErrorKind| match kind {
        StoreErrorKind::Full => lower.contains("disk is full") || lower.contains("no space"),
        StoreErrorKind::ReadOnly => lower.contains("readonly") || lower.contains("read-only"),
        StoreErrorKind::Corrupt => lower.contains("not a database") || lower.contains("malformed"),
        StoreErrorKind::Unavailable => {
            matches!(e, sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::Tls(_))
        }
        _ => false,
    };
    let order = [
        StoreErrorKind::Full,
        StoreErrorKind::ReadOnly,
        StoreErrorKind::Corrupt,
        StoreErrorKind::Unavailable,
    ];
    let kind = order
        .into_iter()
        .find(|&k| by_code == Some(k) || said(k))
        .unwrap_or(StoreErrorKind::Other);
    let message = match kind {
        StoreErrorKind::Full => format!(
            "the ledger {location} is full (no space left where it is stored): free some space, or choose another ledger with --db"
        ),
        StoreErrorKind::ReadOnly => {
            format!("the ledger {location} is read-only: make it writable, or choose another ledger with --db")
        }
        StoreErrorKind::Corrupt => format!(
            "the ledger {location} is damaged or not a SQLite database ({text}): it was left as it is; choose another ledger with --db"
        ),
        StoreErrorKind::Unavailable => format!("cannot reach the ledger {location}: {text}"),
        _ => format!("the ledger {location} failed to {doing}: {text}"),
    };
    StoreError::new(kind, message)
}
