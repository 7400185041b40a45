//! Rows a deferring transaction writes together at its end, instead of
//! one statement per row: on PostgreSQL one statement for every table
//! (each table's rows one `INSERT` from one array a column, all but one of
//! them in a `WITH`), on SQLite one statement a row.
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

use super::arrays::{column, Column, Table};
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
/// postings that name them: SQLite's list of the held tables.
/// PostgreSQL's is `tables`, which takes `Deferred` apart field by field,
/// so that a table held later cannot be missed there.
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

/// Every table a deferring transaction holds rows for, each as its
/// `INSERT`, entries before the postings that name them.
fn tables(d: &Deferred) -> Vec<Table<'_>> {
    // Named field by field, so that a table held later and not added
    // here fails to compile instead of its rows going unwritten.
    let Deferred {
        entries: e,
        postings: p,
        events: m,
        deliveries: c,
        notifications: n,
        approvals: a,
        audits: u,
    } = d;
    vec![
        entries(e),
        postings(p),
        events(m),
        deliveries(c),
        notifications(n),
        approvals(a),
        audits(u),
    ]
}

fn entries(e: &[JournalEntryRow]) -> Table<'_> {
    use Column::*;
    Table {
        name: "journal_entries",
        columns: "id, merchant_id, currency, kind, order_no, created_at",
        in_order: false,
        values: vec![
            Text(column(e, |r| r.id.as_str())),
            Text(column(e, |r| r.merchant_id.as_str())),
            Text(column(e, |r| r.currency.as_str())),
            Text(column(e, |r| r.kind.as_str())),
            Text(column(e, |r| r.order_no.as_str())),
            Int8(column(e, |r| r.created_at)),
        ],
    }
}

fn postings(p: &[PostingRow]) -> Table<'_> {
    use Column::*;
    Table {
        name: "postings",
        columns: "id, entry_id, account, currency, amount",
        in_order: false,
        values: vec![
            Text(column(p, |r| r.id.as_str())),
            Text(column(p, |r| r.entry_id.as_str())),
            Text(column(p, |r| r.account.as_str())),
            Text(column(p, |r| r.currency.as_str())),
            Int8(column(p, |r| r.amount)),
        ],
    }
}

fn events(m: &[NewMerchantEventRow]) -> Table<'_> {
    use Column::*;
    Table {
        name: "merchant_events",
        columns:
            "id, merchant_id, order_kind, order_no, event, body, delivery_id, created_at, position",
        in_order: true,
        values: vec![
            Text(column(m, |r| r.id.as_str())),
            Text(column(m, |r| r.merchant_id.as_str())),
            Text(column(m, |r| r.order_kind.as_str())),
            Text(column(m, |r| r.order_no.as_str())),
            Text(column(m, |r| r.event.as_str())),
            Text(column(m, |r| r.body.as_str())),
            MaybeText(column(m, |r| r.delivery_id.as_deref())),
            Int8(column(m, |r| r.created_at)),
            MaybeInt8(column(m, |r| r.position)),
        ],
    }
}

fn deliveries(c: &[CallbackDeliveryRow]) -> Table<'_> {
    use Column::*;
    Table {
        name: "callback_deliveries",
        columns:
            "id, merchant_id, order_kind, order_no, event, callback_url, body, status, attempts, \
     next_attempt_at, created_at, updated_at, signature, claim_token, queued_at_ms, \
     receiver_host, signing_key_id, order_created_at",
        in_order: false,
        values: vec![
            Text(column(c, |r| r.id.as_str())),
            Text(column(c, |r| r.merchant_id.as_str())),
            Text(column(c, |r| r.order_kind.as_str())),
            Text(column(c, |r| r.order_no.as_str())),
            Text(column(c, |r| r.event.as_str())),
            Text(column(c, |r| r.callback_url.as_str())),
            Text(column(c, |r| r.body.as_str())),
            Text(column(c, |r| r.status.as_str())),
            Int4(column(c, |r| r.attempts)),
            MaybeInt8(column(c, |r| r.next_attempt_at)),
            Int8(column(c, |r| r.created_at)),
            Int8(column(c, |r| r.updated_at)),
            MaybeText(column(c, |r| r.signature.as_deref())),
            MaybeText(column(c, |r| r.claim_token.as_deref())),
            MaybeInt8(column(c, |r| r.queued_at_ms)),
            MaybeText(column(c, |r| r.receiver_host.as_deref())),
            MaybeText(column(c, |r| r.signing_key_id.as_deref())),
            MaybeInt8(column(c, |r| r.order_created_at)),
        ],
    }
}

