//! Every action taken through the console is in the audit trail, and the
//! trail holds nothing else: compared row by row (request id, action,
//! target, remarks, operator) with the actions the test took, both ways.
//! Then the sign-in's rules: a wrong password and an unknown email answer
//! alike, failures are limited per account, a sign-in starts a new
//! session, and sign-out or disabling an operator ends one.

#[allow(dead_code)]
mod web;

use anyhow::{ensure, Context, Result};
use payments_service::app::audit::{self, AuditFilter};
use payments_service::app::bank::{self, NewBankTransaction};
use payments_service::app::listings::{self, Listing};
use payments_service::app::people::{self, Changes};
use payments_service::app::{deposits, withdrawals};
use payments_service::clock::ManualClock;
use payments_service::domain::status::{OperatorStatus, Role};
use payments_testing::{fund, new_deposit};
use rust_decimal::Decimal;
use std::sync::Arc;
use web::{operator, pending, service, Http, PASSWORD};

/// One action taken: what the trail must say of it.
struct Taken {
    request_id: String,
    action: &'static str,
    target: String,
    remarks: Option<&'static str>,
    by: &'static str,
}

async fn act(
    http: &Http,
    by: &'static str,
    page: &str,
    path: &str,
    fields: &[(&str, &str)],
    (action, target, remarks): (&'static str, &str, Option<&'static str>),
) -> Result<Taken> {
    let csrf = http.csrf(page).await?;
    let mut form = vec![("csrf", csrf.as_str())];
    form.extend_from_slice(fields);
    let r = http.post(path, &form).await?;
    ensure!(
        r.status() == 303,
        "{path} answered {}: {}",
        r.status(),
        r.text().await?
    );
    let request_id = r
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .context("a request id")?
        .to_string();
    Ok(Taken {
        request_id,
        action,
        target: target.to_string(),
        remarks,
        by,
    })
}

