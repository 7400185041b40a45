//! Property: random sequences of deposits, withdrawals, completions,
//! rejections and failures keep the books. After every step: the journal's
//! postings sum to zero per entry, every balance equals its accounts'
//! postings, none is negative, total = available + frozen, and the balance
//! matches a model that knows nothing of the ledger.

use payments_service::app::deposits;
use payments_service::app::merchants::Merchant;
use payments_service::app::withdrawals::{self};
use payments_service::app::App;
use payments_service::app::{balances, ledger};
use payments_service::clock::SystemClock;
use payments_service::domain::error::ApiError;
use payments_service::domain::people::Action;
use payments_service::Profile;
use payments_testing::TestService;
use proptest::prelude::*;
use rust_decimal::Decimal;
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Op {
    /// Create a deposit of `cents` and pay `paid_cents` of it (or all).
    Deposit { cents: i64, paid_cents: Option<i64> },
    /// Create a withdrawal of `cents`.
    Withdraw { cents: i64 },
    /// Approve the n-th pending withdrawal (if any), then settle it.
    Settle(usize),
    /// Reject the n-th pending withdrawal.
    Reject(usize),
    /// Approve the n-th pending withdrawal, then fail it.
    Fail(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (100i64..500_000, prop::option::of(100i64..500_000))
            .prop_map(|(cents, paid_cents)| Op::Deposit { cents, paid_cents }),
        (100i64..300_000).prop_map(|cents| Op::Withdraw { cents }),
        any::<usize>().prop_map(Op::Settle),
        any::<usize>().prop_map(Op::Reject),
        any::<usize>().prop_map(Op::Fail),
    ]
}

fn cents(c: i64) -> Decimal {
    Decimal::new(c, 2)
}

/// The merchant's balance as a model sees it, in cents.
#[derive(Debug, Default)]
struct Model {
    available: i64,
    frozen: i64,
    /// (order_no, amount + fee in cents) of withdrawals still pending.
    pending: Vec<(String, i64)>,
}

struct Fixture {
    app: Arc<App>,
    merchant: Merchant,
    fee_percent: Decimal,
    n: usize,
}

impl Fixture {
    fn next_no(&mut self, prefix: &str) -> String {
        self.n += 1;
        format!("{prefix}-{}", self.n)
    }

    /// Fee in cents on an amount in cents, as the fee rule computes it
    /// (percent only, half away from zero to the cent, capped at the amount).
    fn fee(&self, amount: i64) -> i64 {
        let fee = (cents(amount) * self.fee_percent / Decimal::ONE_HUNDRED)
            .round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
            .min(cents(amount));
        (fee * Decimal::ONE_HUNDRED).try_into().unwrap()
    }

    async fn step(&mut self, op: &Op, model: &mut Model) -> Result<(), ApiError> {
        let app = self.app.clone();
        match op {
            Op::Deposit {
                cents: c,
                paid_cents,
            } => {
                let no = self.next_no("D");
                let order = deposits::create(
                    &app,
                    &self.merchant,
                    payments_testing::new_deposit(&no, cents(*c), "THB", None),
                )
                .await?;
                let paid = paid_cents.unwrap_or(*c);
                deposits::complete(
                    &app,
                    &payments_testing::SET_UP,
                    &order.order_no,
                    paid_cents.map(cents),
                    None,
                )
                .await?;
                model.available += paid - self.fee(paid);
            }
            Op::Withdraw { cents: c } => {
                let no = self.next_no("W");
                let frozen = c + self.fee(*c);
                let result = withdrawals::create(
                    &app,
                    &self.merchant,
                    payments_testing::new_withdrawal(&no, cents(*c), "THB", "123"),
                )
                .await;
                match result {
                    Ok(order) => {
                        assert!(
                            frozen <= model.available,
                            "accepted a withdrawal the model says is uncovered"
                        );
                        model.available -= frozen;
                        model.frozen += frozen;
                        model.pending.push((order.order_no, frozen));
                    }
                    Err(ApiError::InsufficientBalance) => {
                        assert!(
                            frozen > model.available,
                            "refused a withdrawal the model says is covered"
                        );
                    }
                    Err(e) => return Err(e),
                }
            }
            Op::Settle(i) | Op::Reject(i) | Op::Fail(i) => {
                if model.pending.is_empty() {
                    return Ok(());
                }
                let (order_no, frozen) = model.pending.remove(i % model.pending.len());
                match op {
                    Op::Settle(_) => {
                        withdrawals::approve(
                            &app,
                            &payments_testing::operator(Action::ApproveWithdrawal),
                            &order_no,
                            None,
                        )
                        .await?;
                        withdrawals::settle(&app, &order_no, None).await?;
                        model.frozen -= frozen;
                    }
                    Op::Reject(_) => {
                        withdrawals::reject(
                            &app,
                            &payments_testing::operator(Action::RejectWithdrawal),
                            &order_no,
                            None,
                        )
                        .await?;
                        model.frozen -= frozen;
                        model.available += frozen;
                    }
                    _ => {
                        withdrawals::approve(
                            &app,
                            &payments_testing::operator(Action::ApproveWithdrawal),
                            &order_no,
                            None,
                        )
                        .await?;
                        withdrawals::fail(&app, &order_no, None).await?;
                        model.frozen -= frozen;
                        model.available += frozen;
                    }
                }
            }
        }
        Ok(())
    }

    async fn check(&self, model: &Model) {
        let report = ledger::check(&self.app).await.unwrap();
        assert!(report.ok(), "{:?}", report.differences);
        let balances = balances::list(&self.app, &self.merchant.id).await.unwrap();
        let thb = balances.iter().find(|b| b.currency == "THB").unwrap();
        assert_eq!(thb.total(), thb.available + thb.frozen);
        assert!(thb.available >= Decimal::ZERO && thb.frozen >= Decimal::ZERO);
        assert_eq!(
            thb.available,
            cents(model.available),
            "available vs the model"
        );
        assert_eq!(thb.frozen, cents(model.frozen), "frozen vs the model");
    }
}

#[test]
fn random_sequences_keep_the_books() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let service = rt
        .block_on(TestService::start(Profile::Sandbox, Arc::new(SystemClock)))
        .unwrap();
    let app = service.service.app().clone();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 24,
        ..ProptestConfig::default()
    });
    let strategy = (
        prop::collection::vec(op(), 1..30),
        prop_oneof![Just("0"), Just("1.5"), Just("2.75")],
    );
    runner
        .run(&strategy, |(ops, percent)| {
            rt.block_on(async {
                let created = service.new_merchant("Property").await.unwrap();
                let fee_percent: Decimal = percent.parse().unwrap();
                let rate = payments_service::domain::fees::RateConfig {
                    percent: fee_percent,
                    ..Default::default()
                };
                for direction in [
                    payments_service::domain::fees::Direction::Deposit,
                    payments_service::domain::fees::Direction::Withdrawal,
                ] {
                    payments_service::app::fees::set_merchant_rate(
                        &app,
                        &payments_testing::SET_UP,
                        &created.merchant.id,
                        "THB",
                        direction,
                        &rate,
                    )
                    .await
                    .unwrap();
                }
                let mut fixture = Fixture {
                    app: app.clone(),
                    merchant: created.merchant,
                    fee_percent,
                    n: 0,
                };
                let mut model = Model::default();
                for op in &ops {
                    fixture
                        .step(op, &mut model)
                        .await
                        .unwrap_or_else(|e| panic!("{op:?}: {e}"));
                    fixture.check(&model).await;
                }
            });
            Ok(())
        })
        .unwrap();
}
