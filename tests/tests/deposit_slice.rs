//! The vertical slice through every layer: the generated client signs, the
//! generated trait receives, the handler stores through diesel, and the
//! order reads back. Runs on SQLite, or on PostgreSQL when
//! PAYMENTS_TEST_DATABASE_URL is set.

use merchant_client::merchant::{types, Client};
use merchant_client::Credentials;
use payments_service::clock::SystemClock;
use payments_service::Profile;
use payments_testing::TestService;
use std::sync::Arc;

fn deposit(merchant_order_no: &str, amount: &str, currency: &str) -> types::CreateDepositRequest {
    let mut request = conformance::requests::deposit(merchant_order_no, amount, currency);
    request.user_id = Some("user-1".into());
    request
}

#[tokio::test]
async fn create_query_and_balance_through_the_generated_client() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let merchant = service.new_merchant("Slice Merchant").await.unwrap();
    let client = Client::new(
        &service.base_url(),
        Credentials::new(merchant.api_key.clone()),
    );

    let created = client
        .create_deposit(&deposit("SLICE-1", "250.75", "THB"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(created.amount.to_string(), "250.7500");
    assert!(created.remark.is_some());
    assert_eq!(created.bank_code.as_deref(), Some("KBANK"));

    let by_no = client
        .get_deposit(&created.order_no)
        .await
        .unwrap()
        .into_inner();
    let by_merchant_no = client.find_deposit("SLICE-1").await.unwrap().into_inner();
    assert_eq!(by_no.order_no, created.order_no);
    assert_eq!(by_merchant_no.id, by_no.id);
    assert_eq!(by_no.status, types::DepositStatus::Pending);
    assert_eq!(by_no.expected_remark, created.remark);
    assert_eq!(by_no.merchant.id, merchant.merchant.id);

    let balances = client.get_balances().await.unwrap().into_inner();
    let currencies: Vec<&str> = balances
        .items
        .iter()
        .map(|b| b.currency_code.as_str())
        .collect();
    assert_eq!(currencies, ["BDT", "THB"]);
    assert!(balances
        .items
        .iter()
        .all(|b| b.total_balance.to_string() == "0.0000"));
}

#[tokio::test]
async fn concurrent_creates_with_one_merchant_order_no_make_one_order() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let merchant = service.new_merchant("Race Merchant").await.unwrap();
    let client = Client::new(
        &service.base_url(),
        Credentials::new(merchant.api_key.clone()),
    );

    let same = deposit("RACE-1", "10", "THB");
    let different = deposit("RACE-1", "11", "THB");
    let attempts = (0..24).map(|i| {
        let client = client.clone();
        let body = if i % 3 == 0 {
            different.clone()
        } else {
            same.clone()
        };
        async move { (i % 3 == 0, client.create_deposit(&body).await) }
    });
    let results = futures::future::join_all(attempts).await;

    let winner = client.find_deposit("RACE-1").await.unwrap().into_inner();
    let winner_amount = winner.amount.to_string();
    for (is_different, result) in results {
        let body_amount = if is_different { "11.0000" } else { "10.0000" };
        match result {
            Ok(order) => {
                assert_eq!(
                    order.order_no, winner.order_no,
                    "every success is the one order"
                );
                assert_eq!(body_amount, winner_amount);
            }
            Err(merchant_client::merchant::Error::ErrorResponse(e)) => {
                assert_eq!(e.status().as_u16(), 409);
                assert_eq!(
                    e.error_code,
                    Some(types::ErrorCode::DuplicateMerchantOrderNo)
                );
                assert_ne!(body_amount, winner_amount, "only the other body is refused");
            }
            Err(other) => panic!("unexpected {other}"),
        }
    }
}