fn notifications(n: &[ChannelNotificationRow]) -> Table<'_> {
    use Column::*;
    Table {
        name: "channel_notifications",
        columns:
            "id, channel_id, notification_id, kind, order_no, amount, channel_cost, reference, \
     reason, outcome, occurred_at, received_at",
        in_order: false,
        values: vec![
            Text(column(n, |r| r.id.as_str())),
            Text(column(n, |r| r.channel_id.as_str())),
            Text(column(n, |r| r.notification_id.as_str())),
            Text(column(n, |r| r.kind.as_str())),
            Text(column(n, |r| r.order_no.as_str())),
            MaybeInt8(column(n, |r| r.amount)),
            MaybeInt8(column(n, |r| r.channel_cost)),
            MaybeText(column(n, |r| r.reference.as_deref())),
            MaybeText(column(n, |r| r.reason.as_deref())),
            Text(column(n, |r| r.outcome.as_str())),
            Int8(column(n, |r| r.occurred_at)),
            Int8(column(n, |r| r.received_at)),
        ],
    }
}

fn approvals(a: &[ApprovalRow]) -> Table<'_> {
    use Column::*;
    Table {
        name: "withdrawal_approvals",
        columns: "order_no, approver_key, approver_name, remarks, approved_at, id",
        in_order: false,
        values: vec![
            Text(column(a, |r| r.order_no.as_str())),
            Text(column(a, |r| r.approver_key.as_str())),
            Text(column(a, |r| r.approver_name.as_str())),
            MaybeText(column(a, |r| r.remarks.as_deref())),
            Int8(column(a, |r| r.approved_at)),
            Text(column(a, |r| r.id.as_str())),
        ],
    }
}

fn audits(u: &[AuditRow]) -> Table<'_> {
    use Column::*;
    Table {
        name: "audit_events",
        columns:
            "id, created_at, operator_id, operator_name, role, action, target_type, target_id, \
     remarks, request_id, before_state, after_state",
        in_order: false,
        values: vec![
            Text(column(u, |r| r.id.as_str())),
            Int8(column(u, |r| r.created_at)),
            MaybeText(column(u, |r| r.operator_id.as_deref())),
            Text(column(u, |r| r.operator_name.as_str())),
            Text(column(u, |r| r.role.as_str())),
            Text(column(u, |r| r.action.as_str())),
            Text(column(u, |r| r.target_type.as_str())),
            Text(column(u, |r| r.target_id.as_str())),
            MaybeText(column(u, |r| r.remarks.as_deref())),
            Text(column(u, |r| r.request_id.as_str())),
            MaybeText(column(u, |r| r.before_state.as_deref())),
            MaybeText(column(u, |r| r.after_state.as_deref())),
        ],
    }
}

/// Every held table's `INSERT` as one statement: all but the last in a
/// `WITH`. PostgreSQL runs a `WITH`'s inserts as parts of the one
/// statement, and checks a posting's reference to its entry at the
/// statement's end, when both are in.
///
/// Each table's rows go in as one array a column (`unnest`), so the
/// statement's text depends only on which tables hold rows, not on how
/// many: it is prepared once a connection and planned once (at most one
/// statement for each set of tables, 127). Written as `VALUES` lists, a
/// batch's text changed with its size and was parsed, analysed and
/// planned again every time: measured in issue 56 on the money path, that
/// was about a tenth of what one paid deposit cost all told.
struct Together<'a>(Vec<Table<'a>>);

