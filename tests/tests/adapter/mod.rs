//! A minimal channel adapter for tests: implements the generated
//! `ChannelAdapterApi` in memory, checks every signature with
//! `payments_wire::channel`, keys everything by `order_no`, and refuses
//! payouts to accounts beginning `0000` (the channel's own word). It is a
//! sketch of what the README asks of a team writing an adapter, not the
//! channel simulator.

pub mod fixture;

use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::channel::types as api;
use merchant_api::channel::{ChannelAdapterApi, InquirePaymentPath, InquirePayoutPath};
use payments_wire::server::{ChannelSignatureHeaders, SignedJson};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub const SECRET: &[u8] = b"the channel's secret, shared with the service";

#[derive(Default)]
pub struct Records {
    pub payments: BTreeMap<String, (api::PaymentRequest, api::Payment)>,
    pub payouts: BTreeMap<String, (api::PayoutRequest, api::Payout)>,
}

pub struct Adapter {
    pub records: Mutex<Records>,
}

fn refuse(status: http::StatusCode, code: &str, message: String) -> HttpError {
    let status =
        dropshot::ClientErrorStatusCode::from_u16(status.as_u16()).expect("a client error status");
    HttpError::for_client_error(Some(code.to_string()), status, message)
}

/// The adapter's first step on every call.
fn authenticate(headers: &ChannelSignatureHeaders, body: &[u8]) -> Result<(), HttpError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    payments_wire::channel::verify(
        SECRET,
        headers.timestamp.as_deref(),
        headers.signature.as_deref(),
        &headers.method,
        &headers.path_and_query,
        body,
        now,
    )
    .map_err(|e| refuse(http::StatusCode::UNAUTHORIZED, e.code(), e.to_string()))
}

fn read<T: serde::de::DeserializeOwned>(body: &SignedJson<T>) -> Result<T, HttpError> {
    body.parse().map_err(|e| {
        refuse(
            http::StatusCode::BAD_REQUEST,
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
        http::StatusCode::CONFLICT,
        "ORDER_CONFLICT",
        format!("{order_no} was sent before with other content"),
    )
}

fn not_found(order_no: &str) -> HttpError {
    refuse(
        http::StatusCode::NOT_FOUND,
        "ORDER_NOT_FOUND",
        format!("no record of {order_no}"),
    )
}

enum AdapterImpl {}

impl ChannelAdapterApi for AdapterImpl {
    type Context = Arc<Adapter>;

    async fn create_payment(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        body: SignedJson<api::PaymentRequest>,
    ) -> Result<HttpResponseOk<api::Payment>, HttpError> {
        authenticate(&headers, body.bytes())?;
        let request = read(&body)?;
        let mut records = rqctx.context().records.lock().unwrap();
        let order_no = request.order_no.to_string();
        if let Some((before, payment)) = records.payments.get(&order_no) {
            return match same(before, &request) {
                true => Ok(HttpResponseOk(payment.clone())),
                false => Err(conflict(&order_no)),
            };
        }
        let reference = format!("CH-{}", records.payments.len() + 1);
        let payment = api::Payment {
            order_no: request.order_no.clone(),
            channel_order_no: reference.clone(),
            payment_url: format!("https://pay.example-wallet.com/p/{reference}"),
            status: api::PaymentStatus::Pending,
            paid_amount: None,
            channel_cost: None,
            updated_at: chrono::Utc::now(),
        };
        records
            .payments
            .insert(order_no, (request, payment.clone()));
        Ok(HttpResponseOk(payment))
    }

    async fn inquire_payment(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        path: Path<InquirePaymentPath>,
    ) -> Result<HttpResponseOk<api::Payment>, HttpError> {
        authenticate(&headers, b"")?;
        let order_no = path.into_inner().order_no.to_string();
        let records = rqctx.context().records.lock().unwrap();
        match records.payments.get(&order_no) {
            Some((_, payment)) => Ok(HttpResponseOk(payment.clone())),
            None => Err(not_found(&order_no)),
        }
    }

    async fn dispatch_payout(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        body: SignedJson<api::PayoutRequest>,
    ) -> Result<HttpResponseOk<api::Payout>, HttpError> {
        authenticate(&headers, body.bytes())?;
        let request = read(&body)?;
        if request.account_no.starts_with("0000") {
            return Err(refuse(
                http::StatusCode::UNPROCESSABLE_ENTITY,
                "REFUSED",
                "the payee's account is closed".into(),
            ));
        }
        let mut records = rqctx.context().records.lock().unwrap();
        let order_no = request.order_no.to_string();
        if let Some((before, payout)) = records.payouts.get(&order_no) {
            return match same(before, &request) {
                true => Ok(HttpResponseOk(payout.clone())),
                false => Err(conflict(&order_no)),
            };
        }
        let payout = api::Payout {
            order_no: request.order_no.clone(),
            payout_reference: format!("PO-{}", records.payouts.len() + 1),
            status: api::PayoutStatus::Accepted,
            failure_reason: None,
            channel_cost: None,
            updated_at: chrono::Utc::now(),
        };
        records.payouts.insert(order_no, (request, payout.clone()));
        Ok(HttpResponseOk(payout))
    }

    async fn inquire_payout(
        rqctx: RequestContext<Self::Context>,
        headers: ChannelSignatureHeaders,
        path: Path<InquirePayoutPath>,
    ) -> Result<HttpResponseOk<api::Payout>, HttpError> {
        authenticate(&headers, b"")?;
        let order_no = path.into_inner().order_no.to_string();
        let records = rqctx.context().records.lock().unwrap();
        match records.payouts.get(&order_no) {
            Some((_, payout)) => Ok(HttpResponseOk(payout.clone())),
            None => Err(not_found(&order_no)),
        }
    }
}

/// Serves a fresh adapter on a free port; its base URL.
pub fn start() -> (dropshot::HttpServer<Arc<Adapter>>, String) {
    let mut api = dropshot::ApiDescription::new();
    merchant_api::channel::register::<AdapterImpl>(&mut api).unwrap();
    let log = dropshot::ConfigLogging::StderrTerminal {
        level: dropshot::ConfigLoggingLevel::Error,
    }
    .to_logger("adapter")
    .unwrap();
    let server = dropshot::ServerBuilder::new(
        api,
        Arc::new(Adapter {
            records: Mutex::new(Records::default()),
        }),
        log,
    )
    .config(dropshot::ConfigDropshot {
        bind_address: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .start()
    .unwrap();
    let url = format!("http://{}", server.local_addr());
    (server, url)
}
