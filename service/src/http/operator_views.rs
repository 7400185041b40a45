//! The operator contract's shapes of what the use cases return: merchants'
//! signing, bank transactions, callback deliveries, channel notifications.

use super::{reshape, time, time_opt};
use crate::app::bank::{BankTransaction, Ingested};
use crate::app::callbacks::signing::Signing;
use crate::app::callbacks::{AttemptRecord, Delivery};
use crate::app::deposits;
use crate::app::listings::Listing;
use crate::app::notifications::Recorded;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::money;
use merchant_api::operator::types;
use payments_wire::DecimalString;

/// A merchant's signing in the operator contract's shape (a secret only
/// when this request created it).
pub fn signing_view(
    merchant_id: String,
    signing: Signing,
) -> Result<types::CallbackSigning, ApiError> {
    let secrets = signing
        .secrets
        .iter()
        .map(|&(created, expires)| {
            Ok(types::CallbackSecretSummary {
                created_at: time(created)?,
                expires_at: time_opt(expires)?,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    Ok(types::CallbackSigning {
        merchant_id,
        scheme: signing.scheme.into(),
        callback_secret: signing.new_secret,
        secrets,
    })
}

pub async fn bank_view(app: &App, ingested: Ingested) -> Result<types::BankTransaction, ApiError> {
    let deposit_status = match (&ingested.deposit, &ingested.row.order_no) {
        (Some(d), _) => Some(d.status),
        (None, Some(order_no)) => Some(deposits::find_any(app, order_no).await?.status),
        (None, None) => None,
    };
    bank_transaction(ingested.row, deposit_status)
}

fn bank_transaction(
    row: BankTransaction,
    deposit_status: Option<crate::domain::status::DepositStatus>,
) -> Result<types::BankTransaction, ApiError> {
    Ok(types::BankTransaction {
        status: row.status.into(),
        deposit_status: deposit_status.map(Into::into),
        amount: DecimalString(money::from_units(row.amount)),
        received_at: time(row.received_at)?,
        matched_at: time_opt(row.matched_at)?,
        created_at: time(row.created_at)?,
        id: row.id,
        account_id: row.account_id,
        bank_reference: row.bank_reference,
        currency_code: row.currency,
        remark: row.remark,
        payer_name: row.payer_name,
        payer_account_last4: row.payer_account_last4,
        order_no: row.order_no,
    })
}

/// A delivery as operators see it: a platform event's secret link
/// redacted (`callbacks::shown_body`).
pub fn delivery_view(
    app: &App,
    row: Delivery,
    history: Vec<AttemptRecord>,
) -> Result<types::CallbackDelivery, ApiError> {
    let body = crate::app::callbacks::shown_body(app, &row)?;
    let history = history
        .into_iter()
        .map(|a| {
            Ok(types::CallbackAttempt {
                attempt: i64::from(a.attempt),
                scheduled_at: time(a.scheduled_at)?,
                started_at: time(a.started_at)?,
                duration_ms: a.duration_ms,
                status_code: a.status_code.map(i64::from),
                error: a.error,
                outcome: a.outcome.into(),
                next_attempt_at: time_opt(a.next_attempt_at)?,
            })
        })
        .collect::<Result<_, ApiError>>()?;
    Ok(types::CallbackDelivery {
        status: row.status.into(),
        attempts: i64::from(row.attempts),
        next_attempt_at: time_opt(row.next_attempt_at)?,
        created_at: time(row.created_at)?,
        updated_at: time(row.updated_at)?,
        history,
        id: row.id,
        merchant_id: row.merchant_id,
        order_kind: row.order_kind.to_string(),
        order_no: row.order_no,
        event: row.event,
        callback_url: row.callback_url,
        body,
    })
}

pub async fn delivery_with_history(
    app: &App,
    row: Delivery,
) -> Result<types::CallbackDelivery, ApiError> {
    let history = crate::app::callbacks::history(app, &row.id).await?;
    delivery_view(app, row, history)
}

/// A recorded notification; `channel_code` from the configuration (a
/// channel since removed shows its id).
pub fn channel_notification_view(
    app: &App,
    row: Recorded,
) -> Result<types::ChannelNotification, ApiError> {
    let channel_code = app
        .channels
        .get(&row.channel_id)
        .map_or_else(|| row.channel_id.clone(), |c| c.code().to_string());
    Ok(types::ChannelNotification {
        channel_code,
        type_: row.kind.into(),
        outcome: row.outcome.into(),
        amount: row.amount.map(|a| DecimalString(money::from_units(a))),
        channel_cost: row
            .channel_cost
            .map(|c| DecimalString(money::from_units(c))),
        occurred_at: time(row.occurred_at)?,
        received_at: time(row.received_at)?,
        id: row.id,
        notification_id: row.notification_id,
        order_no: row.order_no,
        reference: row.reference,
        reason: row.reason,
    })
}

/// A cashier session as the operator reads it, with what its page offers.
pub async fn cashier_session_view(
    app: &App,
    session_id: &str,
) -> Result<types::CashierSessionRecord, ApiError> {
    let session = crate::app::cashier::by_id(app, session_id).await?;
    let merchant = crate::app::merchants::find(app, &session.merchant_id).await?;
    let status = session.status(app.now_unix()).as_str();
    Ok(types::CashierSessionRecord {
        session_id: session.id.clone(),
        merchant_id: session.merchant_id.clone(),
        merchant_order_no: session.merchant_order_no.clone(),
        status: reshape(&status)?,
        currency: session.currency.clone(),
        amount: session.amount.map(|a| DecimalString(a).to_string()),
        denominations: match session.amount {
            Some(_) => Vec::new(),
            None => app
                .config
                .denominations_for(&merchant.code, &session.currency)
                .into_iter()
                .map(|a| DecimalString(a).to_string())
                .collect(),
        },
        payer_bank_cards: session
            .cards
            .iter()
            .map(|c| types::SavedCard {
                bank_code: c.bank_code.clone(),
                account_last4: c.account_last4.clone(),
            })
            .collect(),
        order_no: session.order.as_ref().map(|o| o.order_no.clone()),
        order_status: session
            .order
            .as_ref()
            .map(|o| o.status.as_str().to_string()),
        created_at: time(session.created_at)?,
        expire_at: time(session.expire_at)?,
    })
}

/// The ledger check's report in the contract's shape.
pub async fn ledger_view(app: &App) -> Result<types::LedgerReport, ApiError> {
    let report = crate::app::ledger::check(app).await?;
    Ok(types::LedgerReport {
        ok: report.ok(),
        entries_checked: report.entries_checked,
        balances_checked: report.balances_checked,
        differences: report
            .differences
            .into_iter()
            .map(|d| types::LedgerDifference {
                kind: match d.kind {
                    "unbalanced_entry" => types::LedgerDifferenceKind::UnbalancedEntry,
                    "negative_balance" => types::LedgerDifferenceKind::NegativeBalance,
                    _ => types::LedgerDifferenceKind::BalanceMismatch,
                },
                reference: d.reference,
                detail: d.detail,
            })
            .collect(),
    })
}

/// A page of channel notifications; a channel code no channel has finds
/// none.
pub async fn channel_notifications(
    app: &App,
    q: merchant_api::operator::ListChannelNotificationsQuery,
) -> Result<types::ChannelNotificationPage, ApiError> {
    let channel_id = match q.channel_code.as_deref().map(|c| app.channels.by_code(c)) {
        Some(None) => {
            return Ok(types::ChannelNotificationPage {
                items: Vec::new(),
                next_cursor: None,
            })
        }
        known => known.flatten().map(|c| c.id().to_string()),
    };
    let listing = Listing {
        limit: q.limit,
        cursor: q.cursor,
        status: q.outcome,
        order_no: q.order_no,
        channel_id,
        ..Listing::default()
    };
    let page = crate::app::listings::channel_notifications(app, listing).await?;
    Ok(types::ChannelNotificationPage {
        items: page
            .items
            .into_iter()
            .map(|r| channel_notification_view(app, r))
            .collect::<Result<_, ApiError>>()?,
        next_cursor: page.next_cursor,
    })
}