#[tokio::test]
async fn every_console_action_is_in_the_audit_trail_and_nothing_else() -> Result<()> {
    let clock = ManualClock::at_system_time();
    let svc = service(Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let alice = Http::sign_in(
        &base,
        "console",
        &operator(app, "alice", Role::Approver).await?,
        PASSWORD,
        &clock,
    )
    .await?;
    let bob = Http::sign_in(
        &base,
        "console",
        &operator(app, "bob", Role::Approver).await?,
        PASSWORD,
        &clock,
    )
    .await?;
    let vera = Http::sign_in(
        &base,
        "console",
        &operator(app, "vera", Role::Viewer).await?,
        PASSWORD,
        &clock,
    )
    .await?;
    let m = svc.new_merchant("Audited").await?.merchant;
    fund(app, &m, "FUND-1", Decimal::from(100_000), "THB").await?;
    let small = pending(app, &m, "W-1", 100, "Small").await?.order_no;
    let large = pending(app, &m, "W-2", 5000, "Large").await?.order_no;
    let third = pending(app, &m, "W-3", 300, "Third").await?.order_no;
    // A deposit with a callback address (never posted: no worker runs), and
    // a bank transfer that names no order.
    let deposit = deposits::create(
        app,
        &m,
        new_deposit(
            "D-1",
            Decimal::from(300),
            "THB",
            Some("http://127.0.0.1:9/cb"),
        ),
    )
    .await?;
    deposits::complete(
        app,
        &payments_testing::SET_UP,
        &deposit.order_no,
        None,
        None,
    )
    .await?;
    let other =
        deposits::create(app, &m, new_deposit("D-2", Decimal::from(250), "THB", None)).await?;
    let transfer = bank::ingest(
        app,
        &payments_testing::SET_UP,
        NewBankTransaction {
            account_id: "acct-thb-1".into(),
            bank_reference: "REF-UNMATCHED-1".into(),
            amount: Decimal::from(250),
            currency: "THB".into(),
            remark: Some("no order named".into()),
            payer_name: Some("Payer".into()),
            payer_account_no: None,
            received_at: None,
        },
    )
    .await?
    .row
    .id;
    let delivery = web::first_delivery(app, &deposit.order_no).await?;

    let review = |no: &str| format!("/console/withdrawals/{no}/review");
    let w = "/console/withdrawals";
    let mut taken = vec![
        act(
            &alice,
            "alice",
            w,
            &review(&small),
            &[
                ("decision", "approve"),
                ("remarks", "fine"),
                ("code", &alice.code()?),
            ],
            ("approve_withdrawal", &small, Some("fine")),
        )
        .await?,
        act(
            &alice,
            "alice",
            w,
            &review(&large),
            &[
                ("decision", "approve"),
                ("remarks", "first"),
                ("code", &alice.code()?),
            ],
            ("approve_withdrawal", &large, Some("first")),
        )
        .await?,
        act(
            &bob,
            "bob",
            w,
            &review(&large),
            &[
                ("decision", "approve"),
                ("remarks", "second"),
                ("code", &bob.code()?),
            ],
            ("approve_withdrawal", &large, Some("second")),
        )
        .await?,
        act(
            &bob,
            "bob",
            w,
            &review(&third),
            &[("decision", "reject"), ("remarks", "no")],
            ("reject_withdrawal", &third, Some("no")),
        )
        .await?,
    ];
    // A match is money: alice files it, bob approves it.
    taken.push(
        act(
            &alice,
            "alice",
            "/console/bank",
            &format!("/console/bank/{transfer}/match"),
            &[("order_no", &other.order_no), ("remarks", "payer phoned")],
            ("file_change_request", &transfer, Some("payer phoned")),
        )
        .await?,
    );
    let filed = payments_service::app::change_requests::list(app, Listing::default(), None)
        .await?
        .items
        .first()
        .context("alice's change request")?
        .id
        .clone();
    taken.push(
        act(
            &bob,
            "bob",
            "/console/changes",
            &format!("/console/changes/{filed}/decide"),
            &[
                ("decision", "approve"),
                ("remarks", "agreed"),
                ("code", &bob.code()?),
            ],
            ("match_bank_transaction", &transfer, Some("payer phoned")),
        )
        .await?,
    );
    taken.push(
        act(
            &alice,
            "alice",
            &format!("/console/callbacks/{delivery}"),
            &format!("/console/callbacks/{delivery}/retry"),
            &[],
            ("retry_callback", &delivery, None),
        )
        .await?,
    );
    ensure!(withdrawals::find_any(app, &large)
        .await?
        .approved_at
        .is_some());

    // Refused actions leave no row: a viewer's, and one without the token.
    let csrf = vera.csrf(w).await?;
    let r = vera
        .post(&review(&third), &[("csrf", &csrf), ("decision", "approve")])
        .await?;
    ensure!(
        r.status() == 403,
        "a viewer's approval answered {}",
        r.status()
    );
    let r = alice
        .post(
            &review(&third),
            &[("csrf", "not-the-token"), ("decision", "approve")],
        )
        .await?;
    ensure!(
        r.status() == 403,
        "a post without the form token answered {}",
        r.status()
    );

    let trail = audit::list(
        app,
        Listing {
            limit: Some(200),
            ..Listing::default()
        },
        AuditFilter::default(),
    )
    .await?
    .items;
    ensure!(
        trail.len() == taken.len(),
        "{} rows for {} actions",
        trail.len(),
        taken.len()
    );
    for t in &taken {
        let row = trail
            .iter()
            .find(|r| r.request_id == t.request_id)
            .with_context(|| format!("no row for {} on {}", t.action, t.target))?;
        ensure!(
            row.action == t.action,
            "{} recorded as {}",
            t.action,
            row.action
        );
        ensure!(
            row.target_id == t.target,
            "{}: target {}",
            t.action,
            row.target_id
        );
        ensure!(
            row.remarks.as_deref() == t.remarks,
            "{}: remarks {:?}",
            t.action,
            row.remarks
        );
        ensure!(
            row.operator_name == t.by && row.operator_id.is_some(),
            "{}: by {}",
            t.action,
            row.operator_name
        );
    }
    Ok(())
}

#[tokio::test]
async fn sign_in_answers_alike_limits_failures_and_sessions_end() -> Result<()> {
    let clock = ManualClock::at_system_time();
    let svc = service(Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let email = operator(app, "olga", Role::Approver).await?;
    let client = no_redirects()?;
    let attempt = |who: String, password: &'static str| {
        let (client, base) = (client.clone(), base.clone());
        async move {
            let (status, page) = console_sign_in(&client, &base, &who, password).await?;
            Ok::<_, anyhow::Error>((status, page.replace(&who, "EMAIL")))
        }
    };
    let wrong = attempt(email.clone(), "not the password at all").await?;
    let unknown = attempt("nobody@ops.example.test".into(), "not the password at all").await?;
    ensure!(
        wrong.0 == 401 && wrong == unknown,
        "a wrong password and an unknown email differ"
    );
    for _ in 0..4 {
        attempt(email.clone(), "still not the password").await?;
    }
    let limited = attempt(email.clone(), PASSWORD).await?;
    ensure!(limited.0 == 429, "the sixth attempt answered {}", limited.0);

    let second = operator(app, "sam", Role::Viewer).await?;
    let first = Http::sign_in(&base, "console", &second, PASSWORD, &clock).await?;
    ensure!(first.get("/console/withdrawals").await?.status() == 200);
    // Signing in again from the same browser starts a new session and
    // ends the one the browser had.
    let again = client
        .post(format!("{base}/console/login"))
        .header("cookie", &first.cookie)
        .header("content-type", web::FORM)
        .body(web::form_body(&[
            ("email", &second),
            ("password", PASSWORD),
        ]))
        .send()
        .await?;
    let cookie = again
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .context("a new cookie")?;
    ensure!(
        cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Strict")
            && cookie.contains("Path=/console")
    );
    ensure!(
        first.get("/console/withdrawals").await?.status() == 303,
        "the session the browser had still works"
    );
    let renewed = Http {
        cookie: cookie.split(';').next().unwrap_or_default().to_string(),
        ..first
    };
    ensure!(renewed.get("/console/withdrawals").await?.status() == 200);
    // Sign-out ends it.
    let csrf = renewed.csrf("/console/withdrawals").await?;
    ensure!(
        renewed
            .post("/console/logout", &[("csrf", &csrf)])
            .await?
            .status()
            == 303
    );
    ensure!(
        renewed.get("/console/withdrawals").await?.status() == 303,
        "a signed-out session still works"
    );

    // Disabling an operator ends its sessions at once.
    let live = Http::sign_in(&base, "console", &second, PASSWORD, &clock).await?;
    let sam = listings::operators(app, Listing::default())
        .await?
        .items
        .into_iter()
        .find(|o| o.email == second)
        .context("sam")?;
    people::change(
        app,
        &payments_testing::SET_UP,
        &sam.id,
        Changes {
            name: None,
            role: None,
            status: Some(OperatorStatus::Disabled),
        },
    )
    .await?;
    ensure!(
        live.get("/console/withdrawals").await?.status() == 303,
        "a disabled operator's session still works"
    );
    Ok(())
}

#[tokio::test]
async fn a_password_set_again_ends_the_operators_console_sessions() -> Result<()> {
    let clock = ManualClock::at_system_time();
    let svc = service(Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let email = operator(app, "rita", Role::Approver).await?;
    let other = operator(app, "ravi", Role::Viewer).await?;
    let stolen = Http::sign_in(&base, "console", &email, PASSWORD, &clock).await?;
    let bystander = Http::sign_in(&base, "console", &other, PASSWORD, &clock).await?;
    ensure!(stolen.get("/console/withdrawals").await?.status() == 200);

    people::set_password(
        app,
        &payments_testing::SET_UP,
        email.clone(),
        "a new passphrase nobody else has".into(),
    )
    .await?;
    ensure!(
        stolen.get("/console/withdrawals").await?.status() == 303,
        "a session signed in with the old password still works"
    );
    ensure!(
        bystander.get("/console/withdrawals").await?.status() == 200,
        "another operator's session ended too"
    );
    let fresh = Http::sign_in(
        &base,
        "console",
        &email,
        "a new passphrase nobody else has",
        &clock,
    )
    .await?;
    ensure!(fresh.get("/console/withdrawals").await?.status() == 200);
    Ok(())
}

#[tokio::test]
async fn a_forgotten_authenticator_ends_the_sessions_and_the_next_sign_in_sets_up_another(
) -> Result<()> {
    let clock = ManualClock::at_system_time();
    let svc = service(Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let email = operator(app, "lena", Role::Approver).await?;
    let first = Http::sign_in(&base, "console", &email, PASSWORD, &clock).await?;
    ensure!(first.get("/console/withdrawals").await?.status() == 200);
    let old_code = first.code()?;

    let (_, had) =
        payments_service::app::second_factor::reset(app, &payments_testing::SET_UP, email.clone())
            .await?;
    ensure!(had, "lena had an authenticator");
    ensure!(
        first.get("/console/withdrawals").await?.status() == 303,
        "a session outlived the reset"
    );
    // The next sign-in shows a new key, and the old phone's codes no longer open it.
    let half = Http::with_password(&base, "console", &email, PASSWORD, &clock).await?;
    let page = half.get("/console/second-factor").await?.text().await?;
    let key = web::shown_key(&page).context("a new key to set up")?;
    let csrf = half.csrf("/console/second-factor").await?;
    let r = half
        .post(
            "/console/second-factor",
            &[("csrf", &csrf), ("code", &old_code)],
        )
        .await?;
    ensure!(
        r.status() == 401,
        "the old phone's code answered {}",
        r.status()
    );
    web::keep_key(&email, &key);
    let r = half
        .post(
            "/console/second-factor",
            &[("csrf", &csrf), ("code", &half.code()?)],
        )
        .await?;
    ensure!(
        r.status() == 303,
        "the new authenticator's code answered {}",
        r.status()
    );
    ensure!(half.get("/console/withdrawals").await?.status() == 200);
    Ok(())
}

/// A lockout is remembered in memory once read (`app::lockouts`), so that
/// a crowd past the limit costs no database read; remembered exactly: it
/// ends the second the oldest failure leaves the window, not a second
/// later, and an address's lockout holds whatever email it tries next.
#[tokio::test]
async fn a_lockout_remembered_ends_when_its_oldest_failure_ages_out() -> Result<()> {
    use payments_service::app::web_sessions::{ADDRESS_FAILURES, FAILURE_WINDOW_SECONDS};
    let clock = ManualClock::at_system_time();
    let svc = service(Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let email = operator(app, "lena", Role::Viewer).await?;
    let client = no_redirects()?;
    let attempt = |who: String, password: &'static str| {
        let (client, base) = (client.clone(), base.clone());
        async move { Ok::<_, anyhow::Error>(console_sign_in(&client, &base, &who, password).await?.0) }
    };
    // Five wrong passwords lock the account; the oldest is a second older.
    attempt(email.clone(), "not the password at all").await?;
    clock.advance(1);
    for _ in 0..4 {
        attempt(email.clone(), "not the password at all").await?;
    }
    for (when, expected) in [
        (0, 429),
        (FAILURE_WINDOW_SECONDS - 1, 429),
        // The oldest failure has left the window: four remain, under five.
        (1, 303),
    ] {
        clock.advance(when);
        let status = attempt(email.clone(), PASSWORD).await?;
        ensure!(
            status == expected,
            "after {when} s more: {status}, not {expected}"
        );
    }
    ensure!(
        app.lockouts.is_empty(),
        "a sign-in that succeeded left its lockout remembered"
    );

    // An address past its limit is refused whatever it tries next, the
    // right password of an account it never failed included.
    clock.advance(FAILURE_WINDOW_SECONDS + 1);
    let other = operator(app, "lars", Role::Viewer).await?;
    for i in 0..ADDRESS_FAILURES {
        let status = attempt(
            format!("nobody{i}@ops.example.test"),
            "not the password at all",
        )
        .await?;
        ensure!(status == 401, "failure {i}: {status}");
    }
    ensure!(attempt(other.clone(), PASSWORD).await? == 429);
    ensure!(
        attempt(other, PASSWORD).await? == 429,
        "remembered, still refused"
    );
    Ok(())
}

/// A client that shows a sign-in's redirect rather than following it.
fn no_redirects() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?)
}

/// One console sign-in form posted: its status and page.
async fn console_sign_in(
    client: &reqwest::Client,
    base: &str,
    email: &str,
    password: &str,
) -> Result<(u16, String)> {
    let r = client
        .post(format!("{base}/console/login"))
        .header("content-type", web::FORM)
        .body(web::form_body(&[("email", email), ("password", password)]))
        .send()
        .await?;
    let status = r.status().as_u16();
    Ok((status, r.text().await?))
}
