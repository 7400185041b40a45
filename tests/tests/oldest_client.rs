//! Merchants who generated their client from the oldest merchant contract
//! version still supported (`generated/client-oldest`, from
//! `openapi/merchant/merchant-<oldest>.json`) keep working against today's
//! service: the smoke subset of what the conformance suite covers in
//! `deposit.feature`, `withdrawal.feature`, `balance.feature` and
//! `signing.feature`, through that client. Its request types are frozen with
//! the blessed document, so the struct literals below never change.

use merchant_client_oldest::merchant::{types, Client, Error};
use merchant_client_oldest::{AmountNumber, Credentials, MerchantOrderNo};
use payments_service::app::deposits;
use payments_service::clock::SystemClock;
use payments_service::Profile;
use payments_testing::TestService;
use std::sync::Arc;

fn amount(text: &str) -> AmountNumber {
    AmountNumber(text.parse().unwrap())
}

fn order_no(text: &str) -> MerchantOrderNo {
    MerchantOrderNo::parse(text).unwrap()
}

fn deposit(merchant_order_no: &str, value: &str, currency: &str) -> types::CreateDepositRequest {
    types::CreateDepositRequest {
        merchant_order_no: order_no(merchant_order_no),
        amount: amount(value),
        currency_code: currency.into(),
        callback_url: None,
        extra_data: None,
        user_id: None,
        account_holder: None,
        mobile: None,
        email: None,
        bank_code: None,
        account_no: None,
    }
}

fn withdrawal(merchant_order_no: &str, value: &str) -> types::CreateWithdrawalRequest {
    types::CreateWithdrawalRequest {
        merchant_order_no: order_no(merchant_order_no),
        amount: amount(value),
        currency_code: "THB".into(),
        beneficiary_name: "Somchai Jaidee".into(),
        beneficiary_account: "0123456789".into(),
        beneficiary_bank_code: "SCB".into(),
        beneficiary_bank_branch: None,
        callback_url: None,
        extra_data: None,
    }
}

/// The error envelope of a refused call, as the old client types it.
fn refused<T: std::fmt::Debug>(result: Result<T, Error<types::Error>>) -> (u16, String) {
    match result {
        Err(Error::ErrorResponse(e)) => (
            e.status().as_u16(),
            e.into_inner().error_code.unwrap_or_default(),
        ),
        other => panic!("expected a refusal in the envelope, got {other:?}"),
    }
}

#[tokio::test]
async fn the_oldest_supported_client_still_works_against_the_current_service() {
    assert_eq!(merchant_client_oldest::CONTRACT_VERSION, "0.1.0");
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let merchant = service.new_merchant("Old Client").await.unwrap();
    let client = Client::new(
        &service.base_url(),
        Credentials::new(merchant.api_key.clone()),
    );

    // An account order and a channel order.
    let account = client
        .create_deposit(&deposit("OLD-1", "1000.10", "THB"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(account.amount.to_string(), "1000.1000");
    assert!(account.remark.is_some() && account.account_no.is_some());
    let channel = client
        .create_deposit(&deposit("OLD-2", "500", "BDT"))
        .await
        .unwrap()
        .into_inner();
    assert!(channel.payment_url.is_some());

    // Both queries.
    let by_no = client
        .get_deposit(&account.order_no)
        .await
        .unwrap()
        .into_inner();
    let by_merchant_no = client.find_deposit("OLD-1").await.unwrap().into_inner();
    assert_eq!(by_no.order_no, account.order_no);
    assert_eq!(by_merchant_no.order_no, account.order_no);
    assert_eq!(by_no.status, types::DepositStatus::Pending);

    // A withdrawal the balance does not cover, typed.
    assert_eq!(
        refused(client.create_withdrawal(&withdrawal("OLD-W1", "100")).await),
        (422, "INSUFFICIENT_BALANCE".to_string())
    );

    // Paid, the balance covers one; both ways of reading it back.
    deposits::complete(
        service.service.app(),
        &payments_testing::SET_UP,
        &account.order_no,
        None,
        None,
    )
    .await
    .unwrap();
    let balances = client.get_balances().await.unwrap().into_inner();
    let thb = balances
        .items
        .iter()
        .find(|b| b.currency_code == "THB")
        .expect("a THB balance");
    assert_eq!(thb.available_balance.to_string(), "1000.1000");
    let paid_out = client
        .create_withdrawal(&withdrawal("OLD-W2", "100"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(paid_out.amount.to_string(), "100.0000");
    let read = client.find_withdrawal("OLD-W2").await.unwrap().into_inner();
    assert_eq!(read.order_no, paid_out.order_no);
    let read = client
        .get_withdrawal(&paid_out.order_no)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(read.status, types::WithdrawalStatus::Pending);

    // A wrong key is refused, typed.
    let stranger = Client::new(
        &service.base_url(),
        Credentials::new("sk_test_not_a_key_000000000000000000000000000000000000"),
    );
    let (status, code) = refused(stranger.get_balances().await);
    assert_eq!(status, 401);
    assert_eq!(code, "UNKNOWN_API_KEY");
}
