//! The channel adapter protocol (`openapi/channel.json`) end to end through
//! its generated code: a minimal adapter implements the generated dropshot
//! trait and checks signatures with `payments_wire::channel`; the generated
//! client signs with a `ChannelSecret`. What this proves is the protocol
//! itself: signing both ways, idempotency by `order_no`, 409 on other
//! content, 404 for an unknown order, 401 in the envelope for a bad or
//! stale signature. (The adapter, `adapter/mod.rs`, is a sketch of what the
//! README asks of a team writing one, not the channel simulator.)

#[allow(dead_code)] // each test binary uses its own part of this module
mod adapter;

use adapter::{start, SECRET};
use merchant_client::channel::types as cl;
use merchant_client::ChannelSecret;

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
        return_url: None,
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
