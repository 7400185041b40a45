//! Statements kept prepared that diesel would prepare again on every call.
//!
//! diesel marks every UPDATE and every `sql_query` as unsafe to keep
//! prepared: an UPDATE's changeset may leave out its `None` fields, and raw
//! SQL may be built per call. So PostgreSQL parses and plans each of them
//! every time, and the connection spends a round trip preparing it before
//! the one that runs it. Measured with `pg_stat_statements` on the channel
//! bench (issue 56): planning alone was about 0.4 ms of an approval's and
//! 0.5 ms of a paid deposit's database time, on four and five such
//! statements.
//!
//! Those wrapped here have one text per shape at their call site (a
//! changeset's optional fields give a few shapes, never one per value), so
//! keeping them is safe: without a static query id the statement cache's
//! key is the SQL text and its bind types, and two shapes never share a
//! statement. A statement whose text grows with its input (a multi-row
//! insert of any length, an `IN` list on SQLite) is not wrapped: each
//! length would be kept. Where such a statement is hot, its rows go in as
//! arrays instead, one text for any number (`queries/deferred.rs`).

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::QueryResult;

/// A statement kept prepared by its text (see the module's comment).
#[derive(Debug, Clone, Copy)]
pub struct Prepared<Q>(Q);

impl<Q> QueryId for Prepared<Q> {
    type QueryId = ();

    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Prepared<Q> {
    type SqlType = Q::SqlType;
}

impl<DB: Backend, Q: QueryFragment<DB>> QueryFragment<DB> for Prepared<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    // What diesel's own walk would answer `false` for: the text is fixed
    // per shape, and the cache keys it by that text.
    fn is_safe_to_cache_prepared(&self, _backend: &DB) -> QueryResult<bool> {
        Ok(true)
    }
}

/// `.prepared()` on a statement whose text is fixed per shape.
pub trait KeepPrepared: Sized {
    fn prepared(self) -> Prepared<Self> {
        Prepared(self)
    }
}

impl<Q> KeepPrepared for Q {}

#[cfg(test)]
mod tests {
    use super::KeepPrepared;
    use crate::schema::withdrawal_orders;
    use diesel::pg::Pg;
    use diesel::prelude::*;
    use diesel::query_builder::QueryFragment;
    use diesel::sqlite::Sqlite;

    #[test]
    fn an_update_diesel_would_prepare_on_every_call_is_kept_with_its_text_unchanged() {
        let update = || {
            diesel::update(withdrawal_orders::table.filter(withdrawal_orders::id.eq("w-1")))
                .set(withdrawal_orders::payout_sent_at.eq(1_i64))
        };
        assert!(!update().is_safe_to_cache_prepared(&Pg).unwrap());
        assert!(update().prepared().is_safe_to_cache_prepared(&Pg).unwrap());
        assert!(update()
            .prepared()
            .is_safe_to_cache_prepared(&Sqlite)
            .unwrap());
        assert_eq!(
            diesel::debug_query::<Pg, _>(&update()).to_string(),
            diesel::debug_query::<Pg, _>(&update().prepared()).to_string()
        );
    }

    #[test]
    fn raw_sql_is_kept_by_its_text_too() {
        let raw =
            || diesel::sql_query("SELECT 1 WHERE $1").bind::<diesel::sql_types::Bool, _>(true);
        assert!(!raw().is_safe_to_cache_prepared(&Pg).unwrap());
        assert!(raw().prepared().is_safe_to_cache_prepared(&Pg).unwrap());
    }
}
