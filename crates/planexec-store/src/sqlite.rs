//! What is SQLite's own in a ledger: a file path or `sqlite:` URL as a target,
//! the file checked before SQLite touches it, the pragmas each connection gets
//! (write-ahead logging, durability, a busy timeout, foreign keys), and its
//! error codes.

use std::path::{Path, PathBuf};

use planexec::store::{StoreError, StoreErrorKind};

/// How hard SQLite works to keep each commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous=FULL`: a commit survives a crash of the process and of the
    /// machine (power loss). The default.
    #[default]
    Full,
    /// `synchronous=NORMAL`: a commit survives a crash of the process; a power
    /// loss may drop the last few commits (never corrupts).
    Normal,
}

/// The `sqlx` URL and the location shown in messages for a target that is a
/// file path or a `sqlite:` URL, after checking that the file, if there is
/// one, is a SQLite database.
pub(crate) fn url_and_location(target: &str) -> Result<(String, String), StoreError> {
    let path = PathBuf::from(
        target
            .strip_prefix("sqlite://")
            .or(target.strip_prefix("sqlite:"))
            .unwrap_or(target),
    );
    check_file(&path)?;
    Ok((
        format!("sqlite://{}?mode=rwc", url_path(&path)),
        format!("sqlite:{}", path.display()),
    ))
}

/// Run on the first connection before its schema is checked.
pub(crate) const BEFORE_CHECK: &str = "PRAGMA busy_timeout = 10000";

/// Write-ahead logging: readers never block the writer, and a commit is one
/// append. Only switched on for a ledger whose schema was accepted.
pub(crate) const AFTER_CHECK: &str = "PRAGMA journal_mode = WAL";

/// Run on every pooled connection.
pub(crate) fn on_each_connection(durability: Durability) -> &'static str {
    match durability {
        Durability::Full => "PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL",
        Durability::Normal => "PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
    }
}

/// One writer at a time is all SQLite has; a single connection avoids lock
/// contention between our own connections.
pub(crate) const MAX_CONNECTIONS: u32 = 1;

/// The ledger's tables, without SQLite's own.
pub(crate) const TABLES: &str =
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name";

/// What a SQLite result code says of the ledger. SQLite reports extended
/// result codes; the primary code is the low byte.
pub(crate) fn error_kind(code: &str) -> Option<StoreErrorKind> {
    match code.parse::<i64>().ok()? & 0xff {
        13 => Some(StoreErrorKind::Full),
        8 => Some(StoreErrorKind::ReadOnly),
        26 | 11 => Some(StoreErrorKind::Corrupt),
        14 => Some(StoreErrorKind::Unavailable),
        _ => None,
    }
}

/// Refuse, before SQLite touches it, a file that is not a SQLite database.
fn check_file(path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    if path.is_dir() {
        return Err(StoreError::new(
            StoreErrorKind::Unavailable,
            format!(
                "the ledger path {} is a directory; give a file path (e.g. {}/ledger.db)",
                path.display(),
                path.display()
            ),
        ));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            StoreError::new(
                StoreErrorKind::Unavailable,
                format!("cannot create the folder {} for the ledger: {e}", parent.display()),
            )
        })?;
    }
    let mut header = [0u8; 16];
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let n = f.read(&mut header).unwrap_or(0);
            if n > 0 && (n < 16 || &header != b"SQLite format 3\0") {
                return Err(StoreError::new(
                    StoreErrorKind::Corrupt,
                    format!(
                        "{} is not a SQLite database (it does not start with the SQLite header): it was left as it is. Choose another ledger with --db or PLANEXEC_DB",
                        path.display()
                    ),
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::new(
            StoreErrorKind::Unavailable,
            format!("cannot read the ledger {}: {e}", path.display()),
        )),
    }
}

/// A path as the path part of a `sqlite://` URL.
fn url_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3F"),
            '#' => out.push_str("%23"),
            ' ' => out.push_str("%20"),
            c => out.push(c),
        }
    }
    out
}
