//! The audit trail: an operator action appends one row in the transaction
//! of the action (none when it is refused or fails), with a setting before
//! and after; the database refuses to update or delete a row; and two
//! approvers at once on a four-eyes withdrawal are counted one after the
//! other. On SQLite, and on PostgreSQL when PAYMENTS_TEST_DATABASE_URL
//! names a server.

use anyhow::Result;
use diesel::Connection;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl as _};
use payments_service::app::actor::Actor;
use payments_service::app::audit::{self, AuditFilter};
use payments_service::app::listings::Listing;
use payments_service::app::people::{self, Operator};
use payments_service::app::{merchants, withdrawals};
use payments_service::clock::OffsetClock;
use payments_service::domain::people::Action;
use payments_service::domain::routing::Profile;
use payments_service::domain::status::{Role, WithdrawalStatus};
use payments_testing::{fund, TestService};
use rust_decimal::Decimal;
use std::sync::Arc;

fn admin(name: &str) -> Operator {
    Operator {
        id: None,
        name: name.into(),
        role: Role::Admin,
    }
}

async fn timeout_as(
    app: &payments_service::app::App,
    by: &Operator,
    request_id: &str,
    merchant_id: &str,
    seconds: i64,
) -> Result<(), payments_service::domain::error::ApiError> {
    let by = Actor::operator(by.clone(), Action::SetCallbackTimeout, request_id);
    merchants::set_callback_timeout(app, &by, merchant_id, seconds)
        .await
        .map(|_| ())
}

