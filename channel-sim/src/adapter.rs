//! The protocol's four calls. Each checks the signature first, then meets
//! the fault rolled for it: answered, refused with a 503 before acting,
//! acted on and answered 500, or acted on and held past the caller's
//! patience. Every call is idempotent on `order_no`: the same request again
//! gets the same answer, other content under the same number a 409.
//! A payout to an account number beginning `0000` is refused (422
//! `REFUSED`): the channel's own word, the one way a payout fails at once.

use crate::faults::CallFate;
use crate::records::Entry;
use crate::{notify, Sim};
use dropshot::{ClientErrorStatusCode, HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::channel::types as api;
use merchant_api::channel::{ChannelAdapterApi, InquirePaymentPath, InquirePayoutPath};
use payments_wire::server::{ChannelSignatureHeaders, SignedJson};
use std::sync::Arc;

pub fn refuse(status: ClientErrorStatusCode, code: &str, message: String) -> HttpError {
    HttpError::for_client_error(Some(code.to_string()), status, message)
}

fn authenticate(
    sim: &Sim,
    headers: &ChannelSignatureHeaders,
    body: &[u8],
) -> Result<(), HttpError> {
    payments_wire::channel::verify(
        &sim.secret,
        headers.timestamp.as_deref(),
        headers.signature.as_deref(),
        &headers.method,
        &headers.path_and_query,
        body,
        chrono::Utc::now().timestamp(),
    )
    .map_err(|e| refuse(ClientErrorStatusCode::UNAUTHORIZED, e.code(), e.to_string()))
}

fn read<T: serde::de::DeserializeOwned>(body: &SignedJson<T>) -> Result<T, HttpError> {
    body.parse().map_err(|e| {
        refuse(
            ClientErrorStatusCode::BAD_REQUEST,
            "INVALID_BODY",
            format!("{e:?}"),
        )
    })
}

/// The same content: the generated request types compare as JSON.
fn same<T: serde::Serialize>(a: &T, b: &T) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

fn conflict(order_no: &str) -> HttpError {
    refuse(
        ClientErrorStatusCode::CONFLICT,
        "ORDER_CONFLICT",
        format!("{order_no} was sent before with other content"),
    )
}

fn not_found(order_no: &str) -> HttpError {
    refuse(
        ClientErrorStatusCode::NOT_FOUND,
        "ORDER_NOT_FOUND",
        format!("no record of {order_no}"),
    )
}

fn not_durable(e: anyhow::Error) -> HttpError {
    tracing::error!("the journal refused a change: {e:#}");
    HttpError::for_unavail(None, "the simulator could not record the change".into())
}

/// Authenticates, waits the added latency, and meets the call's fate.
async fn call<T>(
    sim: &Sim,
    headers: &ChannelSignatureHeaders,
    body: &[u8],
    act: impl FnOnce(&Sim) -> Result<T, HttpError>,
) -> Result<T, HttpError> {
    authenticate(sim, headers, body)?;
    let counter = match (
        headers.method.as_str(),
        headers.path_and_query.starts_with("/payouts"),
    ) {
        ("POST", true) => Some(&sim.counters.payout_dispatches),
        ("GET", true) => Some(&sim.counters.payout_inquiries),
        _ => None,
    };
    if let Some(counter) = counter {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let latency = sim.dice.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let fate = sim.dice.call();
    if fate == CallFate::ErrorBefore {
        return Err(HttpError::for_unavail(
            None,
            "a simulated outage: nothing was done".into(),
        ));
    }
    if fate == CallFate::Refused && headers.method == "POST" {
        return Err(refuse(
            ClientErrorStatusCode::UNPROCESSABLE_ENTITY,
            "REFUSED",
            "a simulated refusal: the channel will not take it, and recorded nothing".into(),
        ));
    }
    let answer = act(sim)?;
    match fate {
        CallFate::ErrorAfter => Err(HttpError::for_internal_error(
            "a simulated failure after the call was acted on".into(),
        )),
        CallFate::Hang(hold) => {
            tokio::time::sleep(hold).await;
            Ok(answer)
        }
        _ => Ok(answer),
    }
}

pub enum SimAdapter {}

impl ChannelAdapterApi for SimAdapter {
    type Context = Arc<Sim>;

    async fn create_payment(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        body: SignedJson<api::PaymentRequest>,
    ) -> Result<HttpResponseOk<api::Payment>, HttpError> {
        let sim = rqctx.context();
        call(sim, &headers, body.bytes(), |sim| {
            let request = read(&body)?;
            let mut records = sim.records();
            let order_no = request.order_no.to_string();
            if let Some(before) = records.payments.get(&order_no) {
                return match same(&before.request, &request) {
                    true => Ok(before.payment.clone()),
                    false => Err(conflict(&order_no)),
                };
            }
            let channel_order_no = format!("SIMCH-{order_no}");
            let payment = api::Payment {
                order_no: request.order_no.clone(),
                payment_url: format!("{}/pay/{channel_order_no}", sim.public_url()),
                channel_order_no,
                status: api::PaymentStatus::Pending,
                paid_amount: None,
                channel_cost: None,
                updated_at: chrono::Utc::now(),
            };
            records
                .record(Entry::Payment {
                    request,
                    payment: payment.clone(),
                })
                .map_err(not_durable)?;
            Ok(payment)
        })
        .await
        .map(HttpResponseOk)
    }

    async fn inquire_payment(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        path: Path<InquirePaymentPath>,
    ) -> Result<HttpResponseOk<api::Payment>, HttpError> {
        let order_no = path.into_inner().order_no.to_string();
        call(rqctx.context(), &headers, b"", |sim| {
            match sim.records().payments.get(&order_no) {
                Some(r) => Ok(r.payment.clone()),
                None => Err(not_found(&order_no)),
            }
        })
        .await
        .map(HttpResponseOk)
    }

    async fn dispatch_payout(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        body: SignedJson<api::PayoutRequest>,
    ) -> Result<HttpResponseOk<api::Payout>, HttpError> {
        let sim = rqctx.context();
        // The settlement is set going as the payout is taken, whatever the
        // caller then hears: a call that timed out was still acted on.
        let settling = sim.clone();
        let bytes = body.bytes().to_vec();
        call(sim, &headers, &bytes, move |sim| {
            let request = read(&body)?;
            if request.account_no.starts_with("0000") {
                return Err(refuse(
                    ClientErrorStatusCode::UNPROCESSABLE_ENTITY,
                    "REFUSED",
                    "the payee's account is closed".into(),
                ));
            }
            let mut records = sim.records();
            let order_no = request.order_no.to_string();
            if let Some(before) = records.payouts.get(&order_no) {
                return match same(&before.request, &request) {
                    true => Ok(before.payout.clone()),
                    false => Err(conflict(&order_no)),
                };
            }
            let payout = api::Payout {
                order_no: request.order_no.clone(),
                payout_reference: format!("SIMPO-{order_no}"),
                status: api::PayoutStatus::Accepted,
                failure_reason: None,
                channel_cost: None,
                updated_at: chrono::Utc::now(),
            };
            records
                .record(Entry::Payout {
                    request,
                    payout: payout.clone(),
                })
                .map_err(not_durable)?;
            drop(records);
            notify::settle_later(&settling, order_no);
            Ok(payout)
        })
        .await
        .map(HttpResponseOk)
    }

    async fn inquire_payout(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        path: Path<InquirePayoutPath>,
    ) -> Result<HttpResponseOk<api::Payout>, HttpError> {
        let order_no = path.into_inner().order_no.to_string();
        call(rqctx.context(), &headers, b"", |sim| {
            match sim.records().payouts.get(&order_no) {
                Some(r) => Ok(r.payout.clone()),
                None => Err(not_found(&order_no)),
            }
        })
        .await
        .map(HttpResponseOk)
    }
}
