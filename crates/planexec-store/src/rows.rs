//! Row helpers shared by every query: reading columns as the port's types,
//! and a value as a row holds it (inline, or once by hash in `blobs`).

use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::Row;

pub(crate) fn sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn opt_i64(v: Option<u64>) -> Option<i64> {
    v.map(to_i64)
}

pub(crate) fn get_u64(row: &AnyRow, col: &str) -> u64 {
    row.try_get::<i64, _>(col).map(|v| v.max(0) as u64).unwrap_or(0)
}

pub(crate) fn get_opt_u64(row: &AnyRow, col: &str) -> Option<u64> {
    row.try_get::<Option<i64>, _>(col)
        .ok()
        .flatten()
        .map(|v| v.max(0) as u64)
}

pub(crate) fn get_string(row: &AnyRow, col: &str) -> String {
    row.try_get::<String, _>(col).unwrap_or_default()
}

pub(crate) fn get_opt_string(row: &AnyRow, col: &str) -> Option<String> {
    row.try_get::<Option<String>, _>(col).ok().flatten()
}

pub(crate) fn parse_json(text: Option<String>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

pub(crate) type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// Values up to this size (as JSON text) live in their row; larger ones are
/// stored once in `blobs` and referenced by hash.
pub(crate) const INLINE_LIMIT: usize = 2048;

/// A value as a row holds it: inline, or by the hash of its blob.
pub(crate) struct Stored {
    pub(crate) inline: Option<String>,
    pub(crate) hash: Option<String>,
    pub(crate) body: Option<String>,
}

impl Stored {
    pub(crate) fn of(value: Option<&Value>) -> Stored {
        match value.map(Value::to_string) {
            None => Stored {
                inline: None,
                hash: None,
                body: None,
            },
            Some(text) if text.len() <= INLINE_LIMIT => Stored {
                inline: Some(text),
                hash: None,
                body: None,
            },
            Some(text) => Stored {
                inline: None,
                hash: Some(sha256(&text)),
                body: Some(text),
            },
        }
    }
}

pub(crate) type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;
