//! What the simulator tells the service, and when: a payout settles after
//! the configured delay, a payment completes when the payer pays on the
//! page; each change is posted, signed, to the `notify_url` the service
//! gave, and sent again on a 5xx or a broken connection (as a channel
//! does) until the service acknowledges it. Its `notification_id` is
//! derived from the change, so a resend after a restart is recognised.
//! Faults drop, duplicate, delay and reorder notifications here.

use crate::records::Entry;
use crate::Sim;
use merchant_api::channel::types as api;
use merchant_client::channel_notifications::types as wire;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How many times a notification is posted before the simulator gives up
/// on it until its next start.
const ATTEMPTS: u32 = 12;

/// Sets the payout of `order_no` to settle after the configured delay.
/// Nothing happens when payouts settle only by control.
pub fn settle_later(sim: &Arc<Sim>, order_no: String) {
    let Some(delay) = sim.settle_after else {
        return;
    };
    let settling = sim.clone();
    sim.spawn(async move {
        tokio::time::sleep(delay).await;
        let fails = settling.dice.payout_fails();
        if let Err(e) = settle(&settling, &order_no, fails) {
            tracing::warn!(order_no, "{e}");
        }
    });
}

/// Pays an accepted payout, or has the beneficiary's bank return it.
pub fn settle(sim: &Arc<Sim>, order_no: &str, fails: bool) -> Result<(), String> {
    let mut records = sim.records();
    let Some(record) = records.payouts.get(order_no) else {
        return Err(format!("no payout {order_no} at this channel"));
    };
    if record.payout.status != api::PayoutStatus::Accepted {
        return Err(format!(
            "payout {order_no} is already {}",
            record.payout.status
        ));
    }
    let mut payout = record.payout.clone();
    payout.updated_at = chrono::Utc::now();
    match fails {
        true => {
            payout.status = api::PayoutStatus::Failed;
            payout.failure_reason = Some("the beneficiary's bank returned the transfer".into());
        }
        false => payout.status = api::PayoutStatus::Completed,
    }
    records
        .record(Entry::PayoutChanged { payout })
        .map_err(|e| format!("the payout could not be recorded as settled: {e:#}"))?;
    drop(records);
    send_owed(sim, order_no.to_string());
    Ok(())
}

/// The notification of the last change of `order_no`, from the records.
fn notification_of(sim: &Sim, order_no: &str) -> Option<(String, Vec<wire::Notification>)> {
    let records = sim.records();
    let wire_order_no: wire::OrderNo = order_no.parse().ok()?;
    let note = |type_, id: String, at| wire::Notification {
        notification_id: id,
        type_,
        order_no: wire_order_no.clone(),
        channel_order_no: None,
        payout_reference: None,
        amount: None,
        channel_cost: None,
        reason: None,
        occurred_at: at,
    };
    if let Some(p) = records.payouts.get(order_no) {
        let mut n = match p.payout.status {
            api::PayoutStatus::Completed => note(
                wire::NotificationType::PayoutCompleted,
                format!("{order_no}:payout.completed"),
                p.payout.updated_at,
            ),
            api::PayoutStatus::Failed => wire::Notification {
                reason: p.payout.failure_reason.clone(),
                ..note(
                    wire::NotificationType::PayoutFailed,
                    format!("{order_no}:payout.failed"),
                    p.payout.updated_at,
                )
            },
            api::PayoutStatus::Accepted => return None,
        };
        n.payout_reference = Some(p.payout.payout_reference.clone());
        n.channel_cost = p.payout.channel_cost;
        return Some((p.request.notify_url.clone(), vec![n]));
    }
    let p = records.payments.get(order_no)?;
    if p.payment.status == api::PaymentStatus::Failed {
        // Declined on the page: the service cancels the deposit.
        let declined = wire::Notification {
            channel_order_no: Some(p.payment.channel_order_no.clone()),
            ..note(
                wire::NotificationType::PaymentFailed,
                format!("{order_no}:payment.failed"),
                p.payment.updated_at,
            )
        };
        return Some((p.request.notify_url.clone(), vec![declined]));
    }
    if p.payment.status != api::PaymentStatus::Completed {
        return None;
    }
    let completed = wire::Notification {
        channel_order_no: Some(p.payment.channel_order_no.clone()),
        amount: p.payment.paid_amount,
        channel_cost: p.payment.channel_cost,
        ..note(
            wire::NotificationType::PaymentCompleted,
            format!("{order_no}:payment.completed"),
            p.payment.updated_at,
        )
    };
    Some((p.request.notify_url.clone(), vec![completed]))
}

