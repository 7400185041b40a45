//! Issue 51: listings that promise an order keep it within one second.
//! Every row here is made at one second of the service's clock, one after
//! another, and each listing gives them back in the order they were made:
//! operators, merchants and the audit trail newest first (a token never listed as
//! issued before its operator existed), an owner's invitations newest
//! first, and each order's approvals first first. With random ids as the
//! tie-break, 50 rows in one second came back in any order. On SQLite,
//! and on PostgreSQL when PAYMENTS_TEST_DATABASE_URL names a server.

use anyhow::Result;
use base64::Engine;
use payments_service::app::actor::Actor;
use payments_service::app::audit::{self, AuditFilter};
use payments_service::app::listings::{self, Listing};
use payments_service::app::people::{self, Operator};
use payments_service::app::{owners, withdrawals};
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::people::Action;
use payments_service::domain::routing::Profile;
use payments_service::domain::status::Role;
use payments_testing::{fund, TestService};
use rust_decimal::Decimal;
use std::sync::Arc;

const MADE: usize = 50;

fn fifty() -> Listing {
    Listing {
        limit: Some(MADE as i64),
        ..Listing::default()
    }
}

fn acting(who: &people::OperatorRow, action: Action, request: String) -> Actor {
    Actor::operator(
        Operator {
            id: Some(who.id.clone()),
            name: who.name.clone(),
            role: who.role,
        },
        action,
        request,
    )
}

async fn service() -> Result<TestService> {
    let secret = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(uuid::Uuid::new_v4().as_bytes())
    );
    // One second for the whole test: the clock never moves.
    let clock = ManualClock::at(1_800_000_000);
    TestService::start_with(Profile::Sandbox, Arc::new(clock), |c| {
        // Never posted: no delivery worker runs here.
        c.platform_events_url = Some("http://127.0.0.1:9/platform".into());
        c.platform_events_secret = Some(secret);
    })
    .await
}

async fn person(app: &payments_service::app::App, name: &str) -> Result<people::OperatorRow> {
    let new = people::NewOperator {
        name: name.into(),
        email: format!("{}@example.test", name.to_lowercase()),
        role: Role::Admin,
    };
    Ok(people::create(app, &payments_testing::SET_UP, new).await?)
}

#[tokio::test]
async fn operators_and_the_audit_trail_list_newest_first_within_one_second() -> Result<()> {
    let svc = service().await?;
    let app = svc.service.app();
    let admin = person(app, "Root").await?;
    for i in 0..MADE {
        let by = acting(&admin, Action::CreateOperator, format!("create-{i}"));
        let new = people::NewOperator {
            name: format!("Op {i}"),
            email: format!("op{i}@example.test"),
            role: Role::Viewer,
        };
        let made = people::create(app, &by, new).await?;
        let by = acting(&admin, Action::IssueOperatorToken, format!("token-{i}"));
        people::issue_token(app, &by, &made.id, "first".into(), None).await?;
    }

    let listed: Vec<String> = listings::operators(app, fifty())
        .await?
        .items
        .into_iter()
        .map(|o| o.name)
        .collect();
    let made: Vec<String> = (0..MADE).rev().map(|i| format!("Op {i}")).collect();
    assert_eq!(listed, made, "operators, newest first");

    let mut trail = Vec::new();
    let mut listing = fifty();
    while trail.len() < 2 * MADE {
        let page = audit::list(app, listing.clone(), AuditFilter::default()).await?;
        trail.extend(page.items.into_iter().map(|r| r.request_id));
        match page.next_cursor {
            Some(c) => listing.cursor = Some(c),
            None => break,
        }
    }
    let happened: Vec<String> = (0..MADE)
        .rev()
        .flat_map(|i| [format!("token-{i}"), format!("create-{i}")])
        .collect();
    assert_eq!(
        trail, happened,
        "the audit trail, newest first, across pages"
    );
    Ok(())
}

#[tokio::test]
async fn merchants_list_newest_first_within_one_second() -> Result<()> {
    let svc = service().await?;
    let app = svc.service.app();
    for i in 0..MADE {
        payments_service::app::merchants::create(
            app,
            &payments_testing::SET_UP,
            &format!("order{i}"),
            &format!("Merchant {i}"),
        )
        .await?;
    }
    let listed: Vec<String> = listings::merchants(app, fifty(), None)
        .await?
        .items
        .into_iter()
        .map(|m| m.name)
        .collect();
    let made: Vec<String> = (0..MADE).rev().map(|i| format!("Merchant {i}")).collect();
    assert_eq!(listed, made, "merchants, newest first");
    Ok(())
}

