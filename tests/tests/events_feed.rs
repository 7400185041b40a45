//! The events feed never skips an event: eight writers move deposits
//! (matched, then completed) and withdrawals (approved, then completed)
//! concurrently while a reader follows `GET /api/v1/merchant/events` by its
//! cursor, in pages of changing size. Once the writers stop, the reader's
//! list must be exactly the whole feed read afresh: every event once, each
//! order's events in the order they happened. Twenty rounds on PostgreSQL
//! (PAYMENTS_TEST_DATABASE_URL, where the writers truly race and commits
//! land out of the order their events were inserted in), and a round on
//! SQLite. After each round the balance lines sum to the balance.

use merchant_client::merchant::{types, Client};
use merchant_client::{BearerToken, Credentials};
use payments_service::app::events;
use payments_service::clock::SystemClock;
use payments_service::Profile;
use payments_testing::{TestService, TEST_OPERATOR_TOKEN};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashSet};
use std::num::NonZeroU64;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const WRITERS: usize = 8;
const ORDERS_PER_WRITER: usize = 6;

struct Clients {
    merchant: Client,
    sandbox: merchant_client::sandbox::Client,
    operator: merchant_client::operator::Client,
}

fn withdrawal(order: &str) -> types::CreateWithdrawalRequest {
    conformance::requests::withdrawal(order, "20", "THB")
}

fn no_amount() -> merchant_client::sandbox::types::PayDepositRequest {
    merchant_client::sandbox::types::PayDepositRequest { amount: None }
}

/// One writer: each of its deposits matched then paid, each of its
/// withdrawals approved then settled.
async fn write(c: Arc<Clients>, round: usize, writer: usize) {
    for i in 0..ORDERS_PER_WRITER {
        let no = format!("R{round}-W{writer}-{i}");
        let deposit = c
            .merchant
            .create_deposit(&conformance::requests::deposit(
                &format!("D{no}"),
                "100",
                "THB",
            ))
            .await
            .unwrap()
            .into_inner();
        c.sandbox
            .match_deposit(&deposit.order_no, &no_amount())
            .await
            .unwrap();
        c.sandbox
            .pay_deposit(&deposit.order_no, &no_amount())
            .await
            .unwrap();
        let payout = c
            .merchant
            .create_withdrawal(&withdrawal(&format!("W{no}")))
            .await
            .unwrap()
            .into_inner();
        let review = merchant_client::operator::types::ReviewRequest { remarks: None };
        c.operator
            .approve_withdrawal(&payout.order_no, &review)
            .await
            .unwrap();
        let settle = merchant_client::sandbox::types::SettleWithdrawalRequest {
            bank_reference: None,
        };
        c.sandbox
            .settle_withdrawal(&payout.order_no, &settle)
            .await
            .unwrap();
    }
}