/// Runs `sql` on the service's database; the error's text when refused.
async fn write_directly(database_url: &str, sql: &str) -> Result<(), String> {
    if let Some(path) = database_url.strip_prefix("sqlite://") {
        let mut c = diesel::SqliteConnection::establish(path).map_err(|e| e.to_string())?;
        diesel::RunQueryDsl::execute(diesel::sql_query(sql), &mut c)
            .map(|_| ())
            .map_err(|e| e.to_string())
    } else {
        let mut c = AsyncPgConnection::establish(database_url)
            .await
            .map_err(|e| e.to_string())?;
        diesel::sql_query(sql)
            .execute(&mut c)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

#[tokio::test]
async fn an_action_writes_its_row_with_it_and_the_database_refuses_to_change_one() -> Result<()> {
    let svc = TestService::start(Profile::Sandbox, Arc::new(OffsetClock::default())).await?;
    let app = svc.service.app();
    let m = svc.new_merchant("Audited").await?.merchant;
    let by = admin("auditor");

    // Refused before its transaction, and failed inside it: no row.
    assert!(timeout_as(app, &by, "req-refused", &m.id, 61)
        .await
        .is_err());
    assert!(timeout_as(app, &by, "req-missing", "no-such-merchant", 5)
        .await
        .is_err());
    timeout_as(app, &by, "req-done", &m.id, 7).await?;

    let filter = AuditFilter {
        target_id: Some(m.id.clone()),
        ..AuditFilter::default()
    };
    let rows = audit::list(app, Listing::default(), filter).await?.items;
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let row = &rows[0];
    assert_eq!(row.action, "set_callback_timeout");
    assert_eq!(row.request_id, "req-done");
    assert_eq!(row.operator_name, "auditor");
    assert_eq!(row.remarks, None, "a setting changes without remarks");
    let before: serde_json::Value =
        serde_json::from_str(row.before_state.as_deref().unwrap_or("null"))?;
    let after: serde_json::Value =
        serde_json::from_str(row.after_state.as_deref().unwrap_or("null"))?;
    assert_eq!(before["callback_timeout_seconds"], 10, "{before}");
    assert_eq!(after["callback_timeout_seconds"], 7, "{after}");

    for sql in [
        "UPDATE audit_events SET remarks = 'rewritten'",
        "DELETE FROM audit_events",
    ] {
        let refused = write_directly(&svc.database_url, sql).await;
        let why = refused.expect_err(sql);
        assert!(why.contains("append-only"), "{sql}: {why}");
    }
    if !svc.database_url.starts_with("sqlite://") {
        let why = write_directly(&svc.database_url, "TRUNCATE audit_events")
            .await
            .expect_err("TRUNCATE");
        assert!(why.contains("append-only"), "TRUNCATE: {why}");
    }
    let still = audit::list(app, Listing::default(), AuditFilter::default())
        .await?
        .items;
    assert_eq!(
        still.iter().filter(|r| r.request_id == "req-done").count(),
        1
    );
    Ok(())
}

#[tokio::test]
async fn two_approvers_at_once_move_a_four_eyes_withdrawal_once() -> Result<()> {
    let svc = TestService::start(Profile::Sandbox, Arc::new(OffsetClock::default())).await?;
    let app = svc.service.app().clone();
    let m = svc.new_merchant("Four eyes").await?.merchant;
    fund(&app, &m, "FE-FUND", Decimal::from(900_000), "THB").await?;
    let new =
        payments_testing::new_withdrawal("FE-BIG", Decimal::from(500_000), "THB", "1234567890");
    let w = withdrawals::create(&app, &m, new).await?;
    // Two people: a configuration token never counts as one of two.
    let person = |name: &str, role| {
        let app = app.clone();
        let new = people::NewOperator {
            name: name.into(),
            email: format!("{}@example.test", name.to_lowercase()),
            role,
        };
        async move { people::create(&app, &payments_testing::SET_UP, new).await }
    };
    let (ann, bob) = (
        person("Ann", Role::Approver).await?,
        person("Bob", Role::Admin).await?,
    );
    let approving = |who: &people::OperatorRow| {
        let op = Operator {
            id: Some(who.id.clone()),
            name: who.name.clone(),
            role: who.role,
        };
        Actor::operator(op, Action::ApproveWithdrawal, "test")
    };
    let (as_ann, as_bob) = (approving(&ann), approving(&bob));
    let as_token = Actor::operator(admin("bootstrap"), Action::ApproveWithdrawal, "test");
    let refused = withdrawals::record_approval(&app, &as_token, &w.order_no, None).await;
    assert!(
        matches!(
            refused,
            Err(payments_service::domain::error::ApiError::NotAPerson(_))
        ),
        "a configuration token is not one of two people: {refused:?}"
    );
    let (a, b) = tokio::join!(
        withdrawals::approvals::approve(&app, &as_ann, &w.order_no, None),
        withdrawals::approvals::approve(&app, &as_bob, &w.order_no, None),
    );
    let (a, b) = (a?, b?);
    let statuses = [a.order.status, b.order.status];
    assert!(
        statuses.contains(&WithdrawalStatus::Pending)
            && statuses.contains(&WithdrawalStatus::Approved),
        "one approval keeps it pending, the other moves it: {statuses:?}"
    );
    // Each answer carries the approvals its own transaction saw, itself
    // last: counted one after the other, not both as the first.
    let mut seen = [a.approvals.len(), b.approvals.len()];
    seen.sort();
    assert_eq!(
        seen,
        [1, 2],
        "the approvals each approver was answered with"
    );
    let again = withdrawals::record_approval(&app, &as_ann, &w.order_no, None).await;
    assert!(again.is_err(), "an approved order takes no third approval");
    let order = withdrawals::find_any(&app, &w.order_no).await?;
    assert_eq!(order.status, WithdrawalStatus::Approved);
    assert_eq!(
        withdrawals::approvals::of(&app, &w.order_no).await?.len(),
        2
    );
    Ok(())
}

/// An approval holds its approval row and its audit row to its end and
/// writes them with one statement (`store::queries::deferred`): both are
/// there after it commits, and the same approver twice is refused, by
/// the read under the order's lock and, were that ever passed, by the
/// table's key at the end, with nothing of the refused transaction kept.
#[tokio::test]
async fn an_approval_writes_its_rows_at_its_end_and_one_approver_counts_once() -> Result<()> {
    use payments_service::store::rows::ApprovalRow;
    use payments_service::store::{StoreError, UniqueKey};
    let svc = TestService::start(Profile::Sandbox, Arc::new(OffsetClock::default())).await?;
    let app = svc.service.app().clone();
    let m = svc.new_merchant("Held rows").await?.merchant;
    fund(&app, &m, "HR-FUND", Decimal::from(900_000), "THB").await?;
    let new =
        payments_testing::new_withdrawal("HR-BIG", Decimal::from(500_000), "THB", "1234567890");
    let w = withdrawals::create(&app, &m, new).await?;
    let new = people::NewOperator {
        name: "Cai".into(),
        email: "cai@example.test".into(),
        role: Role::Approver,
    };
    let cai = people::create(&app, &payments_testing::SET_UP, new).await?;
    let as_cai = Actor::operator(
        Operator {
            id: Some(cai.id.clone()),
            name: cai.name.clone(),
            role: cai.role,
        },
        Action::ApproveWithdrawal,
        "held-1",
    );
    let first = withdrawals::approvals::approve(&app, &as_cai, &w.order_no, None).await?;
    assert_eq!(first.order.status, WithdrawalStatus::Pending, "four eyes");
    let trail = || {
        let filter = AuditFilter {
            target_id: Some(w.order_no.clone()),
            ..AuditFilter::default()
        };
        let app = app.clone();
        async move { audit::list(&app, Listing::default(), filter).await }
    };
    let rows = trail().await?.items;
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0].action, "approve_withdrawal");
    assert_eq!(rows[0].request_id, "held-1");
    let approvals = withdrawals::approvals::of(&app, &w.order_no).await?;
    assert_eq!(approvals.len(), 1);

    let again = withdrawals::approvals::approve(&app, &as_cai, &w.order_no, None).await;
    assert!(
        matches!(
            again,
            Err(payments_service::domain::error::ApiError::AlreadyApproved(
                _
            ))
        ),
        "{again:?}"
    );
    // Past the read: the same approver's row held again breaks the key
    // when the held rows are written, and the transaction undoes.
    let twice = ApprovalRow {
        id: format!("{}-again", approvals[0].id),
        ..approvals[0].clone()
    };
    let refused = app
        .db
        .transaction::<(), StoreError, _>(move |tx| {
            Box::pin(async move {
                tx.defer_inserts();
                tx.insert_approval(&twice).await
            })
        })
        .await;
    assert!(
        matches!(
            refused,
            Err(StoreError::Conflict {
                key: UniqueKey::WithdrawalApproval,
                ..
            })
        ),
        "{refused:?}"
    );
    assert_eq!(trail().await?.items.len(), 1, "no row of the refusals");
    assert_eq!(
        withdrawals::approvals::of(&app, &w.order_no).await?.len(),
        1
    );
    Ok(())
}

