//! One order's history in one line of time (issue 53): its state changes
//! as its feed recorded them, its balance lines (each ledger move on the
//! merchant's balance, the fee apart), its approvals, and its callbacks
//! with each attempt. Read from what is already kept; nothing is written.
//! What a page leaves out for an owner is the page's to decide.

use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::listings::{self, Listing};
use crate::App;
use rust_decimal::Decimal;

/// How many of each kind one timeline reads at most: far more than an
/// order has (a few changes, a few lines, a callback per change), and a
/// bound on the page all the same.
const LIMIT: i64 = 200;
/// Callbacks of one order a timeline reads at most.
const CALLBACKS: i64 = 50;

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum Moment {
    /// The order was made.
    Created,
    /// A state change: the event its feed recorded (`deposit.completed`).
    State { event: String },
    /// A move on the merchant's balance.
    Balance {
        currency: String,
        kind: String,
        available: Decimal,
        frozen: Decimal,
        fee: Decimal,
        available_after: Decimal,
        frozen_after: Decimal,
    },
    /// An approval of a withdrawal.
    Approval {
        approver: String,
        remarks: Option<String>,
    },
    /// A callback queued for the merchant.
    Callback {
        delivery_id: String,
        event: String,
        status: String,
        url: String,
    },
    /// One attempt to deliver it.
    Attempt {
        delivery_id: String,
        attempt: i32,
        status_code: Option<i32>,
        error: Option<String>,
    },
}

/// A moment and when it happened (Unix seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub at: i64,
    pub moment: Moment,
}

/// The order's timeline, oldest first, from its making (`created_at`).
/// Within one second the order is that of a change: an approval, the
/// balance lines, the state it led to, its callback and the callback's
/// attempts.
pub async fn of_order(
    app: &App,
    merchant_id: &str,
    order_no: &str,
    created_at: Option<i64>,
) -> Result<Vec<Entry>, ApiError> {
    let (m, o) = (merchant_id.to_string(), order_no.to_string());
    let (events, lines) = app
        .db
        .run(|s| Box::pin(async move { s.order_history(&m, &o, LIMIT).await }))
        .await?;
    let mut out: Vec<Entry> = created_at
        .map(|at| Entry {
            at,
            moment: Moment::Created,
        })
        .into_iter()
        .collect();
    out.extend(
        crate::withdrawals::approvals::of(app, order_no)
            .await?
            .into_iter()
            .map(|a| Entry {
                at: a.approved_at,
                moment: Moment::Approval {
                    approver: a.approver_name,
                    remarks: a.remarks,
                },
            }),
    );
    out.extend(lines.into_iter().map(|l| Entry {
        at: l.created_at,
        moment: Moment::Balance {
            currency: l.currency,
            kind: l.kind,
            available: from_units(l.available_change),
            frozen: from_units(l.frozen_change),
            fee: from_units(l.fee),
            available_after: from_units(l.available_after),
            frozen_after: from_units(l.frozen_after),
        },
    }));
    out.extend(events.into_iter().map(|e| Entry {
        at: e.created_at,
        moment: Moment::State { event: e.event },
    }));
    out.extend(callbacks(app, merchant_id, order_no).await?);
    // Stable: equal times keep the order they were pushed in above.
    out.sort_by_key(|e| e.at);
    Ok(out)
}

/// The order's callbacks, oldest first, each followed by its attempts.
async fn callbacks(app: &App, merchant_id: &str, order_no: &str) -> Result<Vec<Entry>, ApiError> {
    let mut out = Vec::new();
    let deliveries = listings::callback_deliveries(
        app,
        Listing {
            limit: Some(CALLBACKS),
            merchant_id: Some(merchant_id.to_string()),
            order_no: Some(order_no.to_string()),
            ..Listing::default()
        },
    )
    .await?;
    for d in deliveries.items.iter().rev() {
        out.push(Entry {
            at: d.created_at,
            moment: Moment::Callback {
                delivery_id: d.id.clone(),
                event: d.event.clone(),
                status: d.status.as_str().to_string(),
                url: d.callback_url.clone(),
            },
        });
        for a in crate::callbacks::history(app, &d.id).await? {
            out.push(Entry {
                at: a.started_at,
                moment: Moment::Attempt {
                    delivery_id: d.id.clone(),
                    attempt: a.attempt,
                    status_code: a.status_code,
                    error: a.error,
                },
            });
        }
    }
    Ok(out)
}