#[tokio::test]
async fn invitations_list_newest_first_within_one_second() -> Result<()> {
    let svc = service().await?;
    let app = svc.service.app();
    let m = svc.new_merchant("Invited").await?.merchant;
    for i in 0..MADE {
        owners::invite(
            app,
            &payments_testing::SET_UP,
            &m.id,
            format!("owner{i}@example.test"),
        )
        .await?;
    }
    let listed: Vec<String> = owners::list(app, &m.id, fifty())
        .await?
        .items
        .into_iter()
        .map(|i| i.email)
        .collect();
    let made: Vec<String> = (0..MADE)
        .rev()
        .map(|i| format!("owner{i}@example.test"))
        .collect();
    assert_eq!(listed, made);
    Ok(())
}

#[tokio::test]
async fn each_orders_approvals_list_in_the_order_they_were_given_within_one_second() -> Result<()> {
    let svc = service().await?;
    let app = svc.service.app();
    let m = svc.new_merchant("Approved").await?.merchant;
    let orders = MADE / 2;
    fund(app, &m, "ORDER-FUND", Decimal::from(20_000_000), "THB").await?;
    let (ann, bob) = (person(app, "Ann").await?, person(app, "Bob").await?);
    // 25 orders, each needing two people; in turn Ann then Bob, and Bob
    // then Ann, so that neither name nor id sorts them by luck.
    for i in 0..orders {
        let new = payments_testing::new_withdrawal(
            &format!("TIE-{i}"),
            Decimal::from(500_000),
            "THB",
            "1234567890",
        );
        let w = withdrawals::create(app, &m, new).await?;
        let (first, second) = if i % 2 == 0 {
            (&ann, &bob)
        } else {
            (&bob, &ann)
        };
        let mut answered = Vec::new();
        for who in [first, second] {
            let by = acting(who, Action::ApproveWithdrawal, format!("approve-{i}"));
            answered = withdrawals::approvals::approve(app, &by, &w.order_no, None)
                .await?
                .approvals;
        }
        let stored = withdrawals::approvals::of(app, &w.order_no).await?;
        assert_eq!(
            answered, stored,
            "order {i}: the approvals the last approver was answered with are those stored"
        );
        let given: Vec<String> = stored.into_iter().map(|a| a.approver_name).collect();
        assert_eq!(
            given,
            [first.name.clone(), second.name.clone()],
            "order {i}'s approvals, first first"
        );
    }
    Ok(())
}

/// Issue 53: the approvers' queue is served in the order it arrived, page
/// by page, and its filters and count agree with each other.
#[tokio::test]
async fn the_approvers_queue_is_oldest_first_page_by_page_filtered_and_counted() -> Result<()> {
    let clock = ManualClock::at(1_800_000_000);
    let svc = TestService::start(Profile::Sandbox, Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let m = svc.new_merchant("Queue").await?.merchant;
    fund(app, &m, "Q-FUND", Decimal::from(10_000_000), "THB").await?;
    let mut made = Vec::new();
    for i in 0..7 {
        clock.advance(60);
        let amount = Decimal::from(if i % 2 == 0 { 100 } else { 5000 });
        let new = payments_testing::new_withdrawal(
            &format!("Q-{i}"),
            amount,
            "THB",
            &format!("12345678{i:02}"),
        );
        made.push(withdrawals::create(app, &m, new).await?.order_no);
    }
    let queue = |cursor: Option<String>| Listing {
        limit: Some(3),
        cursor,
        status: Some("pending".into()),
        oldest_first: true,
        ..Listing::default()
    };
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = listings::withdrawals(app, queue(cursor)).await?;
        seen.extend(page.items.into_iter().map(|(w, _)| w.order_no));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, made, "oldest first, across pages of 3");
    assert_eq!(listings::count_withdrawals(app, queue(None)).await?, 7);
    let large = Listing {
        min_amount: Some(5000 * 10_000),
        merchant_id: Some(m.id.clone()),
        currency: Some("THB".into()),
        ..queue(None)
    };
    assert_eq!(listings::count_withdrawals(app, large.clone()).await?, 3);
    let listed: Vec<String> = listings::withdrawals(app, large)
        .await?
        .items
        .into_iter()
        .map(|(w, _)| w.order_no)
        .collect();
    assert_eq!(listed, [made[1].clone(), made[3].clone(), made[5].clone()]);
    // Waiting at least 150 s: made at +60, +120, +180 and +240 of +420.
    let waiting = Listing {
        created_to: Some(clock.unix() - 150),
        ..queue(None)
    };
    assert_eq!(listings::count_withdrawals(app, waiting).await?, 4);
    Ok(())
}
