//! What a merchant reads to reconcile: its event feed, its balance lines,
//! its order lists and its daily statements. Each is a signed read
//! (`merchant.rs`); the rules are the use cases'.

use super::{deposit_order, withdrawal_order};
use crate::app::balance_history::{self, Statement};
use crate::app::events::{self, FeedRead};
use crate::app::listings::{self, Listing};
use crate::app::merchants::Merchant;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::domain::status::OrderKind;
use crate::enums::Spelled;
use merchant_api::merchant::types;
use merchant_api::merchant::{
    GetStatementPath, GetStatementQuery, ListBalanceTransactionsQuery, ListDepositsQuery,
    ListEventsQuery, ListWithdrawalsQuery,
};
use payments_wire::DecimalString;
use std::sync::Arc;

fn money(units: i64) -> DecimalString {
    DecimalString(from_units(units))
}

fn at(unix: i64) -> Result<chrono::DateTime<chrono::Utc>, ApiError> {
    Ok(crate::clock::from_unix(unix)?)
}

pub(super) async fn list_events(
    app: Arc<App>,
    merchant: Merchant,
    query: ListEventsQuery,
) -> Result<types::EventList, ApiError> {
    let read = FeedRead {
        after: query.after,
        types: query.types,
        limit: query.limit,
    };
    let feed = events::feed(&app, &merchant.id, read).await?;
    let mut items = Vec::with_capacity(feed.events.len());
    for event in &feed.events {
        let row = &event.row;
        let data = serde_json::from_str(&row.body).map_err(|e| {
            ApiError::Internal(format!("event {} has a body that is not JSON: {e}", row.id))
        })?;
        items.push(types::MerchantEvent {
            event_id: row.id.clone(),
            event: row.event.parse().map_err(|_| {
                ApiError::Internal(format!("event {} names an unknown event", row.id))
            })?,
            order_kind: match row.order_kind {
                OrderKind::Deposit => types::MerchantEventOrderKind::Deposit,
                OrderKind::Withdrawal => types::MerchantEventOrderKind::Withdrawal,
                // Platform events go to the platform, never into a
                // merchant's feed: such a row is not one this code wrote.
                OrderKind::OwnerInvitation | OrderKind::BillingStatement => {
                    return Err(ApiError::Internal(format!(
                        "event {} of a merchant's feed is a platform event",
                        row.id
                    )))
                }
            },
            order_no: row.order_no.clone(),
            created_at: at(row.created_at)?,
            data,
            callback_status: event.callback_status().spelled(),
            callback_attempts: event.callback_attempts(),
        });
    }
    Ok(types::EventList {
        items,
        next_cursor: feed.next_cursor,
        has_more: feed.has_more,
    })
}

pub(super) async fn list_balance_transactions(
    app: Arc<App>,
    merchant: Merchant,
    query: ListBalanceTransactionsQuery,
) -> Result<types::BalanceTransactionList, ApiError> {
    let lines = balance_history::lines(
        &app,
        &merchant.id,
        &query.currency_code,
        query.after.as_deref(),
        query.limit,
    )
    .await?;
    let mut items = Vec::with_capacity(lines.items.len());
    for l in lines.items {
        items.push(types::BalanceTransaction {
            amount: money(l.available_change + l.frozen_change),
            available_change: money(l.available_change),
            frozen_change: money(l.frozen_change),
            fee: money(l.fee),
            available_after: money(l.available_after),
            frozen_after: money(l.frozen_after),
            created_at: at(l.created_at)?,
            version: l.version,
            type_: l.kind,
            order_no: l.order_no,
            merchant_order_no: l.merchant_order_no,
            id: l.id,
        });
    }
    Ok(types::BalanceTransactionList {
        currency_code: query.currency_code,
        items,
        next_cursor: lines.next_cursor,
    })
}

/// A merchant's order listing: its own orders only.
fn listing(
    merchant: &Merchant,
    from: Option<types::Timestamp>,
    to: Option<types::Timestamp>,
    status: Option<String>,
    cursor: Option<String>,
    limit: Option<i64>,
) -> Listing {
    Listing {
        limit,
        cursor,
        status,
        merchant_id: Some(merchant.id.clone()),
        created_from: from.map(|t| t.0.timestamp()),
        created_to: to.map(|t| t.0.timestamp()),
        ..Listing::default()
    }
}

pub(super) async fn list_deposits(
    app: Arc<App>,
    merchant: Merchant,
    q: ListDepositsQuery,
) -> Result<types::DepositOrderList, ApiError> {
    let status = q.status.map(|s| s.to_string());
    let asked = listing(
        &merchant,
        q.created_from,
        q.created_to,
        status,
        q.cursor,
        q.limit,
    );
    let page = listings::deposits(&app, asked).await?;
    Ok(types::DepositOrderList {
        items: page
            .items
            .iter()
            .map(|(order, _)| deposit_order(&app, &merchant, order))
            .collect(),
        next_cursor: page.next_cursor,
    })
}

pub(super) async fn list_withdrawals(
    app: Arc<App>,
    merchant: Merchant,
    q: ListWithdrawalsQuery,
) -> Result<types::WithdrawalOrderList, ApiError> {
    let status = q.status.map(|s| s.to_string());
    let asked = listing(
        &merchant,
        q.created_from,
        q.created_to,
        status,
        q.cursor,
        q.limit,
    );
    let page = listings::withdrawals(&app, asked).await?;
    let items = page
        .items
        .iter()
        .map(|(order, _)| withdrawal_order(&merchant, order))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(types::WithdrawalOrderList {
        items,
        next_cursor: page.next_cursor,
    })
}

pub(super) async fn get_statement(
    app: Arc<App>,
    merchant: Merchant,
    path: GetStatementPath,
    query: GetStatementQuery,
) -> Result<types::DailyStatement, ApiError> {
    let s =
        balance_history::statement(&app, &merchant.id, &path.date, &query.currency_code).await?;
    statement_view(s)
}

fn statement_view(s: Statement) -> Result<types::DailyStatement, ApiError> {
    let lines = s
        .totals
        .into_iter()
        .map(|t| types::StatementLine {
            amount: money(t.available_change + t.frozen_change),
            available_change: money(t.available_change),
            frozen_change: money(t.frozen_change),
            fee: money(t.fee),
            count: t.count,
            type_: t.kind,
        })
        .collect();
    Ok(types::DailyStatement {
        date: s.date,
        currency_code: s.currency,
        period_start: at(s.from)?,
        period_end: at(s.to)?,
        opening_available: money(s.opening.0),
        opening_frozen: money(s.opening.1),
        opening_balance: money(s.opening.0 + s.opening.1),
        lines,
        closing_available: money(s.closing.0),
        closing_frozen: money(s.closing.1),
        closing_balance: money(s.closing.0 + s.closing.1),
    })
}
