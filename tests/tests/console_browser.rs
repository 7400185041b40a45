//! The operators' console and the owners' portal in headless Chromium:
//! four-eyes review, a viewer's and another site's forged posts refused,
//! markup shown as text, an owner's invitation, sign-in and key rotation
//! with its grace; every page checked by axe-core (no serious or critical
//! violation), for labels and for requests to other hosts, and
//! photographed (`target/web-screenshots/`, copied to `docs/console/` and
//! `docs/portal/` by `.ci/run`).

#[allow(dead_code)]
mod browser;
#[allow(dead_code)]
mod web;

use anyhow::{ensure, Context, Result};
use browser::Browser;
use payments_service::app::{callbacks, owners, withdrawals};
use payments_service::clock::{Clock, ManualClock};
use payments_service::domain::status::{Role, WithdrawalStatus};
use payments_testing::fund;
use std::sync::Arc;
use web::{operator, pending, service, shots, DESKTOP, PASSWORD, PHONE};

/// What every page must pass, at a desktop's width and a phone's (issue 53):
/// at the window's width, then at the other one (its picture named
/// `NAME-phone.png` or `NAME-desktop.png`), and back. A shot already named
/// for a width, or a page not photographed, is checked where it is.
async fn checked(b: &Browser, shot: &str) -> Result<()> {
    at_this_width(b, shot).await?;
    if shot.is_empty() || shot.ends_with("-phone.png") || shot.ends_with("-desktop.png") {
        return Ok(());
    }
    let width = b
        .script("return window.innerWidth;")
        .await?
        .as_u64()
        .unwrap_or(0);
    let (other, back, name) = match width > u64::from(PHONE.0) {
        true => (PHONE, DESKTOP, "phone"),
        false => (DESKTOP, PHONE, "desktop"),
    };
    b.resize(other.0, other.1).await?;
    at_this_width(b, &shot.replace(".png", &format!("-{name}.png"))).await?;
    b.resize(back.0, back.1).await?;
    Ok(())
}

/// One heading, a language, a label on every field, nothing fetched from
/// another host, axe-core's serious and critical rules, and nothing wider
/// than the window; then its picture.
async fn at_this_width(b: &Browser, shot: &str) -> Result<()> {
    let report = b
        .script(
            "const unlabelled = [...document.querySelectorAll('input, select, textarea')]
               .filter(e => e.type !== 'hidden' && e.labels.length === 0).map(e => e.id || e.name);
             const foreign = performance.getEntriesByType('resource')
               .map(e => e.name).filter(n => !n.startsWith(location.origin));
             const wide = document.documentElement.scrollWidth > window.innerWidth + 1;
             return { lang: document.documentElement.lang, h1: document.querySelectorAll('h1').length,
                      unlabelled, foreign, wide };",
        )
        .await?;
    ensure!(
        report["wide"] == false,
        "{shot}: the page is wider than the window"
    );
    ensure!(
        report["lang"] == "en" && report["h1"] == 1,
        "{shot}: {report}"
    );
    ensure!(
        report["unlabelled"] == serde_json::json!([]),
        "{shot}: {report}"
    );
    ensure!(
        report["foreign"] == serde_json::json!([]),
        "{shot}: {report}"
    );
    b.script(&format!("{}\nreturn true;", web::axe_source()?))
        .await?;
    let violations = b
        .script_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, { resultTypes: ['violations'] })
               .then(r => done(r.violations
                 .filter(v => v.impact === 'serious' || v.impact === 'critical')
                 .map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(' | '))))
               .catch(e => done(['axe failed: ' + e]));",
        )
        .await?;
    ensure!(
        violations == serde_json::json!([]),
        "{shot}: axe-core reports {violations}"
    );
    // A page that shows a secret is checked but not photographed.
    if !shot.is_empty() {
        b.screenshot(shot).await?;
    }
    Ok(())
}