/// Issue 57: an operator token stops by itself. It works to its last
/// second, then answers as a revoked one does; the default is 90 days,
/// and a life outside an hour to 366 days is refused.
#[tokio::test]
async fn an_operator_token_stops_working_when_it_expires() {
    use payments_service::app::people::{self, NewOperator};
    use payments_service::clock::ManualClock;
    use payments_service::domain::error::ApiError;
    use payments_service::domain::status::Role;
    let clock = ManualClock::at(1_800_000_000);
    let service = payments_testing::TestService::start(
        payments_service::Profile::Sandbox,
        std::sync::Arc::new(clock.clone()),
    )
    .await
    .unwrap();
    let app = service.service.app();
    let set_up = &payments_testing::SET_UP;
    let op = people::create(
        app,
        set_up,
        NewOperator {
            name: "Tia".into(),
            email: "tia@ops.example.test".into(),
            role: Role::Approver,
        },
    )
    .await
    .unwrap();
    let short = people::issue_token(app, set_up, &op.id, "a day".into(), Some(86_400))
        .await
        .unwrap();
    let default = people::issue_token(app, set_up, &op.id, "default".into(), None)
        .await
        .unwrap();
    assert_eq!(short.row.expires_at, Some(1_800_000_000 + 86_400));
    assert_eq!(
        default.row.expires_at,
        Some(1_800_000_000 + people::TOKEN_DEFAULT_SECONDS)
    );
    for refused in [Some(3_599), Some(31_622_401)] {
        let e = people::issue_token(app, set_up, &op.id, "bad".into(), refused)
            .await
            .err();
        assert!(matches!(e, Some(ApiError::InvalidField { .. })), "{e:?}");
    }

    clock.advance(86_399);
    assert!(
        people::authenticate(app, &short.token).await.is_ok(),
        "its last second"
    );
    clock.advance(1);
    assert!(matches!(
        people::authenticate(app, &short.token).await,
        Err(ApiError::UnknownOperatorToken)
    ));
    assert!(people::authenticate(app, &default.token).await.is_ok());
}
