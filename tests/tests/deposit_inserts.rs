//! New deposit orders inserted many by one statement (`app::deposits::
//! inserts`, issue 56): creates that arrive together share a statement,
//! and every caller still hears what it would have heard alone: a new
//! order, the original on an identical resend, a refusal on a reused
//! `merchant_order_no`. Runs on SQLite, or on PostgreSQL when
//! PAYMENTS_TEST_DATABASE_URL is set.

use futures::future::join_all;
use payments_service::app::deposits::{self, NewDeposit};
use payments_service::clock::SystemClock;
use payments_service::domain::error::ApiError;
use payments_service::Profile;
use payments_testing::TestService;
use rust_decimal::Decimal;
use std::collections::HashSet;
use std::sync::Arc;

fn order(merchant_order_no: &str, amount: i64) -> NewDeposit {
    let mut new =
        payments_testing::new_deposit(merchant_order_no, Decimal::from(amount), "THB", None);
    // What tells an identical resend from a reuse: the request's body.
    new.fingerprint = format!("{merchant_order_no}:{amount}");
    new
}

#[tokio::test]
async fn creates_that_come_together_share_a_statement_and_each_hears_its_own_answer() {
    let service = TestService::start(Profile::Sandbox, Arc::new(SystemClock))
        .await
        .unwrap();
    let app = service.service.app().clone();
    let merchant = service.new_merchant("Together").await.unwrap().merchant;

    // Thirty-two new orders at once: each created, none lost or doubled,
    // and some of them inserted by a statement shared with others.
    let firsts = join_all(
        (0..32).map(|i| deposits::create(&app, &merchant, order(&format!("NEW-{i}"), 100 + i))),
    )
    .await;
    let mut numbers = HashSet::new();
    for (i, created) in firsts.into_iter().enumerate() {
        let created = created.unwrap_or_else(|e| panic!("NEW-{i}: {e}"));
        assert_eq!(created.merchant_order_no, format!("NEW-{i}"));
        assert_eq!(created.amount, Decimal::from(100 + i as i64));
        assert!(
            numbers.insert(created.order_no.clone()),
            "order_no drawn twice"
        );
        let read = deposits::find_by_order_no(&app, &merchant.id, &created.order_no)
            .await
            .unwrap();
        assert_eq!(read.merchant_order_no, created.merchant_order_no);
    }
    assert!(
        app.deposit_inserts.rows_inserted_together() > 1,
        "thirty-two creates at once were each inserted alone"
    );

    // New orders, eight identical resends and eight reuses of one number
    // with two bodies, all at once: a statement holding two rows under
    // one number is refused as a whole, and its rows are inserted again
    // one by one, so each caller hears what it would have heard alone.
    let mut mixed: Vec<NewDeposit> = Vec::new();
    for i in 0..8 {
        mixed.push(order(&format!("MORE-{i}"), 50 + i));
        mixed.push(order("SAME", 70));
        mixed.push(order("REUSED", if i % 2 == 0 { 80 } else { 90 }));
    }
    let answers = join_all(
        mixed
            .iter()
            .map(|new| deposits::create(&app, &merchant, new.clone())),
    )
    .await;
    let (mut same, mut reused_kept, mut refused) = (HashSet::new(), HashSet::new(), 0);
    let mut reused_amounts = HashSet::new();
    for (new, answer) in mixed.iter().zip(answers) {
        match (new.merchant_order_no.as_str(), answer) {
            ("SAME", Ok(d)) => {
                same.insert(d.order_no);
            }
            ("REUSED", Ok(d)) => {
                assert_eq!(
                    d.amount, new.amount,
                    "a reuse answered with another body's order"
                );
                reused_amounts.insert(d.amount);
                reused_kept.insert(d.order_no);
            }
            ("REUSED", Err(ApiError::DuplicateMerchantOrderNo(no))) => {
                assert_eq!(no, "REUSED");
                refused += 1;
            }
            (no, Ok(d)) => {
                assert_eq!(d.merchant_order_no, no);
                assert!(numbers.insert(d.order_no), "order_no drawn twice");
            }
            (no, Err(e)) => panic!("{no}: {e}"),
        }
    }
    assert_eq!(
        same.len(),
        1,
        "identical resends answered with different orders"
    );
    assert_eq!(reused_kept.len(), 1, "one merchant_order_no stored twice");
    assert_eq!(reused_amounts.len(), 1);
    assert_eq!(refused, 4, "the reuses with the other body are refused");
    for no in ["SAME", "REUSED"] {
        let stored = deposits::find_by_merchant_order_no(&app, &merchant.id, no)
            .await
            .unwrap();
        assert!(same.contains(&stored.order_no) || reused_kept.contains(&stored.order_no));
    }
}