/// Signs in with the password and, where the console asks for it, the
/// second factor: enrolled the first time from the QR code (read off the
/// page as a phone reads it, and checked against the key shown as text),
/// and a fresh code of that key every time.
async fn sign_in(
    b: &Browser,
    base: &str,
    realm: &str,
    email: &str,
    clock: &ManualClock,
) -> Result<()> {
    b.goto(&format!("{base}/{realm}/login")).await?;
    b.keys("#email", email).await?;
    b.keys("#password", PASSWORD).await?;
    b.click("main button[type=submit]").await?;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if b.text("header")
            .await
            .unwrap_or_default()
            .contains("Sign out")
        {
            return Ok(());
        }
        if b.text("main")
            .await
            .unwrap_or_default()
            .contains("authenticator app")
        {
            break;
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "{email}: neither signed in nor asked for a code"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    if let Ok(key) = b.text("#totp-secret").await {
        let link = qr_of(b, "#totp-qr").await?;
        let plain: String = key.split_whitespace().collect();
        ensure!(
            link.starts_with("otpauth://totp/") && link.contains(&format!("secret={plain}")),
            "the QR code says {link}, the page {key}"
        );
        web::keep_key(email, &key);
        // It shows a secret: checked, not photographed.
        checked(b, "").await?;
    } else {
        checked(b, "second-factor.png").await?;
    }
    prove(b, email, clock).await
}

/// Types a fresh code into the second-factor page and continues.
async fn prove(b: &Browser, email: &str, clock: &ManualClock) -> Result<()> {
    b.keys("#code", &web::fresh_code(clock, email)?).await?;
    b.click("form[action='/console/second-factor'] button")
        .await?;
    b.wait_for_text("header", "Sign out", WAIT)
        .await
        .map(|_| ())
}

/// What the QR code at `css` encodes, read off the page's pixels.
async fn qr_of(b: &Browser, css: &str) -> Result<String> {
    let png = b.element_png(css).await?;
    let image = image::load_from_memory(&png)?.to_luma8();
    let mut prepared = rqrr::PreparedImage::prepare(image);
    let grids = prepared.detect_grids();
    ensure!(grids.len() == 1, "{} QR codes at {css}", grids.len());
    let (_, text) = grids[0].decode().map_err(|e| anyhow::anyhow!("{e:?}"))?;
    Ok(text)
}

async fn sign_out(b: &Browser) -> Result<()> {
    b.click(".signout button").await?;
    b.wait_for_text("h1", "Sign in", WAIT).await.map(|_| ())
}

const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A decision on a withdrawal; an approval with a fresh code of `email`'s
/// authenticator, as the console asks.
async fn review(
    b: &Browser,
    order_no: &str,
    remarks: &str,
    decision: &str,
    by: Option<(&str, &ManualClock)>,
) -> Result<()> {
    b.keys(&format!("#remarks-{order_no}"), remarks).await?;
    if let Some((email, clock)) = by {
        b.keys(
            &format!("#code-{order_no}"),
            &web::fresh_code(clock, email)?,
        )
        .await?;
    }
    b.click(&format!(
        "form[action='/console/withdrawals/{order_no}/review'] button[value={decision}]"
    ))
    .await?;
    b.wait_for_text("main", &format!("{order_no} is"), WAIT)
        .await
        .map(|_| ())
}

async fn status(app: &payments_service::app::App, order_no: &str) -> Result<WithdrawalStatus> {
    Ok(withdrawals::find_any(app, order_no).await?.status)
}

#[tokio::test]
async fn operators_review_withdrawals_in_the_console_and_forgeries_are_refused() -> Result<()> {
    let logs = web::logs();
    // Stopped: every code the test types is from a step of its own.
    let clock = ManualClock::at_system_time();
    let svc = service(Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let alice = operator(app, "alice", Role::Approver).await?;
    let bob = operator(app, "bob", Role::Approver).await?;
    let vera = operator(app, "vera", Role::Viewer).await?;
    let ada = operator(app, "ada", Role::Admin).await?;
    let m = svc
        .new_merchant("<script>alert('m')</script> & Sons")
        .await?
        .merchant;
    fund(
        app,
        &m,
        "FUND-1",
        rust_decimal::Decimal::from(100_000),
        "THB",
    )
    .await?;
    let small = pending(app, &m, "W-SMALL", 100, "<b>Bene</b> Small")
        .await?
        .order_no;
    let large = pending(app, &m, "W-LARGE", 5000, "Large Bene").await?;
    let large_account = large.beneficiary.account.clone();
    let large = large.order_no;
    let third = pending(app, &m, "W-THIRD", 200, "Third").await?.order_no;
    // A deposit whose callback waits (no worker runs here), for the
    // callbacks' pages.
    let called = payments_testing::new_deposit(
        "D-CB",
        rust_decimal::Decimal::from(300),
        "THB",
        Some("http://127.0.0.1:9/cb"),
    );
    let called = payments_service::app::deposits::create(app, &m, called).await?;
    payments_service::app::deposits::complete(
        app,
        &payments_testing::SET_UP,
        &called.order_no,
        None,
        None,
    )
    .await?;
    let listing = payments_service::app::listings::Listing {
        order_no: Some(called.order_no.clone()),
        ..Default::default()
    };
    let deliveries = payments_service::app::listings::callback_deliveries(app, listing).await?;
    let delivery = deliveries
        .items
        .first()
        .context("a callback record")?
        .id
        .clone();

    let b = Browser::start(DESKTOP.0, DESKTOP.1, DESKTOP.2, &shots("console")).await?;
    b.goto(&base).await?;
    checked(&b, "home.png").await?;
    b.goto(&format!("{base}/console")).await?;
    ensure!(
        b.url().await?.ends_with("/console/login"),
        "a stranger is sent to sign in"
    );
    checked(&b, "sign-in.png").await?;
    // Keyboard only: type, tab, type, enter.
    b.keys("#email", &format!("{alice}\u{E004}{PASSWORD}\u{E007}"))
        .await?;
    // An approver's first sign-in sets up the authenticator: the QR code
    // read off the screen is the key the page states.
    b.wait_for_text("h1", "Set up your authenticator", WAIT)
        .await?;
    let key = b.text("#totp-secret").await?;
    let link = qr_of(&b, "#totp-qr").await?;
    let plain: String = key.split_whitespace().collect();
    ensure!(
        link.starts_with("otpauth://totp/") && link.contains(&format!("secret={plain}")),
        "the QR code says {link}, the page {key}"
    );
    web::keep_key(&alice, &key);
    checked(&b, "").await?;
    ensure!(
        b.goto(&format!("{base}/console/withdrawals")).await.is_ok()
            && b.url().await?.ends_with("/console/second-factor"),
        "a page opened before the second factor"
    );
    // A wrong code is refused, said so, counted and logged (never the
    // code itself); nothing opens.
    let refused = || {
        payments_service::telemetry::metrics::render()
            .unwrap_or_default()
            .lines()
            .find(|l| {
                l.starts_with("payments_second_factor_refused_total")
                    && l.contains("reason=\"wrong\"")
                    && l.contains("when=\"sign_in\"")
            })
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let before = refused();
    clock.advance(30);
    let right: u32 = web::code_of(&alice, clock.unix())?.parse()?;
    let wrong = format!("{:06}", (right + 1) % 1_000_000);
    b.keys("#code", &wrong).await?;
    b.click("form[action='/console/second-factor'] button")
        .await?;
    b.wait_for_text("main", "That code is not right", WAIT)
        .await?;
    ensure!(refused() == before + 1.0, "the wrong code was not counted");
    let logged =
        String::from_utf8_lossy(&logs.lock().map_err(|_| anyhow::anyhow!("logs"))?).into_owned();
    ensure!(
        logged.contains("a second-factor code was refused") && logged.contains("reason=\"wrong\""),
        "the wrong code was not logged"
    );
    ensure!(!logged.contains(&wrong), "a code reached the log");
    ensure!(!logged.contains(&plain), "the key reached the log");
    prove(&b, &alice, &clock).await?;
    ensure!(
        b.url().await?.ends_with("/console/withdrawals"),
        "signed in, {} says {}",
        b.url().await?,
        b.text("main").await?
    );
    // Markup in a merchant's or a beneficiary's name is text.
    let main = b.text("main").await?;
    ensure!(
        main.contains("<script>alert('m')</script> & Sons") && main.contains("<b>Bene</b> Small"),
        "{main}"
    );
    let injected = b
        .script("return document.querySelectorAll('main script, main b, main i').length")
        .await?;
    ensure!(injected == 0, "markup from data became elements");
    // An approver sees the amount as a person reads it, and the bank and
    // the account's last four characters, never the whole number.
    let tail = &large_account[large_account.len() - 4..];
    ensure!(
        main.contains("THB 5,000.00") && main.contains(&format!("SCB •••• {tail}")),
        "{main}"
    );
    ensure!(
        !main.contains(&large_account),
        "the whole account is shown: {main}"
    );
    ensure!(
        main.contains("3 withdrawals await approval, oldest first"),
        "{main}"
    );
    // The queue filters: an amount at least, a currency, a merchant's code.
    b.goto(&format!(
        "{base}/console/withdrawals?min_amount=1000&currency=THB&merchant={}",
        m.code
    ))
    .await?;
    let filtered = b.text("main").await?;
    ensure!(
        filtered.contains("1 withdrawal that matches awaits approval")
            && filtered.contains(&large)
            && !filtered.contains(&small)
            && !filtered.contains(&third),
        "{filtered}"
    );
    checked(&b, "withdrawals-filtered.png").await?;
    b.goto(&format!(
        "{base}/console/withdrawals?merchant=nobody-has-this"
    ))
    .await?;
    ensure!(b
        .text("main")
        .await?
        .contains("No merchant has the code nobody-has-this"));
    b.goto(&format!("{base}/console/withdrawals?min_amount=1e3"))
        .await?;
    ensure!(
        b.text("h1").await? == "Bad Request",
        "{}",
        b.text("main").await?
    );
    b.goto(&format!("{base}/console/withdrawals")).await?;
    checked(&b, "withdrawals.png").await?;
    b.resize(PHONE.0, PHONE.1).await?;
    checked(&b, "withdrawals-phone.png").await?;
    // At a phone's width the table reflows: every decision is on the
    // screen, not past its right edge.
    let off_screen = b
        .script(
            "return [...document.querySelectorAll('main button[value=approve], main button[value=reject]')]\
             .filter(e => e.getBoundingClientRect().right > window.innerWidth).length",
        )
        .await?;
    ensure!(
        off_screen == 0,
        "{off_screen} decisions off the screen at phone width"
    );
    b.resize(DESKTOP.0, DESKTOP.1).await?;

    // Below the threshold one approver suffices.
    review(
        &b,
        &small,
        "<i>looks fine</i>",
        "approve",
        Some((&alice, &clock)),
    )
    .await?;
    ensure!(status(app, &small).await? != WithdrawalStatus::Pending);
    // Above it, the first approval leaves it pending, and says so.
    // An approval without a fresh code, or with the one just used, is
    // refused and moves nothing.
    b.keys(&format!("#remarks-{large}"), "first look").await?;
    b.click(&format!(
        "form[action='/console/withdrawals/{large}/review'] button[value=approve]"
    ))
    .await?;
    b.wait_for_text("main", "approving asks for a fresh code", WAIT)
        .await?;
    let used = web::code_of(&alice, clock.unix())?;
    b.goto(&format!("{base}/console/withdrawals")).await?;
    b.keys(&format!("#code-{large}"), &used).await?;
    b.click(&format!(
        "form[action='/console/withdrawals/{large}/review'] button[value=approve]"
    ))
    .await?;
    b.wait_for_text("main", "was used already", WAIT).await?;
    ensure!(status(app, &large).await? == WithdrawalStatus::Pending);
    ensure!(withdrawals::find_any(app, &large)
        .await?
        .approved_at
        .is_none());
    b.goto(&format!("{base}/console/withdrawals")).await?;
    review(&b, &large, "first look", "approve", Some((&alice, &clock))).await?;
    ensure!(status(app, &large).await? == WithdrawalStatus::Pending);
    let main = b.text("main").await?;
    ensure!(main.contains("1 of 2: alice"), "{main}");
    ensure!(
        main.contains(&format!(
            "Your approval of {large} is recorded (1 of 2); a second approver is needed."
        )),
        "{main}"
    );
    sign_out(&b).await?;
    sign_in(&b, &base, "console", &bob, &clock).await?;
    // Bob finds the merchant by a part of its name, and its queue from its
    // page: no id typed anywhere.
    b.goto(&format!("{base}/console/merchants")).await?;
    b.keys("#merchant-q", "Sons").await?;
    b.click("form[action='/console/merchants'] button").await?;
    b.wait_for_url("q=Sons", WAIT).await?;
    b.click("main table a").await?;
    b.wait_for_url("merchant_id=", WAIT).await?;
    b.click("#merchant-withdrawals").await?;
    b.wait_for_url("/console/withdrawals?merchant=", WAIT)
        .await?;
    let queue = b.text("main").await?;
    ensure!(
        queue.contains(&large) && queue.contains(&format!("SCB •••• {tail}")),
        "{queue}"
    );
    review(&b, &large, "second look", "approve", Some((&bob, &clock))).await?;
    ensure!(
        status(app, &large).await? != WithdrawalStatus::Pending,
        "two approvers complete it"
    );

    // The trail shows the remarks as text, and each page passes the checks.
    b.goto(&format!("{base}/console/audit")).await?;
    ensure!(b.text("main").await?.contains("<i>looks fine</i>"));
    ensure!(
        b.script("return document.querySelectorAll('main i').length")
            .await?
            == 0
    );
    // Its targets are found, not quoted: the approved order is a link to
    // its page (a merchant or an operator is named, with a link).
    ensure!(
        b.script(
            "return document.querySelectorAll('main td a[href^=\"/console/orders?q=\"]').length"
        )
        .await?
        .as_i64()
        .unwrap_or(0)
            > 0,
        "the trail links the orders it acted on"
    );
    checked(&b, "audit.png").await?;
    for (path, shot) in [
        ("/console/bank", "bank.png"),
        ("/console/payouts", "payouts.png"),
        ("/console/changes", "changes.png"),
        ("/console/merchants", "merchants.png"),
        ("/console/callbacks?status=WAITING_RETRY", "callbacks.png"),
        (&*format!("/console/orders?q={large}"), "order.png"),
        ("/console/ledger", "ledger.png"),
        (
            &*format!("/console/merchants?merchant_id={}", m.id),
            "merchant.png",
        ),
        ("/console/operators", "operators-refused.png"),
    ] {
        b.goto(&format!("{base}{path}")).await?;
        if shot == "order.png" {
            // A record in words, its approvals one under another: never
            // JSON in a cell.
            let text = b.text("main").await?;
            ensure!(
                text.contains("Merchant order no") && !text.contains("{\"") && !text.contains("[{"),
                "{text}"
            );
            // Its timeline: the state changes, the money frozen, and both
            // approvals by name, oldest first.
            let history = b.text("#timeline").await?;
            let (first, second) = (
                history.find("Approved by alice"),
                history.find("Approved by bob"),
            );
            ensure!(
                history.contains("Balance THB") && first.is_some() && first < second,
                "{history}"
            );
        }
        checked(&b, shot).await?;
    }
    sign_out(&b).await?;

    // An admin's pages: operators and invitations, one callback's attempts.
    sign_in(&b, &base, "console", &ada, &clock).await?;
    for (path, shot) in [
        (
            format!("/console/operators?merchant_id={}", m.id),
            "operators.png",
        ),
        (format!("/console/callbacks/{delivery}"), "callback.png"),
    ] {
        b.goto(&format!("{base}{path}")).await?;
        checked(&b, shot).await?;
    }
    b.click("form[action$='/retry'] button").await?;
    b.wait_for_text("main", "Queued for another attempt", WAIT)
        .await?;
    sign_out(&b).await?;

    // A viewer sees no decision, and a post made anyway is refused.
    sign_in(&b, &base, "console", &vera, &clock).await?;
    ensure!(
        b.script("return document.querySelectorAll('button[value=approve]').length")
            .await?
            == 0
    );
    let forged = b
        .script_async(&format!(
            "const done = arguments[arguments.length - 1];
             const csrf = document.querySelector('input[name=csrf]').value;
             fetch('/console/withdrawals/{third}/review', {{ method: 'POST',
               body: new URLSearchParams({{ csrf, decision: 'approve' }}) }}).then(r => done(r.status));"
        ))
        .await?;
    ensure!(forged == 403, "a viewer's post answered {forged}");
    ensure!(status(app, &third).await? == WithdrawalStatus::Pending);

    // Another site's form, even one that knows the session's form token.
    let cookie = format!("console_session={}", b.cookie("console_session").await?);
    let csrf = b
        .script("return document.querySelector('input[name=csrf]').value")
        .await?;
    let csrf = csrf.as_str().context("a form token")?.to_string();
    let other = reqwest::Client::new();
    for (header, value) in [
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ] {
        let r = other
            .post(format!("{base}/console/withdrawals/{third}/review"))
            .header("cookie", &cookie)
            .header(header, value)
            .header("content-type", web::FORM)
            .body(web::form_body(&[
                ("csrf", csrf.as_str()),
                ("decision", "reject"),
            ]))
            .send()
            .await?;
        ensure!(
            r.status() == 403,
            "{header}: {value} answered {}",
            r.status()
        );
    }
    let page = format!(
        "data:text/html,<form method=post action='{base}/console/withdrawals/{third}/review'>\
         <input name=csrf value='{csrf}'><input name=decision value=reject></form>\
         <script>document.forms[0].submit()</script>"
    );
    b.goto(&page).await?;
    b.wait_for_text("h1", "Refused", WAIT).await?;
    ensure!(
        status(app, &third).await? == WithdrawalStatus::Pending,
        "nothing changed"
    );
    // Signing in again asks for a code only: the authenticator is set up.
    b.goto(&format!("{base}/console/withdrawals")).await?;
    sign_out(&b).await?;
    sign_in(&b, &base, "console", &alice, &clock).await?;
    b.quit().await?;
    Ok(())
}

#[tokio::test]
async fn an_owner_accepts_an_invitation_and_rotates_a_key_with_a_grace() -> Result<()> {
    let clock = Arc::new(ManualClock::at_system_time());
    let svc = service(clock.clone()).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let mine = svc.new_merchant("Owner's <em>Shop</em>").await?;
    let other = svc.new_merchant("Someone else").await?;
    fund(
        app,
        &mine.merchant,
        "MINE-1",
        rust_decimal::Decimal::from(500),
        "THB",
    )
    .await?;
    fund(
        app,
        &other.merchant,
        "OTHER-1",
        rust_decimal::Decimal::from(500),
        "THB",
    )
    .await?;
    let others_order = payments_service::app::deposits::find_by_merchant_order_no(
        app,
        &other.merchant.id,
        "OTHER-1",
    )
    .await?
    .order_no;
    let invitation = owners::invite(
        app,
        &payments_testing::SET_UP,
        &mine.merchant.id,
        "owner@shop.example.test".into(),
    )
    .await?;
    let listing = payments_service::app::listings::Listing {
        order_no: Some(invitation.id.clone()),
        ..Default::default()
    };
    let delivery = payments_service::app::listings::callback_deliveries(app, listing)
        .await?
        .items;
    let body: serde_json::Value = serde_json::from_str(&callbacks::open_body(app, &delivery[0])?)?;
    let link = body["link"].as_str().context("the invitation's link")?;
    ensure!(link.starts_with(&base), "{link}");

    let b = Browser::start(PHONE.0, PHONE.1, PHONE.2, &shots("portal")).await?;
    b.goto(&format!("{base}/portal/login")).await?;
    checked(&b, "sign-in.png").await?;
    b.goto(link).await?;
    checked(&b, "accept-invitation.png").await?;
    b.keys("#password", PASSWORD).await?;
    b.keys("#confirm", PASSWORD).await?;
    b.click("main button[type=submit]").await?;
    b.wait_for_text("main", "Your password is set", WAIT)
        .await?;
    sign_in(&b, &base, "portal", "owner@shop.example.test", &clock).await?;
    ensure!(b.url().await?.ends_with("/portal/orders"));
    checked(&b, "orders.png").await?;
    b.click("main table a").await?;
    b.wait_for_text("main", "MINE-1", WAIT).await?;
    // The platform's own figures are the operators', not the owner's.
    let text = b.text("main").await?.to_lowercase();
    ensure!(
        !text.contains("profit") && !text.contains("channel cost"),
        "{text}"
    );
    checked(&b, "order.png").await?;

    // Another merchant's order is not found, whoever asks for it.
    b.goto(&format!("{base}/portal/orders/{others_order}"))
        .await?;
    ensure!(b.text("h1").await? == "Not Found");
    let cookie = format!("portal_session={}", b.cookie("portal_session").await?);
    let r = reqwest::Client::new()
        .get(format!("{base}/portal/orders/{others_order}"))
        .header("cookie", &cookie)
        .send()
        .await?;
    ensure!(
        r.status() == 404,
        "another merchant's order answered {}",
        r.status()
    );

    let today = chrono::DateTime::from_timestamp(clock.unix(), 0)
        .context("today")?
        .format("%Y-%m-%d")
        .to_string();
    let statements = format!("/portal/statements?date={today}&currency=THB");
    for (path, shot) in [
        ("/portal/balances?currency=THB", "balances.png"),
        (&*statements, "statements.png"),
        ("/portal/settings", "settings.png"),
        ("/portal/keys", "keys.png"),
    ] {
        b.goto(&format!("{base}{path}")).await?;
        checked(&b, shot).await?;
    }
    b.click("#grace option[value='3600']").await?;
    b.click("form[action='/portal/keys/rotate'] button").await?;
    b.wait_for_text("h1", "Your new API key", WAIT).await?;
    let new_key = b.text("#new-key").await?;
    checked(&b, "").await?;
    // Post, redirect, get: reloading the page shows nothing and issues
    // nothing (issue 57).
    let shown_at = b.url().await?;
    ensure!(
        shown_at.contains("/portal/keys/new?token=") && !shown_at.contains(&new_key),
        "{shown_at}"
    );
    b.goto(&shown_at).await?;
    ensure!(b.text("main").await?.contains("shown once already"));
    ensure!(
        !b.text("main").await?.contains(&new_key),
        "the key shown twice"
    );
    checked(&b, "").await?;
    b.quit().await?;
    let issued = payments_service::app::api_keys::list(app, &mine.merchant.id).await?;
    ensure!(
        issued.len() == 2,
        "{} keys, not the first and one new",
        issued.len()
    );

    let balances = |key: &str| {
        // Signed at the service's time: its clock is the test's.
        let now = clock.clone();
        let credentials =
            merchant_client::Credentials::new(key.to_string()).with_clock(move || now.unix());
        let client = merchant_client::merchant::Client::new(&base, credentials);
        async move { client.get_balances().await.map(|_| ()) }
    };
    ensure!(
        balances(&new_key).await.is_ok(),
        "the new key works at once"
    );
    ensure!(
        balances(&mine.api_key).await.is_ok(),
        "the old key works in its grace"
    );
    clock.advance(3599);
    ensure!(
        balances(&mine.api_key).await.is_ok(),
        "…until its last second"
    );
    clock.advance(2);
    let refused = balances(&mine.api_key)
        .await
        .err()
        .context("the old key is refused after the grace")?;
    ensure!(
        refused.status().map(|s| s.as_u16()) == Some(401),
        "{refused}"
    );
    ensure!(balances(&new_key).await.is_ok());
    // The session knows the clock too: an hour idle has ended it.
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?
        .get(format!("{base}/portal/orders"))
        .header("cookie", &cookie)
        .send()
        .await?;
    ensure!(r.status() == 303, "an idle session answered {}", r.status());
    Ok(())
}

/// Issue 53's first run: a sandbox with nothing configured (no platform
/// address) invites an owner from the console, posts the invitation to its
/// own inbox, lists it under Platform events with its link, and the owner
/// accepts through that link and signs in.
#[tokio::test]
async fn a_first_run_invites_an_owner_through_the_consoles_platform_events() -> Result<()> {
    let clock = ManualClock::at_system_time();
    let svc = payments_testing::TestService::start_with(
        payments_service::domain::routing::Profile::Sandbox,
        Arc::new(clock.clone()),
        |c| c.callback_worker = true,
    )
    .await?;
    let app = svc.service.app();
    let base = svc.base_url();
    ensure!(
        payments_service::app::platform_inbox::is_own(app),
        "{:?}",
        app.config.platform_events_url
    );
    let ada = operator(app, "ada", Role::Admin).await?;
    let m = svc.new_merchant("First <b>Run</b> Shop").await?.merchant;

    let b = Browser::start(DESKTOP.0, DESKTOP.1, DESKTOP.2, &shots("console")).await?;
    sign_in(&b, &base, "console", &ada, &clock).await?;
    b.goto(&format!("{base}/console/merchants?q=First")).await?;
    b.click("main table a").await?;
    b.wait_for_url("merchant_id=", WAIT).await?;
    b.keys("#invite-email", "first.owner@shop.example.test")
        .await?;
    b.click("form[action='/console/invitations'] button")
        .await?;
    b.wait_for_text(
        "main",
        "Invitation sent to first.owner@shop.example.test",
        WAIT,
    )
    .await?;
    ensure!(b.url().await?.contains("/console/platform-events"));
    ensure!(b.text("main").await?.contains("First <b>Run</b> Shop"));
    // Posted to the sandbox itself and accepted there, signature checked.
    let deadline = tokio::time::Instant::now() + WAIT;
    while !b.text("main table").await?.contains("SUCCESS") {
        ensure!(
            tokio::time::Instant::now() < deadline,
            "the invitation was not delivered to the sandbox's own inbox: {}",
            b.text("main").await?
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        b.goto(&format!("{base}/console/platform-events")).await?;
    }
    checked(&b, "platform-events.png").await?;
    b.click("main table a").await?;
    b.wait_for_text("main", "first.owner@shop.example.test", WAIT)
        .await?;
    ensure!(b.text("main").await?.contains("First <b>Run</b> Shop"));
    checked(&b, "").await?;
    b.keys("#password", PASSWORD).await?;
    b.keys("#confirm", PASSWORD).await?;
    b.click("main button[type=submit]").await?;
    b.wait_for_text("main", "Your password is set", WAIT)
        .await?;
    sign_in(&b, &base, "portal", "first.owner@shop.example.test", &clock).await?;
    ensure!(b.url().await?.ends_with("/portal/orders"));

    // The owner finds an order by their own number and sends its failed
    // callback again (a receiver that answers 404 fails it at once).
    let new = payments_testing::new_deposit(
        "SHOP-ORDER-7",
        rust_decimal::Decimal::from(250),
        "THB",
        Some(&format!("{base}/no-receiver-here")),
    );
    let order = payments_service::app::deposits::create(app, &m, new).await?;
    payments_service::app::deposits::complete(
        app,
        &payments_testing::SET_UP,
        &order.order_no,
        None,
        None,
    )
    .await?;
    let failed = || async {
        let listing = payments_service::app::listings::Listing {
            order_no: Some(order.order_no.clone()),
            status: Some("FAILED".into()),
            ..Default::default()
        };
        payments_service::app::listings::callback_deliveries(app, listing)
            .await
            .map(|p| p.items.len())
            .unwrap_or(0)
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    while failed().await == 0 {
        ensure!(
            tokio::time::Instant::now() < deadline,
            "the callback never failed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    b.keys("#number", "SHOP-ORDER-7").await?;
    b.click("form[action='/portal/orders'] button").await?;
    b.wait_for_text("h1", &order.order_no, WAIT).await?;
    // The order's timeline: completed, credited, and its callback with the
    // failed attempt, in words an owner reads.
    let history = b.text("#timeline").await?;
    ensure!(
        history.contains("Deposit completed")
            && history.contains("Balance THB")
            && history.contains("Callback deposit.completed queued")
            && history.contains("Attempt 1"),
        "{history}"
    );
    checked(&b, "").await?;
    b.click("form[action$='/retry'] button").await?;
    b.wait_for_text("main", "callback is being sent again", WAIT)
        .await?;
    let trail = payments_service::app::audit::list(
        app,
        Default::default(),
        payments_service::app::audit::AuditFilter {
            action: Some("retry_callback".into()),
            ..Default::default()
        },
    )
    .await?;
    ensure!(
        trail
            .items
            .iter()
            .any(|a| a.operator_name == "first.owner@shop.example.test"),
        "the owner's retry is not in the audit trail"
    );
    // An operator queues the merchant's failed callbacks again in one
    // batch from the console, recorded once with its count.
    let deadline = tokio::time::Instant::now() + WAIT;
    while failed().await == 0 {
        ensure!(
            tokio::time::Instant::now() < deadline,
            "the callback never failed again"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    b.goto(&format!("{base}/console/callbacks?merchant={}", m.code))
        .await?;
    ensure!(b
        .text("main table")
        .await?
        .contains("First <b>Run</b> Shop"));
    checked(&b, "callbacks-merchant.png").await?;
    b.click("form[action='/console/callback-retries'] button")
        .await?;
    b.wait_for_text("main", "Queued again: 1 failed delivery.", WAIT)
        .await?;
    let batches = payments_service::app::audit::list(
        app,
        Default::default(),
        payments_service::app::audit::AuditFilter {
            action: Some("retry_callbacks".into()),
            target_id: Some(m.id.clone()),
            ..Default::default()
        },
    )
    .await?;
    ensure!(
        batches.items.len() == 1
            && batches.items[0].remarks.as_deref() == Some("queued again: 1 failed delivery"),
        "{:?}",
        batches.items
    );
    b.goto(&format!("{base}/portal/orders?number=NOT-MINE-1"))
        .await?;
    ensure!(b
        .text("main")
        .await?
        .contains("No order of yours has the number NOT-MINE-1"));

    // A link is accepted once: opened again, it says so.
    let events = payments_service::app::platform_inbox::recent(app, 1).await?;
    let link = events
        .first()
        .and_then(|e| e.body["link"].as_str())
        .context("the invitation's link")?;
    ensure!(link.starts_with(&base), "{link}");
    let again = reqwest::get(link).await?;
    ensure!(again.status() == 410, "{}", again.status());
    ensure!(m.name.contains("Run"));
    Ok(())
}
