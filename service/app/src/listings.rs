//! Operator listings: newest first, a page at a time, resumed after the
//! last item by an opaque cursor, with the filters each kind has. The
//! paging rules (1 to 200 a page, 50 unless asked, the cursor's form, the
//! statuses a filter may name) are here; the SQL is the store's.

use crate::bank::BankTransaction;
use crate::callbacks::Delivery;
use crate::deposits::Deposit;
use crate::domain::error::ApiError;
use crate::domain::status::Role;
use crate::domain::status::{
    BankTransactionStatus, DeliveryStatus, DepositStatus, NotificationOutcome, OrderKind,
    WithdrawalStatus,
};
use crate::merchants::{self, Merchant};
use crate::notifications::Recorded;
use crate::store::paging::{Cursor, ListFilter};
use crate::store::queries::people::AuditFilter;
use crate::store::rows::{AuditRow, OperatorRow};
use crate::withdrawals::Withdrawal;
use crate::App;
use std::collections::HashMap;

const DEFAULT_LIMIT: i64 = 50;
const MAX_LIMIT: i64 = 200;

/// What an operator asked to list.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub limit: Option<i64>,
    pub cursor: Option<String>,
    pub status: Option<String>,
    pub merchant_id: Option<String>,
    pub account_id: Option<String>,
    pub order_no: Option<String>,
    pub channel_id: Option<String>,
    pub created_from: Option<i64>,
    pub created_to: Option<i64>,
    pub currency: Option<String>,
    /// At least this amount, in stored units.
    pub min_amount: Option<i64>,
    pub oldest_first: bool,
}

/// One page, and where the next resumes (none after the last).
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

impl Listing {
    /// The store's filter: one item more than the page holds, to know
    /// whether another page follows.
    pub(crate) fn filter<S: Copy + std::fmt::Display>(
        self,
        statuses: &[S],
    ) -> Result<ListFilter, ApiError> {
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(ApiError::invalid_field(
                "limit",
                format!("must be between 1 and {MAX_LIMIT}"),
            ));
        }
        Ok(ListFilter {
            limit: limit + 1,
            after: self.cursor.as_deref().map(cursor).transpose()?,
            status: status_filter(self.status, statuses)?,
            merchant_id: self.merchant_id,
            account_id: self.account_id,
            order_no: self.order_no,
            channel_id: self.channel_id,
            created_from: self.created_from,
            created_to: self.created_to,
            actions: None,
            order_kinds: None,
            currency: self.currency,
            min_amount: self.min_amount,
            oldest_first: self.oldest_first,
        })
    }
}

fn cursor(text: &str) -> Result<Cursor, ApiError> {
    let bad = || ApiError::invalid_field("cursor", "is not a cursor this service issued");
    let (at, key) = text.split_once('.').ok_or_else(bad)?;
    Ok(Cursor {
        created_at: at.parse().map_err(|_| bad())?,
        key: key.to_string(),
    })
}

/// A listing's `status` filter: one of the statuses the listed kind has.
fn status_filter<S: Copy + std::fmt::Display>(
    value: Option<String>,
    allowed: &[S],
) -> Result<Option<String>, ApiError> {
    match value {
        Some(v) if !allowed.iter().any(|s| s.to_string() == v) => {
            let names: Vec<String> = allowed.iter().map(ToString::to_string).collect();
            Err(ApiError::invalid_field(
                "status",
                format!("must be one of {}", names.join(", ")),
            ))
        }
        other => Ok(other),
    }
}

/// Cuts the extra item off and turns the last kept one into the cursor.
pub(crate) fn page<T>(
    mut rows: Vec<T>,
    filter: &ListFilter,
    key: impl Fn(&T) -> (i64, &str),
) -> Page<T> {
    let wanted = usize::try_from(filter.limit - 1).unwrap_or(0);
    if rows.len() <= wanted {
        return Page {
            items: rows,
            next_cursor: None,
        };
    }
    rows.truncate(wanted);
    let next_cursor = rows.last().map(|r| {
        let (at, k) = key(r);
        format!("{at}.{k}")
    });
    Page {
        items: rows,
        next_cursor,
    }
}

/// Change requests, newest first; pending ones past their time are
/// marked expired first, so that a `pending` filter lists only live ones.
/// Merchants looked up once per page, not once per order.
#[derive(Default)]
struct MerchantsSeen(HashMap<String, Merchant>);

impl MerchantsSeen {
    async fn of(&mut self, app: &App, id: &str) -> Result<Merchant, ApiError> {
        if let Some(found) = self.0.get(id) {
            return Ok(found.clone());
        }
        let found = merchants::find(app, id).await?;
        self.0.insert(id.to_string(), found.clone());
        Ok(found)
    }
}