impl QueryFragment<Pg> for Together<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
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
        let held: Vec<_> = tables(&d).into_iter().filter(|t| !t.is_empty()).collect();
        if !held.is_empty() {
            Together(held).execute(self.c()).await?;
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

#[cfg(test)]
mod tests {
    use super::super::arrays::selected;
    use super::*;
    use diesel::prelude::*;

    /// Each held table's columns are its table's own, every one, in the
    /// table's order (`merchant_events.seq` aside: the table numbers its
    /// rows). A column added to a table and its row but not here fails
    /// this test, not a write.
    #[test]
    fn every_held_table_writes_every_column_of_its_table() {
        let d = Deferred::default();
        let want = [
            (
                "journal_entries",
                selected(journal_entries::table.select(journal_entries::all_columns)),
            ),
            (
                "postings",
                selected(postings::table.select(postings::all_columns)),
            ),
            (
                "merchant_events",
                selected(merchant_events::table.select(merchant_events::all_columns))
                    .replacen("seq, ", "", 1),
            ),
            (
                "callback_deliveries",
                selected(callback_deliveries::table.select(callback_deliveries::all_columns)),
            ),
            (
                "channel_notifications",
                selected(channel_notifications::table.select(channel_notifications::all_columns)),
            ),
            (
                "withdrawal_approvals",
                selected(withdrawal_approvals::table.select(withdrawal_approvals::all_columns)),
            ),
            (
                "audit_events",
                selected(audit_events::table.select(audit_events::all_columns)),
            ),
        ];
        let held = tables(&d);
        assert_eq!(held.len(), want.len());
        for (table, (name, columns)) in held.iter().zip(want) {
            assert_eq!(table.name, name);
            let written = table
                .columns
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(written, columns, "{name}");
            assert_eq!(table.values.len(), columns.split(", ").count(), "{name}");
        }
    }

    fn entry(n: usize) -> Deferred {
        let mut d = Deferred::default();
        for i in 0..n {
            d.entries.push(JournalEntryRow {
                id: format!("e-{i}"),
                merchant_id: "m-1".into(),
                currency: "THB".into(),
                kind: "deposit_completed".into(),
                order_no: format!("D{i}"),
                created_at: 1,
            });
            for side in ["system:clearing", "merchant:m-1:available"] {
                d.postings.push(PostingRow {
                    id: format!("e-{i}-{side}"),
                    entry_id: format!("e-{i}"),
                    account: side.into(),
                    currency: "THB".into(),
                    amount: 1,
                });
            }
        }
        d
    }

    fn statement(d: &Deferred) -> Together<'_> {
        Together(tables(d).into_iter().filter(|t| !t.is_empty()).collect())
    }

    /// One row or many, the same text: the statement is kept prepared
    /// and planned once, where a `VALUES` list of each length was parsed
    /// and planned anew.
    #[test]
    fn held_rows_are_written_by_one_text_whatever_their_number() {
        let (one, many) = (entry(1), entry(40));
        let text = |d| diesel::debug_query::<Pg, _>(&statement(d)).to_string();
        let (one_text, many_text) = (text(&one), text(&many));
        let sql = |t: &str| t[..t.find(" -- binds").unwrap()].to_string();
        assert_eq!(sql(&one_text), sql(&many_text));
        assert!(statement(&many).is_safe_to_cache_prepared(&Pg).unwrap());
        assert_eq!(
            sql(&one_text),
            "WITH \"held_0\" AS (INSERT INTO journal_entries (id, merchant_id, currency, kind, \
             order_no, created_at) SELECT id, merchant_id, currency, kind, order_no, created_at \
             FROM unnest($1, $2, $3, $4, $5, $6) AS held (id, merchant_id, currency, kind, \
             order_no, created_at)) INSERT INTO postings (id, entry_id, account, currency, \
             amount) SELECT id, entry_id, account, currency, amount FROM unnest($7, $8, $9, \
             $10, $11) AS held (id, entry_id, account, currency, amount)"
        );
    }
}
