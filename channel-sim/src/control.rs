//! The control endpoints a test or a person drives the simulator with:
//! the faults in force (read and replace), what it has paid and collected,
//! what its notifications did, and a restart. Not part of the adapter
//! protocol and not signed: bind the simulator where only its users reach.

use crate::faults::Faults;
use crate::Sim;
use anyhow::anyhow;
use dropshot::{
    endpoint, ApiDescription, HttpError, HttpResponseAccepted, HttpResponseOk, RequestContext,
    TypedBody,
};
use merchant_api::channel::types as api;
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub fn register(api: &mut ApiDescription<Arc<Sim>>) -> anyhow::Result<()> {
    api.register(get_faults)
        .and_then(|_| api.register(put_faults))
        .and_then(|_| api.register(payouts))
        .and_then(|_| api.register(payments))
        .and_then(|_| api.register(stats))
        .and_then(|_| api.register(settle))
        .and_then(|_| api.register(restart))
        .map_err(|e| anyhow!("registering the control endpoints: {e}"))
}

#[endpoint { method = GET, path = "/control/faults" }]
async fn get_faults(rqctx: RequestContext<Arc<Sim>>) -> Result<HttpResponseOk<Faults>, HttpError> {
    Ok(HttpResponseOk(rqctx.context().dice.faults()))
}

/// Replaces the faults in force; a field left out is off.
#[endpoint { method = PUT, path = "/control/faults" }]
async fn put_faults(
    rqctx: RequestContext<Arc<Sim>>,
    body: TypedBody<Faults>,
) -> Result<HttpResponseOk<Faults>, HttpError> {
    let faults = body.into_inner();
    faults
        .check()
        .map_err(|e| HttpError::for_bad_request(Some("INVALID_FAULTS".into()), e))?;
    rqctx.context().dice.set(faults.clone());
    Ok(HttpResponseOk(faults))
}

/// One payout as the channel sees it.
#[derive(Serialize, JsonSchema)]
pub struct PayoutLine {
    pub order_no: String,
    pub payout_reference: String,
    pub status: api::PayoutStatus,
    pub amount: String,
    pub currency_code: String,
    /// Whether the service acknowledged the notification of its last change.
    pub notified: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct PayoutList {
    pub payouts: Vec<PayoutLine>,
}

/// Every payout the channel took, with its state: the `completed` ones are
/// the channel's record of what it paid.
#[endpoint { method = GET, path = "/control/payouts" }]
async fn payouts(rqctx: RequestContext<Arc<Sim>>) -> Result<HttpResponseOk<PayoutList>, HttpError> {
    let records = rqctx.context().records();
    let payouts = records
        .payouts
        .values()
        .map(|r| PayoutLine {
            order_no: r.request.order_no.to_string(),
            payout_reference: r.payout.payout_reference.clone(),
            status: r.payout.status,
            amount: r.request.amount.0.to_string(),
            currency_code: r.request.currency_code.to_string(),
            notified: r.notified,
        })
        .collect();
    Ok(HttpResponseOk(PayoutList { payouts }))
}

#[derive(Serialize, JsonSchema)]
pub struct PaymentLine {
    pub order_no: String,
    pub channel_order_no: String,
    pub status: api::PaymentStatus,
    pub amount: String,
    pub paid_amount: Option<String>,
    pub currency_code: String,
    pub payment_url: String,
    pub notified: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct PaymentList {
    pub payments: Vec<PaymentLine>,
}

/// Every payment the channel registered, with what the payer paid.
#[endpoint { method = GET, path = "/control/payments" }]
async fn payments(
    rqctx: RequestContext<Arc<Sim>>,
) -> Result<HttpResponseOk<PaymentList>, HttpError> {
    let records = rqctx.context().records();
    let payments = records
        .payments
        .values()
        .map(|r| PaymentLine {
            order_no: r.request.order_no.to_string(),
            channel_order_no: r.payment.channel_order_no.clone(),
            status: r.payment.status,
            amount: r.request.amount.0.to_string(),
            paid_amount: r.payment.paid_amount.as_ref().map(|a| a.0.to_string()),
            currency_code: r.request.currency_code.to_string(),
            payment_url: r.payment.payment_url.clone(),
            notified: r.notified,
        })
        .collect();
    Ok(HttpResponseOk(PaymentList { payments }))
}

/// What the notifications did since the simulator started.
#[derive(Serialize, JsonSchema)]
pub struct Stats {
    pub payout_dispatches: u64,
    pub payout_inquiries: u64,
    pub sent: u64,
    pub acknowledged: u64,
    pub dropped: u64,
    pub duplicated: u64,
    pub delayed: u64,
    pub retried: u64,
    pub refused: u64,
}

#[endpoint { method = GET, path = "/control/stats" }]
async fn stats(rqctx: RequestContext<Arc<Sim>>) -> Result<HttpResponseOk<Stats>, HttpError> {
    let c = &rqctx.context().counters;
    let read = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
    Ok(HttpResponseOk(Stats {
        payout_dispatches: read(&c.payout_dispatches),
        payout_inquiries: read(&c.payout_inquiries),
        sent: read(&c.sent),
        acknowledged: read(&c.acknowledged),
        dropped: read(&c.dropped),
        duplicated: read(&c.duplicated),
        delayed: read(&c.delayed),
        retried: read(&c.retried),
        refused: read(&c.refused),
    }))
}

#[derive(serde::Deserialize, JsonSchema)]
pub struct SettlePath {
    order_no: String,
    /// `settle` pays it; `fail` has the beneficiary's bank return it.
    outcome: String,
}

/// Settles an accepted payout now, as the channel would after its delay.
#[endpoint { method = POST, path = "/control/payouts/{order_no}/{outcome}" }]
async fn settle(
    rqctx: RequestContext<Arc<Sim>>,
    path: dropshot::Path<SettlePath>,
) -> Result<HttpResponseAccepted<()>, HttpError> {
    let path = path.into_inner();
    let fails = match path.outcome.as_str() {
        "settle" => false,
        "fail" => true,
        other => {
            return Err(HttpError::for_bad_request(
                Some("INVALID_OUTCOME".into()),
                format!("`{other}` is neither `settle` nor `fail`"),
            ))
        }
    };
    crate::notify::settle(rqctx.context(), &path.order_no, fails).map_err(|e| {
        HttpError::for_client_error(
            Some("NOT_SETTLEABLE".into()),
            dropshot::ClientErrorStatusCode::CONFLICT,
            e,
        )
    })?;
    Ok(HttpResponseAccepted(()))
}

/// Restarts: every settlement and notification in flight is dropped and
/// the state is read back from the journal, as after a crash.
#[endpoint { method = POST, path = "/control/restart" }]
async fn restart(rqctx: RequestContext<Arc<Sim>>) -> Result<HttpResponseAccepted<()>, HttpError> {
    rqctx.context().restart.notify_one();
    Ok(HttpResponseAccepted(()))
}
