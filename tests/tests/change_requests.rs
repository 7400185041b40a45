//! Issue 51: change requests under contention and the people who may
//! decide them. Two approvers approving one request at once move the money
//! once; the operator who created a merchant does not check its money; an
//! operator one admin made alone counts only once a second admin vouches.
//! On SQLite, and on PostgreSQL when PAYMENTS_TEST_DATABASE_URL names a
//! server.

use anyhow::Result;
use payments_service::app::actor::Actor;
use payments_service::app::bank::NewBankTransaction;
use payments_service::app::change_requests::{self, Change};
use payments_service::app::people::{self, NewOperator, Operator};
use payments_service::app::{balances, deposits, merchants, App};
use payments_service::clock::SystemClock;
use payments_service::domain::error::ApiError;
use payments_service::domain::four_eyes::ChangeRequestStatus;
use payments_service::domain::people::Action;
use payments_service::domain::routing::Profile;
use payments_service::domain::status::{DepositStatus, Role};
use payments_testing::{TestService, SET_UP};
use rust_decimal::Decimal;
use std::sync::Arc;

/// An operator as the operator API hands them to a use case.
fn acting(who: &people::OperatorRow, action: Action) -> Actor {
    Actor::operator(
        Operator {
            id: Some(who.id.clone()),
            name: who.name.clone(),
            role: who.role,
        },
        action,
        "test",
    )
}

async fn operator(app: &App, by: &Actor, name: &str, role: Role) -> Result<people::OperatorRow> {
    Ok(people::create(
        app,
        by,
        NewOperator {
            name: name.into(),
            email: format!("{name}@example.test"),
            role,
        },
    )
    .await?)
}

fn completion(order_no: &str) -> Change {
    Change::CompleteDeposit {
        order_no: order_no.into(),
        actual_amount: None,
        remarks: Some("paid at the counter".into()),
    }
}

async fn available(app: &App, merchant_id: &str) -> Result<Decimal> {
    Ok(balances::list(app, merchant_id)
        .await?
        .into_iter()
        .find(|b| b.currency == "THB")
        .map_or(Decimal::ZERO, |b| b.available))
}

#[tokio::test]
async fn two_approvals_at_once_move_the_money_once_and_the_merchant_s_creator_does_not_check(
) -> Result<()> {
    let svc = TestService::start(Profile::Sandbox, Arc::new(SystemClock)).await?;
    let app = svc.service.app();
    let admin = operator(app, &SET_UP, "admin", Role::Admin).await?;
    let maker = operator(app, &SET_UP, "maker", Role::Approver).await?;
    let first = operator(app, &SET_UP, "first", Role::Approver).await?;
    let second = operator(app, &SET_UP, "second", Role::Approver).await?;

    // The admin creates the merchant: its money is not the admin's to check.
    let m = merchants::create(app, &acting(&admin, Action::CreateMerchant), "CR", "CR").await?;
    let order = deposits::create(
        app,
        &m.merchant,
        payments_testing::new_deposit("CR-1", Decimal::from(100), "THB", None),
    )
    .await?;
    let filed = change_requests::file(
        app,
        &acting(&maker, Action::FileChangeRequest),
        completion(&order.order_no),
        None,
    )
    .await?;
    let refused = change_requests::approve(
        app,
        &acting(&admin, Action::ApproveChangeRequest),
        &filed.id,
        None,
    )
    .await;
    assert!(
        matches!(refused, Err(ApiError::CreatorChecks(_))),
        "{refused:?}"
    );

    // Two different approvers at once: one takes the action, the other is
    // told the request was decided.
    let by_first = acting(&first, Action::ApproveChangeRequest);
    let by_second = acting(&second, Action::ApproveChangeRequest);
    let (a, b) = tokio::join!(
        change_requests::approve(app, &by_first, &filed.id, None),
        change_requests::approve(app, &by_second, &filed.id, None),
    );
    let taken = [a.is_ok(), b.is_ok()];
    assert_eq!(taken.iter().filter(|t| **t).count(), 1, "{a:?} / {b:?}");
    for refused in [a, b].into_iter().filter_map(Result::err) {
        assert_eq!(refused.code(), "INVALID_STATE_TRANSITION", "{refused:?}");
    }
    assert_eq!(available(app, &m.merchant.id).await?, Decimal::from(100));
    assert_eq!(
        deposits::find_any(app, &order.order_no).await?.status,
        DepositStatus::Completed
    );
    assert_eq!(
        change_requests::find(app, &filed.id).await?.status,
        ChangeRequestStatus::Approved
    );
    Ok(())
}

