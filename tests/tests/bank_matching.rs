//! Bank matching under concurrency, floating amounts, order validity from
//! configuration and key rotation on the service's clock. Runs on SQLite by
//! default and on PostgreSQL when PAYMENTS_TEST_DATABASE_URL is set.

use merchant_client::Credentials;
use payments_service::app::bank::{self, NewBankTransaction};
use payments_service::app::deposits::{self, NewDeposit};
use payments_service::app::merchants;
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::status::{BankTransactionStatus, DepositStatus};
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::collections::HashSet;
use std::str::FromStr;
use std::sync::Arc;

const T0: i64 = 1_800_000_000;

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn new_deposit(no: &str, amount: &str, currency: &str) -> NewDeposit {
    payments_testing::new_deposit(no, dec(amount), currency, None)
}

fn transfer(reference: &str, amount: &str, remark: Option<&str>) -> NewBankTransaction {
    NewBankTransaction {
        account_id: "acct-thb-1".into(),
        bank_reference: reference.into(),
        amount: dec(amount),
        currency: "THB".into(),
        remark: remark.map(String::from),
        payer_name: None,
        payer_account_no: None,
        received_at: None,
    }
}

async fn start() -> (TestService, ManualClock) {
    let clock = ManualClock::at(T0);
    let service = TestService::start(Profile::Sandbox, Arc::new(clock.clone()))
        .await
        .unwrap();
    (service, clock)
}

async fn available(service: &TestService, merchant_id: &str) -> Decimal {
    let id = merchant_id.to_string();
    let rows = service
        .service
        .app()
        .db
        .run(|s| Box::pin(async move { s.balances_of(&id).await }))
        .await
        .unwrap();
    let thb = rows.iter().find(|b| b.currency == "THB").unwrap();
    payments_service::domain::money::from_units(thb.available)
}

async fn ledger_is_clean(service: &TestService) {
    let report = payments_service::app::ledger::check(service.service.app())
        .await
        .unwrap();
    assert!(report.ok(), "{:?}", report.differences);
}

#[tokio::test]
async fn the_same_transaction_reported_at_once_by_many_is_recorded_and_credited_once() {
    let (service, _clock) = start().await;
    let app = service.service.app().clone();
    let m = service.new_merchant("Race").await.unwrap().merchant;
    let order = deposits::create(&app, &m, new_deposit("R-1", "100", "THB"))
        .await
        .unwrap();
    let remark = order.expected_remark.clone().unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (app, remark) = (app.clone(), remark.clone());
            tokio::spawn(async move {
                bank::ingest(
                    &app,
                    &payments_testing::SET_UP,
                    transfer("SAME-REF", "100", Some(&remark)),
                )
                .await
            })
        })
        .collect();
    let mut ids = HashSet::new();
    for t in tasks {
        let ingested = t.await.unwrap().unwrap();
        assert_eq!(ingested.row.status, BankTransactionStatus::Matched);
        ids.insert(ingested.row.id);
    }
    assert_eq!(ids.len(), 1, "one record for one bank reference");
    assert_eq!(available(&service, &m.id).await, dec("100"));
    ledger_is_clean(&service).await;
}

#[tokio::test]
async fn of_several_transfers_for_one_order_one_pays_it_and_the_rest_are_kept() {
    let (service, _clock) = start().await;
    let app = service.service.app().clone();
    let m = service.new_merchant("Race").await.unwrap().merchant;
    let order = deposits::create(&app, &m, new_deposit("R-2", "100", "THB"))
        .await
        .unwrap();
    let remark = order.expected_remark.clone().unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (app, remark) = (app.clone(), remark.clone());
            tokio::spawn(async move {
                bank::ingest(
                    &app,
                    &payments_testing::SET_UP,
                    transfer(&format!("REF-{i}"), "100", Some(&remark)),
                )
                .await
            })
        })
        .collect();
    let mut matched = 0;
    let mut unmatched = 0;
    for t in tasks {
        match t.await.unwrap().unwrap().row.status {
            BankTransactionStatus::Matched => matched += 1,
            BankTransactionStatus::Unmatched => unmatched += 1,
        }
    }
    assert_eq!((matched, unmatched), (1, 7));
    assert_eq!(available(&service, &m.id).await, dec("100"));
    let order = deposits::find_any(&app, &order.order_no).await.unwrap();
    assert_eq!(order.status, DepositStatus::Completed);
    ledger_is_clean(&service).await;
}

