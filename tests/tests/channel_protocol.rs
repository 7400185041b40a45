//! The channel adapter protocol (`openapi/channel.json`) end to end through
//! its generated code: a minimal adapter implements the generated dropshot
//! trait and checks signatures with `payments_wire::channel`; the generated
//! client signs with a `ChannelSecret`. What this proves is the protocol
//! itself: signing both ways, idempotency by `order_no`, 409 on other
//! content, 404 for an unknown order, 401 in the envelope for a bad or
//! stale signature. (The adapter here is a sketch of what the README asks
//! of a team writing one, not the channel simulator.)

use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::channel::types as api;
use merchant_api::channel::{ChannelAdapterApi, InquirePaymentPath, InquirePayoutPath};
use merchant_client::channel::types as cl;
use merchant_client::ChannelSecret;
use payments_wire::server::{ChannelSignatureHeaders, SignedJson};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

const SECRET: &[u8] = b"the channel's secret, shared with the service";

#[derive(Default)]
struct Records {
    payments: BTreeMap<String, (api::PaymentRequest, api::Payment)>,
    payouts: BTreeMap<String, (api::PayoutRequest, api::Payout)>,
}

struct Adapter {
    records: Mutex<Records>,
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

fn start() -> (dropshot::HttpServer<Arc<Adapter>>, String) {
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

fn money(text: &str) -> payments_wire::DecimalString {
    payments_wire::DecimalString(text.parse().unwrap())
}

fn no(order_no: &str) -> cl::OrderNo {
    cl::OrderNo(order_no.into())
}

fn payment(order_no: &str, amount: &str) -> cl::PaymentRequest {
    cl::PaymentRequest {
        order_no: cl::OrderNo(order_no.into()),
        amount: money(amount),
        currency_code: cl::CurrencyCode("BDT".into()),
        notify_url: "https://payments.example.com/api/v1/channels/BKASH/notifications".into(),
        expire_at: "2026-11-25T10:30:00Z".parse().unwrap(),
    }
}

fn payout(order_no: &str, account_no: &str) -> cl::PayoutRequest {
    cl::PayoutRequest {
        order_no: cl::OrderNo(order_no.into()),
        amount: money("500.0000"),
        currency_code: cl::CurrencyCode("THB".into()),
        bank_code: "KBANK".into(),
        account_no: account_no.into(),
        account_holder: "Somchai Jaidee".into(),
        notify_url: "https://payments.example.com/api/v1/channels/PAYOUTS/notifications".into(),
    }
}

/// The status and `error_code` of a refused call.
fn refused<T: std::fmt::Debug>(
    result: Result<
        merchant_client::channel::ResponseValue<T>,
        merchant_client::channel::Error<cl::ChannelError>,
    >,
) -> (u16, cl::ChannelErrorCode) {
    match result {
        Err(merchant_client::channel::Error::ErrorResponse(e)) => {
            (e.status().as_u16(), e.into_inner().error_code)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn calls_are_signed_idempotent_by_order_no_and_refused_in_the_envelope() {
    let (server, url) = start();
    let client = merchant_client::channel::Client::new(&url, ChannelSecret::new(SECRET, &url));

    // Create, then the same again: one payment, the same answer.
    let first = client
        .create_payment(&payment("D1", "1000.0000"))
        .await
        .unwrap()
        .into_inner();
    let again = client
        .create_payment(&payment("D1", "1000.0000"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.channel_order_no, again.channel_order_no);
    assert_eq!(first.status, cl::PaymentStatus::Pending);
    assert_eq!(
        refused(client.create_payment(&payment("D1", "999.0000")).await),
        (409, cl::ChannelErrorCode::OrderConflict)
    );
    let read = client
        .inquire_payment(&no("D1"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(read.channel_order_no, first.channel_order_no);
    assert_eq!(
        refused(client.inquire_payment(&no("D-UNKNOWN")).await),
        (404, cl::ChannelErrorCode::OrderNotFound)
    );

    // Payouts: accepted once, refused by the channel's word.
    let taken = client
        .dispatch_payout(&payout("W1", "1234567890"))
        .await
        .unwrap()
        .into_inner();
    let resent = client
        .dispatch_payout(&payout("W1", "1234567890"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(taken.payout_reference, resent.payout_reference);
    assert_eq!(taken.status, cl::PayoutStatus::Accepted);
    assert_eq!(
        refused(client.dispatch_payout(&payout("W2", "0000111122")).await),
        (422, cl::ChannelErrorCode::Refused)
    );
    assert_eq!(
        refused(client.inquire_payout(&no("W2")).await),
        (404, cl::ChannelErrorCode::OrderNotFound)
    );

    // Another secret, a stale timestamp: 401 and nothing recorded.
    let stranger = merchant_client::channel::Client::new(
        &url,
        ChannelSecret::new(b"not the channel's secret".to_vec(), &url),
    );
    assert_eq!(
        refused(stranger.create_payment(&payment("D2", "10.0000")).await),
        (401, cl::ChannelErrorCode::InvalidSignature)
    );
    let late = merchant_client::channel::Client::new(
        &url,
        ChannelSecret::new(SECRET, &url).with_clock(|| 1_000_000_000),
    );
    assert_eq!(
        refused(late.dispatch_payout(&payout("W3", "1234567890")).await),
        (401, cl::ChannelErrorCode::StaleTimestamp)
    );
    assert_eq!(
        refused(client.inquire_payment(&no("D2")).await),
        (404, cl::ChannelErrorCode::OrderNotFound)
    );
    assert_eq!(
        refused(client.inquire_payout(&no("W3")).await),
        (404, cl::ChannelErrorCode::OrderNotFound)
    );

    // Unsigned: the adapter names the missing header.
    let bare = reqwest::Client::new()
        .get(format!("{url}/payouts/W1"))
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 401);
    let body: serde_json::Value = bare.json().await.unwrap();
    assert_eq!(body["error_code"], "MISSING_HEADER");
    server.close().await.unwrap();
}
