//! Rows a group commit's transaction writes together at its end, one
//! statement per table, instead of one statement per unit.
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

use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
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
}

#[async_trait]
pub trait DeferredQueries: Send {
    /// Writes what a deferring transaction held (nothing otherwise), and
    /// goes on deferring. The unit of work calls it before it commits.
    async fn write_deferred(&mut self) -> StoreResult<()>;
}

/// Writes what `$self` held, table by table, each by `$insert`: entries
/// first, as their postings name them.
macro_rules! write_held {
    ($self:ident, $insert:ident) => {{
        // Taken, leaving the transaction deferring what comes after.
        let Some(d) = $self.deferred.as_mut().map(std::mem::take) else {
            return Ok(());
        };
        $insert!($self, journal_entries::table, d.entries);
        $insert!($self, postings::table, d.postings);
        $insert!($self, merchant_events::table, d.events);
        $insert!($self, callback_deliveries::table, d.deliveries);
        $insert!($self, channel_notifications::table, d.notifications);
        Ok(())
    }};
}

/// One statement a table. Not prepared: a batch's size varies from one
/// to `BATCH` units, and each size would be a statement of its own to
/// keep.
macro_rules! together {
    ($self:ident, $table:expr, $rows:expr) => {
        if !$rows.is_empty() {
            diesel::insert_into($table)
                .values(&$rows)
                .execute($self.c())
                .await?;
        }
    };
}

/// One statement a row: SQLite's diesel backend has no multi-row insert
/// for these rows, and there a statement costs no round trip.
macro_rules! each {
    ($self:ident, $table:expr, $rows:expr) => {
        for row in &$rows {
            diesel::insert_into($table)
                .values(row)
                .execute($self.c())
                .await?;
        }
    };
}

#[async_trait]
impl DeferredQueries for crate::Tx<'_, diesel_async::AsyncPgConnection> {
    async fn write_deferred(&mut self) -> StoreResult<()> {
        write_held!(self, together)
    }
}

#[async_trait]
impl DeferredQueries for crate::Tx<'_, crate::SqliteConn> {
    async fn write_deferred(&mut self) -> StoreResult<()> {
        write_held!(self, each)
    }
}