#[tokio::test]
async fn an_operator_one_admin_made_alone_counts_once_a_second_admin_vouches() -> Result<()> {
    let svc = TestService::start(Profile::Sandbox, Arc::new(SystemClock)).await?;
    let app = svc.service.app();
    let boss = operator(app, &SET_UP, "boss", Role::Admin).await?;
    let other = operator(app, &SET_UP, "other", Role::Admin).await?;
    let by_boss = acting(&boss, Action::CreateOperator);
    let alt = operator(app, &by_boss, "alt", Role::Approver).await?;
    assert!(!alt.vouched(), "made by one admin alone");

    let m = merchants::create(app, &SET_UP, "VO", "VO").await?;
    let order = deposits::create(
        app,
        &m.merchant,
        payments_testing::new_deposit("VO-1", Decimal::from(100), "THB", None),
    )
    .await?;
    let filed = change_requests::file(
        app,
        &acting(&boss, Action::FileChangeRequest),
        completion(&order.order_no),
        None,
    )
    .await?;
    let by_alt = acting(&alt, Action::ApproveChangeRequest);
    let refused = change_requests::approve(app, &by_alt, &filed.id, None).await;
    assert!(
        matches!(refused, Err(ApiError::NotVouched(_))),
        "{refused:?}"
    );

    // Not by the one who made them, nor by themselves.
    let own = people::vouch(app, &acting(&boss, Action::VouchOperator), &alt.id).await;
    assert!(matches!(own, Err(ApiError::VouchForOwn)), "{own:?}");
    let selfish = people::vouch(app, &acting(&alt, Action::VouchOperator), &alt.id).await;
    assert!(matches!(selfish, Err(ApiError::VouchForOwn)), "{selfish:?}");
    let vouched = people::vouch(app, &acting(&other, Action::VouchOperator), &alt.id).await?;
    assert_eq!(vouched.vouched_by.as_deref(), Some(other.id.as_str()));
    change_requests::approve(app, &by_alt, &filed.id, None).await?;
    assert_eq!(available(app, &m.merchant.id).await?, Decimal::from(100));

    // A token another admin issues for them is that admin's to use:
    // they wait for a vouch again.
    people::issue_token(
        app,
        &acting(&other, Action::IssueOperatorToken),
        &alt.id,
        "spare".into(),
        None,
    )
    .await?;
    assert!(!people::find(app, &alt.id).await?.vouched());
    people::vouch(app, &acting(&boss, Action::VouchOperator), &alt.id).await?;
    assert!(people::find(app, &alt.id).await?.vouched());

    // Raised by one admin alone, they wait for a vouch again.
    let raised = people::change(
        app,
        &acting(&boss, Action::ChangeOperator),
        &alt.id,
        people::Changes {
            role: Some(Role::Admin),
            ..Default::default()
        },
    )
    .await?;
    assert!(!raised.vouched(), "a raise by one admin needs a second");
    assert_eq!(raised.made_by.as_deref(), Some(boss.id.as_str()));
    Ok(())
}

#[tokio::test]
async fn a_request_keeps_no_full_account_number_and_one_maker_holds_at_most_100_pending(
) -> Result<()> {
    let svc = TestService::start(Profile::Sandbox, Arc::new(SystemClock)).await?;
    let app = svc.service.app();
    let maker = operator(app, &SET_UP, "maker", Role::Approver).await?;
    let by = acting(&maker, Action::FileChangeRequest);
    let transfer = |i: usize| {
        Change::IngestBankTransaction(NewBankTransaction {
            account_id: "acct-thb-1".into(),
            bank_reference: format!("REF-{i}"),
            amount: Decimal::from(100),
            currency: "THB".into(),
            remark: None,
            payer_name: None,
            payer_account_no: Some("1234567890".into()),
            received_at: None,
        })
    };
    let first = change_requests::file(app, &by, transfer(0), None).await?;
    assert!(
        !first.parameters.contains("1234567890"),
        "{}",
        first.parameters
    );
    assert!(
        first.parameters.contains("\"7890\""),
        "{}",
        first.parameters
    );
    for i in 1..100 {
        change_requests::file(app, &by, transfer(i), None).await?;
    }
    let refused = change_requests::file(app, &by, transfer(100), None).await;
    assert!(
        matches!(refused, Err(ApiError::RateLimited { .. })),
        "the 101st pending request: {refused:?}"
    );
    Ok(())
}
