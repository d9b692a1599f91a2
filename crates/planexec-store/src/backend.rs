//! Which database a ledger lives in, and what the shared code asks of it: the
//! SQL each connection needs and how many connections the pool keeps. The
//! answers are in `sqlite.rs` and `postgres.rs`.

use crate::postgres;
use crate::sqlite::{self, Durability};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// SQL for the first connection, before the schema is checked.
    pub(crate) fn before_check(self) -> Option<&'static str> {
        (self == Backend::Sqlite).then_some(sqlite::BEFORE_CHECK)
    }

    /// SQL for the first connection, once the schema is accepted.
    pub(crate) fn after_check(self) -> Option<&'static str> {
        (self == Backend::Sqlite).then_some(sqlite::AFTER_CHECK)
    }

    /// SQL for every pooled connection.
    pub(crate) fn on_each_connection(self, durability: Durability) -> Option<&'static str> {
        (self == Backend::Sqlite).then(|| sqlite::on_each_connection(durability))
    }

    pub(crate) fn max_connections(self) -> u32 {
        match self {
            Backend::Sqlite => sqlite::MAX_CONNECTIONS,
            Backend::Postgres => postgres::MAX_CONNECTIONS,
        }
    }

    /// A query listing the ledger's tables in a column `name`.
    pub(crate) fn tables_query(self) -> &'static str {
        match self {
            Backend::Sqlite => sqlite::TABLES,
            Backend::Postgres => postgres::TABLES,
        }
    }
}