pub async fn deposits(app: &App, listing: Listing) -> Result<Page<(Deposit, Merchant)>, ApiError> {
    let filter = listing.filter(DepositStatus::ALL)?;
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.list_deposits(&f).await }))
        .await?;
    let rows = page(rows, &filter, |r| (r.created_at, &r.order_no));
    let mut seen = MerchantsSeen::default();
    let mut items = Vec::with_capacity(rows.items.len());
    for row in rows.items {
        let order = Deposit::from_row(row)?;
        let merchant = seen.of(app, &order.merchant_id).await?;
        items.push((order, merchant));
    }
    Ok(Page {
        items,
        next_cursor: rows.next_cursor,
    })
}

/// How many withdrawals a listing matches, every page together.
pub async fn count_withdrawals(app: &App, listing: Listing) -> Result<i64, ApiError> {
    let filter = listing.filter(WithdrawalStatus::ALL)?;
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.count_withdrawals(&filter).await }))
        .await?)
}

pub async fn withdrawals(
    app: &App,
    listing: Listing,
) -> Result<Page<(Withdrawal, Merchant)>, ApiError> {
    let filter = listing.filter(WithdrawalStatus::ALL)?;
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.list_withdrawals(&f).await }))
        .await?;
    let rows = page(rows, &filter, |r| (r.created_at, &r.order_no));
    let mut seen = MerchantsSeen::default();
    let mut items = Vec::with_capacity(rows.items.len());
    for row in rows.items {
        let order = Withdrawal::from_row(row)?;
        let merchant = seen.of(app, &order.merchant_id).await?;
        items.push((order, merchant));
    }
    Ok(Page {
        items,
        next_cursor: rows.next_cursor,
    })
}

pub async fn bank_transactions(
    app: &App,
    listing: Listing,
) -> Result<Page<BankTransaction>, ApiError> {
    let filter = listing.filter(BankTransactionStatus::ALL)?;
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.list_bank_transactions(&f).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.created_at, &r.id)))
}

pub async fn callback_deliveries(app: &App, listing: Listing) -> Result<Page<Delivery>, ApiError> {
    deliveries(app, listing.filter(DeliveryStatus::ALL)?).await
}

/// Platform events' deliveries (owner invitations, billing statements),
/// newest first.
pub async fn platform_deliveries(app: &App, listing: Listing) -> Result<Page<Delivery>, ApiError> {
    let filter = ListFilter {
        order_kinds: Some(
            OrderKind::ALL
                .iter()
                .filter(|k| k.is_platform())
                .map(|k| k.as_str().to_string())
                .collect(),
        ),
        ..listing.filter(DeliveryStatus::ALL)?
    };
    deliveries(app, filter).await
}

async fn deliveries(app: &App, filter: ListFilter) -> Result<Page<Delivery>, ApiError> {
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.list_callback_deliveries(&f).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.created_at, &r.id)))
}

/// Channel notifications, newest received first; `status` filters by
/// outcome.
pub async fn channel_notifications(
    app: &App,
    listing: Listing,
) -> Result<Page<Recorded>, ApiError> {
    let filter = listing.filter(NotificationOutcome::ALL)?;
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.list_channel_notifications(&f).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.received_at, &r.id)))
}

/// Operators, newest first.
pub async fn operators(app: &App, listing: Listing) -> Result<Page<OperatorRow>, ApiError> {
    let filter = listing.filter::<Role>(&[])?;
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.operators_page(&f).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.created_at, &r.id)))
}

/// Merchants newest first; `search` is a code in full or a part of a name.
pub async fn merchants(
    app: &App,
    listing: Listing,
    search: Option<String>,
) -> Result<Page<crate::store::rows::MerchantRow>, ApiError> {
    let filter = listing.filter(crate::domain::status::MerchantStatus::ALL)?;
    let search = search
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    if search.as_ref().is_some_and(|t| t.chars().count() > 128) {
        return Err(ApiError::invalid_field(
            "q",
            "must be at most 128 characters",
        ));
    }
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.merchants_page(&f, search.as_deref()).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.created_at, &r.id)))
}

/// A merchant's owner invitations, newest first.
pub async fn owner_invitations(
    app: &App,
    merchant_id: &str,
    listing: Listing,
) -> Result<Page<crate::store::rows::InvitationRow>, ApiError> {
    let filter = listing.filter::<crate::domain::status::InvitationStatus>(&[])?;
    let f = filter.clone();
    let merchant = merchant_id.to_string();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.invitations_page(&merchant, &f).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.issued_at, &r.id)))
}

/// The audit trail, newest first.
pub async fn audit_events(
    app: &App,
    listing: Listing,
    audit: AuditFilter,
) -> Result<Page<AuditRow>, ApiError> {
    let filter = listing.filter::<Role>(&[])?;
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.audit_page(&audit, &f).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.created_at, &r.id)))
}

/// Billing statements, newest issued first; one merchant's when the
/// listing names it.
pub async fn billing_statements(
    app: &App,
    listing: Listing,
) -> Result<Page<crate::store::rows::StatementRow>, ApiError> {
    let filter = listing.filter::<crate::domain::status::StatementStatus>(&[])?;
    let f = filter.clone();
    let rows = app
        .db
        .run(|s| Box::pin(async move { s.statements_page(&f).await }))
        .await?;
    Ok(page(rows, &filter, |r| (r.issued_at, &r.id)))
}
