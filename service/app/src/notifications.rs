//! What a channel tells the service about one of its orders
//! (`openapi/channel-notifications.json`). Each notification is recorded
//! once per channel, in the transaction of the move it makes, so a repeat,
//! however late, changes nothing. The channel's word moves an order only
//! along the lifecycle; money for an order that has expired or was
//! cancelled, and a word that contradicts the order, are kept for an
//! operator instead.

use crate::channels::Channel;
use crate::deposits::{self, Deposit, Moved};
use crate::domain::error::ApiError;
use crate::domain::lifecycle::DepositEvent;
use crate::domain::money::to_units;
use crate::domain::status::{
    DepositStatus, NotificationKind, NotificationOutcome, WithdrawalStatus,
};
use crate::store::rows::{ChannelNotificationRow, DepositRow};
use crate::store::{Store, StoreError, UniqueKey};
use crate::telemetry::metrics;
use crate::withdrawals::{self, Withdrawal};
use crate::App;
use rust_decimal::Decimal;
use std::sync::Arc;

/// A notification as the adapter sent it, its shape already checked.
#[derive(Clone, Debug)]
pub struct Notice {
    pub notification_id: String,
    pub kind: NotificationKind,
    pub order_no: String,
    pub channel_order_no: Option<String>,
    pub payout_reference: Option<String>,
    pub amount: Option<Decimal>,
    pub channel_cost: Option<Decimal>,
    pub reason: Option<String>,
    pub occurred_at: i64,
}

/// What the service answers a notification it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Receipt {
    pub duplicate: bool,
    pub outcome: Option<NotificationOutcome>,
}

/// Why a notification was refused; every refusal changes nothing, except
/// that a contradiction is recorded and its order set aside.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("no channel of kind http has the code {0}")]
    ChannelNotFound(String),
    #[error("{0}")]
    Contradictory(String),
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Refusal::Api(e.into())
    }
}

/// A notification as recorded, with what it did (listed for operators).
pub type Recorded = crate::store::rows::ChannelNotificationRow;

/// The channel with this code that takes notifications (one of kind
/// `http`: the in-process simulator has no secret to sign with).
pub fn channel_by_code(app: &App, code: &str) -> Result<Arc<dyn Channel>, Refusal> {
    app.channels
        .by_code(code)
        .filter(|c| c.config().kind == "http" && c.config().secret.is_some())
        .ok_or_else(|| Refusal::ChannelNotFound(code.to_string()))
}

/// How many times a notification is tried again when its order moved
/// between reading and writing (another notification, an operator, expiry).
const RACES: usize = 3;

/// Takes one notification from `channel`.
pub async fn receive(app: &App, channel: &dyn Channel, notice: Notice) -> Result<Receipt, Refusal> {
    let mut tries = 0;
    loop {
        tries += 1;
        let answer = receive_once(app, channel, &notice).await;
        let raced = matches!(
            answer,
            Err(Refusal::Api(ApiError::InvalidStateTransition { .. }))
        );
        if !raced || tries >= RACES {
            let label = match &answer {
                Ok(Receipt {
                    duplicate: true, ..
                }) => "duplicate",
                Ok(Receipt {
                    outcome: Some(o), ..
                }) => o.as_str(),
                Ok(_) => "recorded",
                Err(Refusal::Contradictory(_)) => "contradictory",
                Err(_) => "refused",
            };
            metrics::channel_notification(channel.code(), notice.kind.as_str(), label);
            return answer;
        }
    }
}

async fn receive_once(
    app: &App,
    channel: &dyn Channel,
    notice: &Notice,
) -> Result<Receipt, Refusal> {
    // A repeat is not looked for first: the notification's row goes into
    // the transaction of the move it makes, and its unique key refuses a
    // second one (`Failed::Duplicate`), undoing whatever the repeat would
    // have moved. Channels repeat a notification only when its answer was
    // lost, so the read cost every notification a round trip for the few.
    let channel_id = channel.id().to_string();
    let answer = match notice.kind {
        NotificationKind::PaymentMatched
        | NotificationKind::PaymentCompleted
        | NotificationKind::PaymentFailed => payment(app, &channel_id, notice).await,
        NotificationKind::PayoutCompleted | NotificationKind::PayoutFailed => {
            payout(app, &channel_id, notice).await
        }
    };
    match answer {
        Ok(outcome) => Ok(Receipt {
            duplicate: false,
            outcome: Some(outcome),
        }),
        // Recorded before (a repeat), or by another instance meanwhile:
        // that transaction made the move, this one rolled back.
        Err(Failed::Duplicate) => Ok(Receipt {
            duplicate: true,
            outcome: None,
        }),
        Err(Failed::Refused(refusal)) => Err(refusal),
    }
}

/// How a notification's transaction ends when it does not commit.
pub enum Failed {
    /// The unique key refused a second row for its id.
    Duplicate,
    Refused(Refusal),
}

impl<E: Into<Refusal>> From<E> for Failed {
    fn from(e: E) -> Self {
        Failed::Refused(e.into())
    }
}

