//! Asking channels about payments whose notification never came: a channel
//! deposit still awaiting payment is inquired `payout_inquire_after_seconds`
//! after it was created, then at twice, four times, ... that age (at least
//! every `LONGEST_INTERVAL` once it is that old), so that a payment whose
//! notification was lost is still completed. At its `expire_at` the expiry
//! worker asks (`ask`) until the channel answers: a deposit whose
//! payment is unknown is not expired, and one paid after the order expired
//! is held for an operator, like a late bank transfer. What the channel answers is applied
//! as the notification it stands for would have been (`notifications`),
//! under a `notification_id` of its own, so the notification arriving later
//! changes nothing. The schedule is computed from the order's own times,
//! so it needs no column and several instances ask at most a few times more.

use crate::channels::PaymentState;
use crate::domain::error::ApiError;
use crate::domain::status::NotificationKind;
use crate::notifications::{self, Notice};
use crate::{deposits, App};

/// How many orders one read takes.
const BATCH: i64 = 500;

/// The longest wait between two inquiries about one deposit.
pub const LONGEST_INTERVAL: i64 = 600;

/// Whether an order created at `created_at` and expiring at `expire_at` is
/// due an inquiry in the pass `(last, now]`: `base` seconds after its
/// creation, then each time its age doubles, then every `LONGEST_INTERVAL`,
/// until it expires (the expiry worker asks from then on).
pub fn due(created_at: i64, expire_at: i64, base: i64, last: i64, now: i64) -> bool {
    let mut age = base.max(1);
    while created_at.saturating_add(age) <= now && created_at.saturating_add(age) < expire_at {
        if created_at.saturating_add(age) > last {
            return true;
        }
        age = age.saturating_add(age.min(LONGEST_INTERVAL));
    }
    false
}

/// Inquires the channel deposits due in `(last, now]`; how many were asked.
/// A pass that starts with `last` at 0 asks every one once (after a
/// restart, nothing a channel did while the service was away is missed).
pub async fn inquire_due(app: &App, last: i64, now: i64) -> Result<usize, ApiError> {
    let base = app.config.payout_inquire_after_seconds;
    let mut after: Option<(i64, String)> = None;
    let mut asked = 0;
    loop {
        let cursor = after.clone();
        let page = app
            .db
            .run(move |s| {
                let cursor = cursor.clone();
                Box::pin(
                    async move { s.channel_deposits_awaiting(now - base, cursor, BATCH).await },
                )
            })
            .await?;
        for (order_no, created_at, expire_at) in &page {
            if due(*created_at, *expire_at, base, last, now) {
                ask(app, order_no, now).await?;
                asked += 1;
            }
        }
        match page.last() {
            Some((order_no, created_at, _)) if page.len() as i64 == BATCH => {
                after = Some((*created_at, order_no.clone()));
            }
            _ => return Ok(asked),
        }
    }
}

/// Expires the deposits due, a channel deposit only once its channel
/// answered that it was not paid (a paid one completes instead, or past
/// its `expire_at` is held for an operator): one whose payment is unknown
/// stays awaiting payment. How many expired, and how many were kept.
pub async fn expire_due(app: &App) -> Result<(usize, usize), ApiError> {
    let now = app.now_unix();
    deposits::expire_due_if(app, move |order_no| async move {
        ask(app, &order_no, now).await
    })
    .await
}

/// Asks about one order and applies the answer; false when the channel
/// did not answer (it is asked again at the next step of the schedule).
/// An order with no channel to ask is known: true.
async fn ask(app: &App, order_no: &str, now: i64) -> Result<bool, ApiError> {
    let order = deposits::find_any(app, order_no).await?;
    let Some(channel) = order
        .channel_id
        .as_deref()
        .and_then(|id| app.channels.get(id))
    else {
        return Ok(true);
    };
    let notice = |kind, id: &str, channel_order_no: String| Notice {
        notification_id: format!("inquiry:{order_no}:{id}"),
        kind,
        order_no: order_no.to_string(),
        channel_order_no: Some(channel_order_no),
        payout_reference: None,
        amount: None,
        channel_cost: None,
        reason: None,
        occurred_at: now,
    };
    let notice = match channel.inquire_payment(order_no).await {
        Ok(Some(PaymentState::Completed {
            channel_order_no,
            amount,
            cost,
        })) => Notice {
            amount: Some(amount),
            channel_cost: cost,
            ..notice(
                NotificationKind::PaymentCompleted,
                "payment.completed",
                channel_order_no,
            )
        },
        Ok(Some(PaymentState::Matched { channel_order_no })) => notice(
            NotificationKind::PaymentMatched,
            "payment.matched",
            channel_order_no,
        ),
        Ok(Some(PaymentState::Declined { channel_order_no })) => notice(
            NotificationKind::PaymentFailed,
            "payment.failed",
            channel_order_no,
        ),
        Ok(Some(PaymentState::Waiting)) | Ok(None) => return Ok(true),
        Err(e) => {
            tracing::warn!(order_no, "payment inquiry unanswered: {e}");
            return Ok(false);
        }
    };
    if let Err(refusal) = notifications::receive(app, channel.as_ref(), notice).await {
        tracing::warn!(
            order_no,
            "the channel's answer to an inquiry was not applied: {refusal}"
        );
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::due;

    #[test]
    fn an_order_is_asked_at_base_then_as_its_age_doubles_then_every_ten_minutes_until_it_expires() {
        let (created, expires, base) = (1_000, 1_000 + 1_800, 60);
        let asked: Vec<i64> = (1_000..=3_000)
            .filter(|now| due(created, expires, base, now - 1, *now))
            .map(|now| now - created)
            .collect();
        assert_eq!(asked, vec![60, 120, 240, 480, 960, 1_560]);
        assert!(
            due(created, expires, base, 0, 1_100),
            "a first pass asks once"
        );
        assert!(!due(created, expires, base, 1_061, 1_100));

        // A day-long order is asked at least every ten minutes.
        let (created, expires, base) = (0, 86_400, 1);
        let asked: Vec<i64> = (0..=90_000)
            .filter(|now| due(created, expires, base, now - 1, *now))
            .collect();
        assert_eq!(
            &asked[..12],
            &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024, 1_624]
        );
        assert!(asked
            .windows(2)
            .all(|w| w[1] - w[0] <= super::LONGEST_INTERVAL));
        assert!(*asked.last().unwrap() < expires, "expiry asks from then on");
    }
}
