//! Concurrent withdrawals from one merchant never overdraw: 200 withdrawals
//! race for a balance that covers only some of them; exactly the covered
//! ones succeed, the rest hear 422, and the ledger still balances. On
//! PostgreSQL (PAYMENTS_TEST_DATABASE_URL) the requests truly race; on
//! SQLite they are serialized by its single writer.

use merchant_client::merchant::{types, Client, Error};
use merchant_client::{BearerToken, Credentials};
use payments_service::app::ledger;
use payments_service::clock::SystemClock;
use payments_service::Profile;
use payments_testing::{TestService, TEST_OPERATOR_TOKEN};
use std::sync::Arc;

const WITHDRAWALS: usize = 200;

fn withdrawal(order: &str, amount: i64) -> types::CreateWithdrawalRequest {
    conformance::requests::withdrawal(order, &amount.to_string(), "THB")
}

async fn funded_merchant(service: &TestService, amount: i64) -> (Client, String) {
    let merchant = service.new_merchant("Race").await.unwrap();
    let client = Client::new(
        &service.base_url(),
        Credentials::new(merchant.api_key.clone()),
    );
    let deposit = client
        .create_deposit(&conformance::requests::deposit(
            "FUND-1",
            &amount.to_string(),
            "THB",
        ))
        .await
        .unwrap()
        .into_inner();
    merchant_client::sandbox::Client::new(
        &service.base_url(),
        BearerToken::new(TEST_OPERATOR_TOKEN),
    )
    .pay_deposit(
        &deposit.order_no,
        &merchant_client::sandbox::types::PayDepositRequest { amount: None },
    )
    .await
    .unwrap();
    (client, merchant.merchant.id)
}

/// A service that lets one merchant have all of the race's requests in
/// flight at once: what is tried here is the ledger under them, not the
/// per-merchant bound (64 by default, past which a request is 429), nor
/// the bound per address (128 connections: the race's clients, one
/// process here, stand for as many hosts).
async fn racing_service() -> TestService {
    TestService::start_with(Profile::Sandbox, Arc::new(SystemClock), |c| {
        c.requests_in_flight.per_merchant = WITHDRAWALS;
        c.connections_per_address = 0;
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_withdrawals_never_overdraw() {
    let service = racing_service().await;
    // 10 000 covers 133 withdrawals of 75 (9 975), not the 134th.
    let (client, _) = funded_merchant(&service, 10_000).await;
    let attempts = (0..WITHDRAWALS).map(|i| {
        let client = client.clone();
        async move {
            client
                .create_withdrawal(&withdrawal(&format!("RACE-{i}"), 75))
                .await
        }
    });
    let results = futures::future::join_all(attempts).await;

    let mut succeeded = 0;
    let mut refused = 0;
    for result in results {
        match result {
            Ok(_) => succeeded += 1,
            Err(Error::ErrorResponse(e)) if e.status().as_u16() == 422 => {
                assert_eq!(e.error_code, Some(types::ErrorCode::InsufficientBalance));
                refused += 1;
            }
            Err(other) => panic!("unexpected {other}"),
        }
    }
    assert_eq!(succeeded, 133, "exactly the covered withdrawals succeed");
    assert_eq!(refused, WITHDRAWALS - 133);

    let balance = client.get_balances().await.unwrap().into_inner();
    let thb = balance
        .items
        .iter()
        .find(|b| b.currency_code == "THB")
        .unwrap();
    assert_eq!(thb.available_balance.to_string(), "25.0000");
    assert_eq!(thb.frozen_balance.to_string(), "9975.0000");
    assert_eq!(thb.total_balance.to_string(), "10000.0000");
    // One version per change: the deposit, then each successful freeze.
    assert_eq!(thb.version, 1 + 133);

    let report = ledger::check(service.service.app()).await.unwrap();
    assert!(report.ok(), "{:?}", report.differences);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_resends_of_one_withdrawal_freeze_once() {
    let service = racing_service().await;
    let (client, _) = funded_merchant(&service, 1_000).await;
    let attempts = (0..32).map(|_| {
        let client = client.clone();
        async move { client.create_withdrawal(&withdrawal("ONCE-1", 100)).await }
    });
    let results = futures::future::join_all(attempts).await;
    let order_nos: std::collections::BTreeSet<String> = results
        .into_iter()
        .map(|r| {
            r.expect("every identical resend succeeds")
                .into_inner()
                .order_no
        })
        .collect();
    assert_eq!(order_nos.len(), 1, "one order: {order_nos:?}");

    let balance = client.get_balances().await.unwrap().into_inner();
    let thb = balance
        .items
        .iter()
        .find(|b| b.currency_code == "THB")
        .unwrap();
    assert_eq!(thb.frozen_balance.to_string(), "100.0000");
    assert_eq!(thb.available_balance.to_string(), "900.0000");
    assert!(ledger::check(service.service.app()).await.unwrap().ok());
}