impl From<diesel::result::Error> for Refusal {
    fn from(e: diesel::result::Error) -> Self {
        Refusal::Api(StoreError::from(e).into())
    }
}

/// Inside `tx`: the notification's row, with what it did.
async fn record(
    tx: &mut dyn Store,
    channel_id: &str,
    notice: &Notice,
    amount: Option<i64>,
    cost: Option<i64>,
    outcome: NotificationOutcome,
    now: i64,
) -> Result<(), Failed> {
    let row = ChannelNotificationRow {
        id: uuid::Uuid::new_v4().to_string(),
        channel_id: channel_id.to_string(),
        notification_id: notice.notification_id.clone(),
        kind: notice.kind,
        order_no: notice.order_no.clone(),
        amount,
        channel_cost: cost,
        reference: notice
            .channel_order_no
            .clone()
            .or_else(|| notice.payout_reference.clone()),
        reason: notice.reason.clone(),
        outcome,
        occurred_at: notice.occurred_at,
        received_at: now,
    };
    match tx.insert_channel_notification(&row).await {
        Err(StoreError::Conflict {
            key: UniqueKey::ChannelNotification,
            ..
        }) => Err(Failed::Duplicate),
        other => Ok(other?),
    }
}

/// An amount the channel reports, in the order's currency's digits.
fn units(field: &str, value: Option<Decimal>, digits: u32) -> Result<Option<i64>, ApiError> {
    value
        .map(|v| {
            let v = crate::domain::validate::paid_amount(field, v, digits)?;
            to_units(v).ok_or_else(|| ApiError::invalid_field(field, "is too large"))
        })
        .transpose()
}

fn not_found(kind: &'static str, order_no: &str) -> Failed {
    Failed::Refused(Refusal::Api(ApiError::OrderNotFound {
        kind,
        reference: order_no.to_string(),
    }))
}

/// `payment.matched`, `payment.completed` or `payment.failed` for a
/// channel deposit.
async fn payment(
    app: &App,
    channel_id: &str,
    notice: &Notice,
) -> Result<NotificationOutcome, Failed> {
    let read = match crate::orders::any_row::<Deposit>(app, &notice.order_no).await {
        Ok(row) if row.channel_id.as_deref() == Some(channel_id) => row,
        Ok(_) => return Err(not_found("deposit", &notice.order_no)),
        Err(ApiError::OrderNotFound { .. }) => {
            return match withdrawals::find_any(app, &notice.order_no).await {
                Ok(w) if w.channel_id.as_deref() == Some(channel_id) => {
                    let why = format!(
                        "the channel reports {} for {}, a withdrawal",
                        notice.kind.as_str(),
                        notice.order_no
                    );
                    contradict(app, channel_id, notice, &w, None, why, app.now_unix()).await
                }
                _ => Err(not_found("deposit", &notice.order_no)),
            };
        }
        Err(e) => return Err(e.into()),
    };
    let order = Deposit::from_row(read.clone())?;
    let digits = app.config.currency(&order.currency)?.fraction_digits;
    let amount = units("amount", notice.amount, digits)?;
    let cost = units("channel_cost", notice.channel_cost, digits)?;
    let now = app.now_unix();
    let completion = match (notice.kind, order.status) {
        (NotificationKind::PaymentCompleted, DepositStatus::Pending | DepositStatus::Matched) => {
            let plan = deposits::plan_completion(app, &order, notice.amount).await?;
            Some(match cost {
                Some(c) => plan.with_channel_cost(c),
                None => plan,
            })
        }
        _ => None,
    };
    let lane = (order.merchant_id.clone(), order.currency.clone());
    let credits = completion.is_some();
    let (channel_id, notice) = (channel_id.to_string(), notice.clone());
    let unit: crate::group_commit::Unit<NotificationOutcome, Failed> = Arc::new(move |tx| {
        let (order, notice, completion) = (order.clone(), notice.clone(), completion.clone());
        let (channel_id, read) = (channel_id.clone(), read.clone());
        Box::pin(async move {
            let outcome = move_deposit(tx, &order, read, &notice, amount, completion, now).await?;
            record(tx, &channel_id, &notice, amount, cost, outcome, now).await?;
            Ok(outcome)
        })
    });
    if !credits {
        return app
            .db
            .transaction::<_, Failed, _>(move |tx| Box::pin(async move { unit(tx).await }))
            .await;
    }
    // A completion credits the merchant's balance row: one merchant's
    // completions commit together (`group_commit`), answered once durable.
    app.completions.run(lane, unit).await.map_err(|refused| {
        Failed::Refused(Refusal::Api(ApiError::AtCapacity(match refused {
            crate::group_commit::Refused::Full => "a merchant's completions",
            crate::group_commit::Refused::Lost => "completions",
        })))
    })?
}