#[tokio::test]
async fn floating_amounts_are_unique_among_orders_awaiting_payment() {
    let (service, _clock) = start().await;
    let app = service.service.app().clone();
    let m = service.new_merchant("Float").await.unwrap().merchant;
    let m =
        merchants::set_receiving_account(&app, &payments_testing::SET_UP, &m.id, "acct-thb-float")
            .await
            .unwrap();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let (app, m) = (app.clone(), m.clone());
            tokio::spawn(async move {
                deposits::create(&app, &m, new_deposit(&format!("F-{i}"), "100", "THB")).await
            })
        })
        .collect();
    let mut amounts = HashSet::new();
    for t in tasks {
        let order = t.await.unwrap().unwrap();
        assert_eq!(order.requested_amount, dec("100"));
        assert!(order.amount > dec("100") && order.amount < dec("101"));
        assert!(order.amount.normalize().scale() <= 2, "{}", order.amount);
        amounts.insert(order.amount);
    }
    assert_eq!(
        amounts.len(),
        40,
        "every order awaiting payment has its own amount"
    );
}

#[tokio::test]
async fn order_validity_comes_from_configuration_per_merchant_and_currency() {
    let clock = ManualClock::at(T0);
    let service = TestService::start_with(Profile::Sandbox, Arc::new(clock.clone()), |c| {
        c.validity.currencies.insert("BDT".into(), 900);
        c.validity
            .merchants
            .insert("quick".into(), [("THB".to_string(), 600)].into());
    })
    .await
    .unwrap();
    let app = service.service.app().clone();
    let quick = merchants::create(&app, &payments_testing::SET_UP, "quick", "Quick")
        .await
        .unwrap()
        .merchant;
    let other = merchants::create(&app, &payments_testing::SET_UP, "other", "Other")
        .await
        .unwrap()
        .merchant;
    let expiry = |d: &deposits::Deposit| d.expire_at.timestamp() - T0;
    let q_thb = deposits::create(&app, &quick, new_deposit("V-1", "100", "THB"))
        .await
        .unwrap();
    let q_bdt = deposits::create(&app, &quick, new_deposit("V-2", "100", "BDT"))
        .await
        .unwrap();
    let o_thb = deposits::create(&app, &other, new_deposit("V-3", "100", "THB"))
        .await
        .unwrap();
    assert_eq!(
        (expiry(&q_thb), expiry(&q_bdt), expiry(&o_thb)),
        (600, 900, 1800)
    );

    clock.set(T0 + 599);
    assert_eq!(deposits::expire_due(&app).await.unwrap(), 0);
    clock.set(T0 + 600);
    assert_eq!(deposits::expire_due(&app).await.unwrap(), 1);
    let q_thb = deposits::find_any(&app, &q_thb.order_no).await.unwrap();
    assert_eq!(q_thb.status, DepositStatus::Expired);
}

#[tokio::test]
async fn a_rotated_key_works_until_its_grace_period_ends_to_the_second() {
    let (service, clock) = start().await;
    let app = service.service.app().clone();
    let created = service.new_merchant("Rotate").await.unwrap();
    // Issued as an approved change request issues it (the operation is two
    // people's since operator 0.15.0, proven in change_requests.feature).
    let issued = merchants::issue_api_key(
        &app,
        &payments_testing::SET_UP,
        &created.merchant.id,
        Some(3600),
    )
    .await
    .unwrap();
    assert_eq!(issued.previous_keys_expire_at, Some(T0 + 3600));
    let client_for = |key: &str| {
        let c = clock.clone();
        merchant_client::merchant::Client::new(
            &service.base_url(),
            Credentials::new(key.to_string()).with_clock(move || c.now().timestamp()),
        )
    };
    let old = client_for(&created.api_key);
    let new = client_for(&issued.api_key);

    clock.set(T0 + 3599);
    assert!(old.get_balances().await.is_ok(), "inside the grace period");
    clock.set(T0 + 3600);
    let refused = old.get_balances().await.unwrap_err();
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(401));
    assert!(new.get_balances().await.is_ok());

    // A second rotation leaves the first key's earlier expiry alone and
    // gives the second key its own grace.
    clock.set(T0 + 4000);
    let third = merchants::issue_api_key(
        &app,
        &payments_testing::SET_UP,
        &created.merchant.id,
        Some(60),
    )
    .await
    .unwrap();
    let newest = client_for(&third.api_key);
    assert!(new.get_balances().await.is_ok());
    assert!(newest.get_balances().await.is_ok());
    clock.set(T0 + 4060);
    assert!(new.get_balances().await.is_err());
    assert!(newest.get_balances().await.is_ok());

    // Deposits still work through the newest key.
    let body = conformance::requests::deposit("K-1", "10", "THB");
    assert!(newest.create_deposit(&body).await.is_ok());
    drop(app);
}
