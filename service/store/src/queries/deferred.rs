//! Rows a deferring transaction writes together at its end, instead of
//! one statement per row: on PostgreSQL one statement for every table
//! (each table's rows one `INSERT` of many rows, all but one of them in a
//! `WITH`), on SQLite one statement a row.
//!
//! Why: a batch of one merchant's completions wrote, for each completion,
//! its event, its callback record, its journal entry with its postings and
//! the channel's notification, each by a statement of its own: five round
//! trips, five parses and five executor starts per completion, where the
//! rows themselves cost the database little (measured in issue 56: on two
//! shared cores the machine's CPU, not the balance row's lock, bounded one
//! merchant's completions). A batch's units only insert into these
//! tables, never read them back, so holding the rows to the end changes no
//! answer: a unique key a row breaks is broken at the end instead, which
//! fails the batch as it failed before, and each unit is then run alone
//! (`group_commit`), not deferred. What is held is bounded by the batch:
//! at most `group_commit::BATCH` units' rows.
//!
//! An approval defers too (`withdrawals::approvals`): its approval row,
//! its event and its audit row are the last things it writes, so they
//! cost it one round trip instead of three.

use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::QueryResult;
use diesel_async::RunQueryDsl;

/// What a deferring transaction (`UnitOfWork::defer_inserts`) holds to
/// write before it commits.
#[derive(Debug, Default)]
pub struct Deferred {
    pub(crate) entries: Vec<JournalEntryRow>,
    pub(crate) postings: Vec<PostingRow>,
    pub(crate) events: Vec<NewMerchantEventRow>,
    pub(crate) deliveries: Vec<CallbackDeliveryRow>,
    pub(crate) notifications: Vec<ChannelNotificationRow>,
    pub(crate) approvals: Vec<ApprovalRow>,
    pub(crate) audits: Vec<AuditRow>,
}

#[async_trait]
pub trait DeferredQueries: Send {
    /// Writes what a deferring transaction held (nothing otherwise), and
    /// goes on deferring. The unit of work calls it before it commits.
    async fn write_deferred(&mut self) -> StoreResult<()>;
}

/// Hands each table's held rows to `$insert`, entries before the
/// postings that name them; the one list of the tables both backends
/// write.
macro_rules! held {
    ($d:ident, $insert:ident) => {
        $insert!(journal_entries::table, $d.entries);
        $insert!(postings::table, $d.postings);
        $insert!(merchant_events::table, $d.events);
        $insert!(callback_deliveries::table, $d.deliveries);
        $insert!(channel_notifications::table, $d.notifications);
        $insert!(withdrawal_approvals::table, $d.approvals);
        $insert!(audit_events::table, $d.audits);
    };
}

/// What a deferring transaction held, taken, leaving it deferring what
/// comes after; `None` when it does not defer.
fn take(deferred: &mut Option<Deferred>) -> Option<Deferred> {
    deferred.as_mut().map(std::mem::take)
}

/// Every held table's `INSERT` as one statement: all but the last in a
/// `WITH`. PostgreSQL runs a `WITH`'s inserts as parts of the one
/// statement, and checks a posting's reference to its entry at the
/// statement's end, when both are in. Not prepared: a batch's size varies
/// from one to `BATCH` units, and each size would be a statement of its
/// own to keep.
struct Together<'a>(Vec<Box<dyn QueryFragment<Pg> + Send + 'a>>);

impl QueryFragment<Pg> for Together<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.unsafe_to_cache_prepared();
        let Some((last, first)) = self.0.split_last() else {
            return Ok(());
        };
        for (i, insert) in first.iter().enumerate() {
            out.push_sql(if i == 0 { "WITH " } else { ", " });
            out.push_identifier(&format!("held_{i}"))?;
            out.push_sql(" AS (");
            insert.walk_ast(out.reborrow())?;
            out.push_sql(")");
        }
        if !first.is_empty() {
            out.push_sql(" ");
        }
        last.walk_ast(out.reborrow())
    }
}

impl QueryId for Together<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

#[async_trait]
impl DeferredQueries for crate::Tx<'_, diesel_async::AsyncPgConnection> {
    async fn write_deferred(&mut self) -> StoreResult<()> {
        let Some(d) = take(&mut self.deferred) else {
            return Ok(());
        };
        let mut inserts: Vec<Box<dyn QueryFragment<Pg> + Send + '_>> = Vec::new();
        macro_rules! add {
            ($table:expr, $rows:expr) => {
                if !$rows.is_empty() {
                    inserts.push(Box::new(diesel::insert_into($table).values(&$rows)));
                }
            };
        }
        held!(d, add);
        if !inserts.is_empty() {
            Together(inserts).execute(self.c()).await?;
        }
        Ok(())
    }
}

#[async_trait]
impl DeferredQueries for crate::Tx<'_, crate::SqliteConn> {
    /// One statement a row: SQLite's diesel backend has no multi-row
    /// insert for these rows, and there a statement costs no round trip.
    async fn write_deferred(&mut self) -> StoreResult<()> {
        let Some(d) = take(&mut self.deferred) else {
            return Ok(());
        };
        macro_rules! each {
            ($table:expr, $rows:expr) => {
                for row in &$rows {
                    diesel::insert_into($table)
                        .values(row)
                        .execute(self.c())
                        .await?;
                }
            };
        }
        held!(d, each);
        Ok(())
    }
}