/// Inside `tx`: what a payment notification does to the deposit as read
/// (`order`, and `read`, its row).
async fn move_deposit(
    tx: &mut dyn Store,
    order: &Deposit,
    read: DepositRow,
    notice: &Notice,
    amount: Option<i64>,
    completion: Option<deposits::Completion>,
    now: i64,
) -> Result<NotificationOutcome, ApiError> {
    let moved = match (notice.kind, order.status, completion) {
        // Declined while it waited: cancelled, as the sandbox's own
        // simulator cancels it. Once a payment was matched or credited,
        // or the order ended, a decline changes nothing.
        (NotificationKind::PaymentFailed, DepositStatus::Pending, _) => {
            deposits::apply_decline(tx, &order.order_no, now).await?
        }
        (NotificationKind::PaymentFailed, _, _) => return Ok(NotificationOutcome::Unchanged),
        (_, DepositStatus::Expired | DepositStatus::Cancelled, _) => {
            return Ok(NotificationOutcome::Held)
        }
        (_, DepositStatus::Completed, _)
        | (NotificationKind::PaymentMatched, DepositStatus::Matched, _) => {
            return Ok(NotificationOutcome::Unchanged)
        }
        (NotificationKind::PaymentMatched, _, _) => {
            let received = match amount {
                Some(a) => a,
                None => deposits::received_units(order, None)?,
            };
            deposits::apply_match(tx, &order.order_no, received, now).await?
        }
        (_, _, Some(plan)) => deposits::complete_read(tx, read, &plan, now).await?,
        (_, status, None) => {
            return Err(crate::domain::lifecycle::refused(
                &order.order_no,
                status.as_str(),
                DepositEvent::Complete,
            ))
        }
    };
    Ok(match moved {
        Moved::Done(_) => NotificationOutcome::Applied,
        // Its time ran out before the payment was reported: the order
        // expires with its callback, and the money waits for an operator.
        Moved::Lapsed(_) => NotificationOutcome::Held,
    })
}

/// `payout.completed` or `payout.failed` for a withdrawal.
async fn payout(
    app: &App,
    channel_id: &str,
    notice: &Notice,
) -> Result<NotificationOutcome, Failed> {
    let order: Withdrawal = match withdrawals::find_any(app, &notice.order_no).await {
        Ok(order) if order.channel_id.as_deref() == Some(channel_id) => order,
        Ok(_) | Err(ApiError::OrderNotFound { .. }) => {
            return Err(not_found("withdrawal", &notice.order_no))
        }
        Err(e) => return Err(e.into()),
    };
    let digits = app.config.currency(&order.currency)?.fraction_digits;
    let cost = units("channel_cost", notice.channel_cost, digits)?;
    let now = app.now_unix();
    use NotificationKind::{PayoutCompleted, PayoutFailed};
    use WithdrawalStatus::{Approved, Completed, Processing};
    let step = match (notice.kind, order.status) {
        (PayoutCompleted, Approved | Processing) => Step::Move(Box::new(withdrawals::plan_settle(
            app,
            &order,
            notice.payout_reference.clone(),
            cost,
        )?)),
        (PayoutFailed, Approved | Processing) => Step::Move(Box::new(withdrawals::plan_fail(
            &order,
            notice.reason.clone(),
            now,
        )?)),
        (PayoutCompleted, Completed) | (PayoutFailed, WithdrawalStatus::Failed) => Step::Unchanged,
        (kind, status) => Step::Contradiction(format!(
            "the channel reports {} for withdrawal {}, which is {status}",
            kind.as_str(),
            order.order_no
        )),
    };
    let planned = match step {
        Step::Contradiction(why) => {
            return contradict(app, channel_id, notice, &order, cost, why, now).await
        }
        Step::Move(planned) => Some(planned),
        Step::Unchanged => None,
    };
    let (channel_id, notice) = (channel_id.to_string(), notice.clone());
    app.db
        .transaction::<_, Failed, _>(move |tx| {
            Box::pin(async move {
                let outcome = match planned {
                    Some(planned) => {
                        withdrawals::write(tx, *planned).await?;
                        NotificationOutcome::Applied
                    }
                    None => NotificationOutcome::Unchanged,
                };
                record(tx, &channel_id, &notice, None, cost, outcome, now).await?;
                Ok(outcome)
            })
        })
        .await
}

/// A notification that contradicts withdrawal `order`: recorded, the order
/// set aside for an operator, in one transaction; refused with 409 once
/// committed.
async fn contradict(
    app: &App,
    channel_id: &str,
    notice: &Notice,
    order: &Withdrawal,
    cost: Option<i64>,
    why: String,
    now: i64,
) -> Result<NotificationOutcome, Failed> {
    let (channel_id, notice, order) = (channel_id.to_string(), notice.clone(), order.clone());
    let reason = why.clone();
    let order_no = order.order_no.clone();
    app.db
        .transaction::<_, Failed, _>(move |tx| {
            Box::pin(async move {
                withdrawals::flag(tx, &order, reason, now).await?;
                let outcome = NotificationOutcome::Contradictory;
                record(tx, &channel_id, &notice, None, cost, outcome, now).await
            })
        })
        .await?;
    tracing::warn!(order_no = %order_no, "contradictory channel notification: {why}");
    Err(Refusal::Contradictory(why).into())
}

/// What a payout notification comes to, worked out before the transaction.
enum Step {
    Move(Box<withdrawals::Planned>),
    Unchanged,
    Contradiction(String),
}
