//! A merchant's event feed: every state change of its orders, in one
//! order, read by a cursor that never skips an event.
//!
//! Why the cursor is sound. An event is written in the transaction of the
//! change, without a position. Positions are handed out afterwards, by
//! `sequence`: one pass at a time (each pass first updates the single
//! `event_positions` row and holds that lock until it commits; on SQLite
//! the write lock does the same), numbering the committed events that
//! have none, in the order they were inserted, from one above the last
//! position handed out. So every pass commits all its positions at once,
//! and every position a later pass hands out is above every position an
//! earlier pass committed. A reader that has seen position `p` has seen
//! every committed position below `p`, and every position it has not seen
//! yet will be above `p`: reading `position > p` misses nothing. An event
//! that commits late simply has no position until the next pass, and then
//! one above every position already readable. Two events of one order are
//! written by transactions that lock the order one after the other, so the
//! first is committed (and inserted with the smaller `seq`) before the
//! second is inserted: they keep their order in the feed.
//!
//! Every commit that wrote an event rings the sequencer (`Db`'s bell),
//! and it also runs every `SWEEP` on its own, so an event committed by an
//! instance that died before its pass is placed by another instance.

use crate::domain::error::ApiError;
use crate::domain::status::{CallbackStatus, DeliveryStatus, OrderKind};
use crate::store::queries::events::FeedFilter;
use crate::store::rows::{CallbackDeliveryRow as Delivery, MerchantEventRow, NewMerchantEventRow};
use crate::store::{Store, StoreResult};
use crate::App;
use std::collections::HashMap;

/// How many events one pass places at most.
const PASS: i64 = 1000;
/// How many expired events one sweep deletes at most.
const FORGET: i64 = 5000;
const DEFAULT_LIMIT: i64 = 100;
pub const MAX_LIMIT: i64 = 500;

/// An event as the change writes it.
pub struct Recorded<'a> {
    pub id: String,
    pub merchant_id: &'a str,
    pub kind: OrderKind,
    pub order_no: &'a str,
    pub event: &'a str,
    pub body: &'a str,
    pub delivery_id: Option<String>,
}

/// Writes the event inside the change's transaction.
pub async fn record(tx: &mut dyn Store, event: Recorded<'_>, now: i64) -> StoreResult<()> {
    tx.insert_merchant_event(&NewMerchantEventRow {
        id: event.id,
        merchant_id: event.merchant_id.to_string(),
        order_kind: event.kind,
        order_no: event.order_no.to_string(),
        event: event.event.to_string(),
        body: event.body.to_string(),
        delivery_id: event.delivery_id,
        created_at: now,
        position: None,
    })
    .await
}

/// Places every committed event that has no position yet; how many.
pub async fn sequence(app: &App) -> Result<i64, ApiError> {
    let mut placed = 0;
    loop {
        let n = app
            .db
            .transaction::<_, ApiError, _>(|tx| {
                Box::pin(async move { Ok(tx.sequence_events(PASS).await?) })
            })
            .await?;
        placed += n;
        if n < PASS {
            return Ok(placed);
        }
    }
}

/// Deletes the events older than `event_retention_days`; how many.
pub async fn forget_expired(app: &App) -> Result<usize, ApiError> {
    let before = app.now_unix() - app.config.event_retention_days * 86_400;
    let mut forgotten = 0;
    loop {
        let n = app
            .db
            .run(move |s| Box::pin(async move { s.forget_events_before(before, FORGET).await }))
            .await?;
        forgotten += n;
        if n < usize::try_from(FORGET).unwrap_or(usize::MAX) {
            return Ok(forgotten);
        }
    }
}

/// What a merchant asked of its feed.
#[derive(Clone, Debug, Default)]
pub struct FeedRead {
    pub after: Option<String>,
    pub types: Option<String>,
    pub limit: Option<i64>,
}

/// One event as the feed shows it, with its callback's state when the
/// order has a `callback_url`.
pub struct Event {
    pub row: MerchantEventRow,
    pub delivery: Option<Delivery>,
}

pub struct Feed {
    pub events: Vec<Event>,
    /// Where the next read resumes: after the last event given, or where
    /// this read started when it found none.
    pub next_cursor: String,
    pub has_more: bool,
}

/// The event names a `types` filter may hold.
pub const EVENT_NAMES: &[&str] = &[
    "deposit.matched",
    "deposit.completed",
    "deposit.expired",
    "deposit.cancelled",
    "withdrawal.approved",
    "withdrawal.completed",
    "withdrawal.rejected",
    "withdrawal.failed",
];

/// Reads the merchant's events after the cursor, oldest first.
pub async fn feed(app: &App, merchant_id: &str, read: FeedRead) -> Result<Feed, ApiError> {
    let limit = read.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::invalid_field(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        ));
    }
    let after = match read.after.as_deref() {
        None | Some("") => 0,
        Some(text) => cursor(text)?,
    };
    let events = types(read.types.as_deref())?;
    let filter = FeedFilter {
        merchant_id: merchant_id.to_string(),
        after,
        events,
        limit: limit + 1,
    };
    let (mut rows, deliveries) = app
        .db
        .run(move |s| {
            Box::pin(async move {
                let rows = s.merchant_feed(&filter).await?;
                let ids: Vec<String> = rows.iter().filter_map(|r| r.delivery_id.clone()).collect();
                let deliveries = if ids.is_empty() {
                    Vec::new()
                } else {
                    s.deliveries_by_ids(&ids).await?
                };
                Ok::<_, crate::store::StoreError>((rows, deliveries))
            })
        })
        .await?;
    let has_more = rows.len() > usize::try_from(limit).unwrap_or(usize::MAX);
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let next = rows.last().and_then(|r| r.position).unwrap_or(after);
    let mut by_id: HashMap<String, Delivery> =
        deliveries.into_iter().map(|d| (d.id.clone(), d)).collect();
    let events = rows
        .into_iter()
        .map(|row| {
            let delivery = row.delivery_id.as_ref().and_then(|id| by_id.remove(id));
            Event { row, delivery }
        })
        .collect();
    Ok(Feed {
        events,
        next_cursor: format!("ev_{next}"),
        has_more,
    })
}

fn cursor(text: &str) -> Result<i64, ApiError> {
    text.strip_prefix("ev_")
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| *n >= 0)
        .ok_or_else(|| ApiError::invalid_field("after", "is not a cursor this service issued"))
}

fn types(text: Option<&str>) -> Result<Vec<String>, ApiError> {
    let Some(text) = text.filter(|t| !t.is_empty()) else {
        return Ok(Vec::new());
    };
    text.split(',')
        .map(|name| {
            if EVENT_NAMES.contains(&name) {
                Ok(name.to_string())
            } else {
                Err(ApiError::invalid_field(
                    "types",
                    format!(
                        "names an unknown event; one or more of {}, comma-separated",
                        EVENT_NAMES.join(", ")
                    ),
                ))
            }
        })
        .collect()
}

impl Event {
    /// The callback's state in the words an order's `callback_status`
    /// uses: none without `callback_url`.
    pub fn callback_status(&self) -> CallbackStatus {
        match self.delivery.as_ref().map(|d| d.status) {
            None => CallbackStatus::None,
            Some(DeliveryStatus::Success) => CallbackStatus::Success,
            Some(DeliveryStatus::Failed) => CallbackStatus::Failed,
            Some(DeliveryStatus::Sending | DeliveryStatus::WaitingRetry) => CallbackStatus::Pending,
        }
    }

    pub fn callback_attempts(&self) -> i32 {
        self.delivery.as_ref().map_or(0, |d| d.attempts)
    }
}
