//! What is PostgreSQL's own in a ledger: a `postgres://` URL as a target, its
//! password kept out of messages, its pool, and its error codes (SQLSTATE).

use planexec::store::StoreErrorKind;

/// Whether a ledger target names a PostgreSQL database.
pub(crate) fn is_url(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

/// Connections in the pool: PostgreSQL takes writers side by side.
pub(crate) const MAX_CONNECTIONS: u32 = 4;

/// The ledger's tables: those of the current schema.
pub(crate) const TABLES: &str = "SELECT CAST(table_name AS TEXT) AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1";

/// What a SQLSTATE says of the ledger.
pub(crate) fn error_kind(code: &str) -> Option<StoreErrorKind> {
    match code {
        "53100" => Some(StoreErrorKind::Full),
        "25006" => Some(StoreErrorKind::ReadOnly),
        "28P01" | "3D000" => Some(StoreErrorKind::Unavailable),
        _ => None,
    }
}

/// A database URL without its password, for messages.
pub(crate) fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}