/// Sends what the service has not acknowledged about `order_no`.
pub fn send_owed(sim: &Arc<Sim>, order_no: String) {
    let Some((url, mut notes)) = notification_of(sim, &order_no) else {
        return;
    };
    if sim.dice.reorder() {
        // A `payment.matched` that arrives after the completion it preceded.
        if let Some(done) = notes.first().cloned() {
            if done.type_ == wire::NotificationType::PaymentCompleted {
                notes.push(wire::Notification {
                    type_: wire::NotificationType::PaymentMatched,
                    notification_id: format!("{order_no}:payment.matched"),
                    ..done
                });
            }
        }
    }
    let sending = sim.clone();
    sim.spawn(async move {
        let mut delivered = true;
        for note in notes {
            delivered &= deliver(&sending, &url, &note).await;
        }
        if delivered {
            let recorded = sending.records().record(Entry::Notified {
                order_no: order_no.clone(),
            });
            if let Err(e) = recorded {
                tracing::error!(order_no, "the acknowledgement could not be recorded: {e:#}");
            }
        }
    });
}

/// One notification, with its fate. True when the service has it, or it
/// was dropped on purpose, or the service refused it for good (4xx).
async fn deliver(sim: &Sim, url: &str, note: &wire::Notification) -> bool {
    let fate = sim.dice.notification();
    if fate.dropped {
        sim.counters.dropped.fetch_add(1, Ordering::Relaxed);
        return true;
    }
    if let Some(delay) = fate.delay {
        sim.counters.delayed.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(delay).await;
    }
    let copies = if fate.duplicated {
        sim.counters.duplicated.fetch_add(1, Ordering::Relaxed);
        2
    } else {
        1
    };
    let mut delivered = true;
    for _ in 0..copies {
        delivered &= post(sim, url, note).await;
    }
    delivered
}

/// Posts until the service answers something other than a 5xx.
async fn post(sim: &Sim, url: &str, note: &wire::Notification) -> bool {
    let Ok(body) = serde_json::to_vec(note) else {
        return true;
    };
    let Ok(parsed) = url::Url::parse(url) else {
        tracing::warn!(url, "notify_url is not a URL; the notification is not sent");
        return true;
    };
    let path = match parsed.query() {
        Some(q) => format!("{}?{q}", parsed.path()),
        None => parsed.path().to_string(),
    };
    let mut wait = Duration::from_millis(100);
    for attempt in 1..=ATTEMPTS {
        // Held for this attempt only: a retry's wait frees it for others.
        let Ok(sending) = sim.senders.acquire().await else {
            return false;
        };
        let timestamp = chrono::Utc::now().timestamp();
        let signature = payments_wire::channel::sign(&sim.secret, timestamp, "POST", &path, &body);
        sim.counters.sent.fetch_add(1, Ordering::Relaxed);
        let answer = sim
            .http
            .post(url)
            .header("content-type", "application/json")
            .header(
                payments_wire::channel::HEADER_TIMESTAMP,
                timestamp.to_string(),
            )
            .header(payments_wire::channel::HEADER_SIGNATURE, signature)
            .body(body.clone())
            .send()
            .await;
        drop(sending);
        match answer.map(|a| a.status()) {
            Ok(status) if status.is_success() => {
                sim.counters.acknowledged.fetch_add(1, Ordering::Relaxed);
                return true;
            }
            Ok(status) if status.is_client_error() => {
                sim.counters.refused.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    notification_id = note.notification_id,
                    %status,
                    "the service refused a notification"
                );
                return true;
            }
            _ if attempt < ATTEMPTS => {
                sim.counters.retried.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            _ => {}
        }
    }
    tracing::warn!(
        notification_id = note.notification_id,
        "the service did not take a notification; it is sent again at the next start"
    );
    false
}

/// At start: settles the payouts still accepted and sends what is owed.
pub fn resume(sim: &Arc<Sim>) {
    let (accepted, owed): (Vec<String>, Vec<String>) = {
        let records = sim.records();
        let accepted = records
            .payouts
            .iter()
            .filter(|(_, r)| r.payout.status == api::PayoutStatus::Accepted)
            .map(|(no, _)| no.clone())
            .collect();
        let owed = records
            .payouts
            .iter()
            .filter(|(_, r)| !r.notified)
            .map(|(no, _)| no.clone())
            .chain(
                records
                    .payments
                    .iter()
                    .filter(|(_, r)| !r.notified)
                    .map(|(no, _)| no.clone()),
            )
            .collect();
        (accepted, owed)
    };
    for order_no in accepted {
        settle_later(sim, order_no);
    }
    for order_no in owed {
        send_owed(sim, order_no);
    }
}