/// Follows the feed from the start until `done` is set and a read after it
/// comes back empty; the events in the order read.
async fn follow(merchant: Client, done: Arc<AtomicBool>) -> Vec<types::MerchantEvent> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let sizes = [7u64, 1, 50, 13, 500];
    let mut read = 0usize;
    loop {
        // Read `done` before the read: an empty read after it means the
        // reader has caught up with everything placed.
        let finished = done.load(Ordering::SeqCst);
        let limit = NonZeroU64::new(sizes[read % sizes.len()]);
        read += 1;
        let page = merchant
            .list_events(cursor.as_deref(), limit, None)
            .await
            .unwrap()
            .into_inner();
        let empty = page.items.is_empty();
        seen.extend(page.items);
        cursor = Some(page.next_cursor);
        if page.has_more {
            continue;
        }
        if empty && finished {
            return seen;
        }
        if empty {
            // A poll's pause, as a real follower's; nothing depends on it.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

/// The whole feed, read afresh in the largest pages.
async fn whole_feed(merchant: &Client) -> Vec<types::MerchantEvent> {
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = merchant
            .list_events(cursor.as_deref(), NonZeroU64::new(500), None)
            .await
            .unwrap()
            .into_inner();
        all.extend(page.items);
        cursor = Some(page.next_cursor);
        if !page.has_more {
            return all;
        }
    }
}

async fn round(service: &TestService, round: usize) {
    let merchant = service
        .new_merchant(&format!("Feed {round}"))
        .await
        .unwrap();
    let base = service.base_url();
    let clients = Arc::new(Clients {
        merchant: Client::new(&base, Credentials::new(merchant.api_key.clone())),
        sandbox: merchant_client::sandbox::Client::new(
            &base,
            BearerToken::new(TEST_OPERATOR_TOKEN),
        ),
        operator: merchant_client::operator::Client::new(
            &base,
            BearerToken::new(TEST_OPERATOR_TOKEN),
        ),
    });
    // Funds for the withdrawals, before the race (its events are in the
    // feed too).
    let fund = clients
        .merchant
        .create_deposit(&conformance::requests::deposit(
            &format!("FUND-{round}"),
            "10000",
            "THB",
        ))
        .await
        .unwrap()
        .into_inner();
    clients
        .sandbox
        .pay_deposit(&fund.order_no, &no_amount())
        .await
        .unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn(follow(clients.merchant.clone(), done.clone()));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| tokio::spawn(write(clients.clone(), round, w)))
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    // Everything committed is placed before the reader is told to stop.
    events::sequence(service.service.app()).await.unwrap();
    done.store(true, Ordering::SeqCst);
    let seen = reader.await.unwrap();

    let all = whole_feed(&clients.merchant).await;
    let expected = 1 + WRITERS * ORDERS_PER_WRITER * 4;
    assert_eq!(
        all.len(),
        expected,
        "round {round}: the feed holds every event"
    );
    let ids: Vec<&str> = seen.iter().map(|e| e.event_id.as_str()).collect();
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(
        unique.len(),
        ids.len(),
        "round {round}: an event was read twice"
    );
    let all_ids: Vec<&str> = all.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(
        ids, all_ids,
        "round {round}: the follower's events differ from the whole feed (one was skipped)"
    );
    let mut per_order: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for e in &seen {
        per_order
            .entry(e.order_no.as_str())
            .or_default()
            .push(e.event.to_string());
        assert_eq!(
            e.data.get("event").and_then(|v| v.as_str()),
            Some(e.event.to_string().as_str()),
            "data is the callback body"
        );
    }
    for (order, events) in per_order {
        let expected: &[&str] = if events[0].starts_with("deposit") {
            if order == fund.order_no {
                &["deposit.completed"]
            } else {
                &["deposit.matched", "deposit.completed"]
            }
        } else {
            &["withdrawal.approved", "withdrawal.completed"]
        };
        assert_eq!(events, expected, "round {round}: order {order}'s events");
    }

    // The balance lines sum to the balance.
    let lines = clients
        .merchant
        .list_balance_transactions(None, "THB", NonZeroU64::new(500))
        .await
        .unwrap()
        .into_inner();
    assert!(lines.next_cursor.is_none());
    let sum: Decimal = lines
        .items
        .iter()
        .map(|l| Decimal::from_str(&l.amount.to_string()).unwrap())
        .sum();
    let balance = clients.merchant.get_balances().await.unwrap().into_inner();
    let thb = balance
        .items
        .iter()
        .find(|b| b.currency_code == "THB")
        .unwrap();
    assert_eq!(
        sum.to_string(),
        Decimal::from_str(&thb.total_balance.to_string())
            .unwrap()
            .to_string()
    );
    assert_eq!(lines.items.last().map(|l| l.version), Some(thb.version));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_follower_of_the_feed_sees_every_event_once_in_order_while_eight_writers_race() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let on_postgres = service.database_url.starts_with("postgres");
    let rounds = if on_postgres { 20 } else { 2 };
    for r in 0..rounds {
        round(&service, r).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn the_same_follower_on_sqlite() {
    // On SQLite whatever PAYMENTS_TEST_DATABASE_URL says.
    let service = TestService::start_with(Profile::Sandbox, Arc::new(SystemClock), |config| {
        config.database_url = format!("sqlite://{}", config.data_dir.join("payments.db").display());
    })
    .await
    .unwrap();
    assert!(service.database_url.starts_with("sqlite"));
    for r in 0..2 {
        round(&service, r).await;
    }
}
