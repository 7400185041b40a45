//! Markup put into every field a merchant supplies is text on every page
//! that shows it (issue 53, acceptance 1): the console's, the portal's, the
//! cashier's and the channel simulator's. Read as a browser receives the
//! page: the payload's own tags never appear, and its escaped form does on
//! each page that shows the field, so the check cannot pass by showing
//! nothing.

#[allow(dead_code)] // each test binary uses its own part of this module
mod web;

use anyhow::{ensure, Context, Result};
use merchant_client::merchant::types as m;
use merchant_client::{AmountNumber, Credentials, MerchantOrderNo};
use payments_service::app::{callbacks, owners};
use payments_service::clock::ManualClock;
use payments_service::domain::status::Role;
use payments_testing::fund;
use std::sync::Arc;
use web::{operator, service, Http, PASSWORD};

/// Tags that would run or draw if a page let them through.
const LONG: &str = "<script>window.__x=1</script><img src=x onerror=alert(1)>\"'";
/// For fields with room for less.
const SHORT: &str = "<b id=x>\"'";

/// The tags' own openings: none may reach a page as markup.
const TAGS: [&str; 3] = ["<script>window.__x", "<img src=x", "<b id=x>"];

/// What each payload's opening looks like once escaped.
fn shown(payload: &str) -> String {
    payload
        .split('"')
        .next()
        .unwrap_or_default()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn order_no(text: &str) -> MerchantOrderNo {
    MerchantOrderNo::parse(text).expect("a valid merchant order number")
}

/// Fetches a page and checks no payload is markup on it; its text.
async fn inert(page: &str, response: reqwest::Response) -> Result<String> {
    let status = response.status();
    let text = response.text().await?;
    ensure!(status.is_success(), "{page} answered {status}: {text}");
    for tag in TAGS {
        ensure!(
            !text.contains(tag),
            "{page} carries {tag:?} as markup:\n{text}"
        );
    }
    Ok(text)
}

/// Each page of a session, inert, and showing what it must (escaped).
async fn visit(session: &Http, pages: &[(String, Vec<&str>)]) -> Result<()> {
    for (path, must) in pages {
        let text = inert(path, session.get(path).await?).await?;
        for m in must {
            ensure!(text.contains(*m), "{path} does not show {m:?}:\n{text}");
        }
    }
    Ok(())
}

#[tokio::test]
async fn markup_in_every_merchant_supplied_field_is_text_on_every_page() -> Result<()> {
    let clock = ManualClock::at_system_time();
    let svc = service(Arc::new(clock.clone())).await?;
    let app = svc.service.app();
    let base = svc.base_url();
    let merchant = svc.new_merchant(&format!("Shop {LONG}")).await?;
    let code = merchant.merchant.code.clone();
    fund(app, &merchant.merchant, "FUND-1", 5000.into(), "THB").await?;
    let client =
        merchant_client::merchant::Client::new(&base, Credentials::new(merchant.api_key.clone()));

    // A deposit with every free-text field the merchant may fill.
    let deposit = client
        .create_deposit(&m::CreateDepositRequest {
            merchant_order_no: order_no("INERT-D1"),
            amount: AmountNumber("100".parse()?),
            currency_code: "THB".into(),
            callback_url: Some(format!("{base}/no-receiver?{SHORT}")),
            return_url: Some(format!("https://shop.example/back?{SHORT}")),
            extra_data: Some(LONG.into()),
            user_id: Some(LONG.into()),
            account_holder: Some(LONG.into()),
            mobile: Some(SHORT.into()),
            email: None,
            bank_code: Some(SHORT.into()),
            account_no: Some(SHORT.into()),
        })
        .await?
        .into_inner();
    payments_service::app::deposits::complete(
        app,
        &payments_testing::SET_UP,
        &deposit.order_no,
        None,
        None,
    )
    .await?;
    // A withdrawal awaiting review, its beneficiary's words the merchant's.
    let withdrawal = client
        .create_withdrawal(&m::CreateWithdrawalRequest {
            merchant_order_no: order_no("INERT-W1"),
            amount: AmountNumber("100".parse()?),
            currency_code: "THB".into(),
            beneficiary_name: LONG.into(),
            beneficiary_account: "1234500099".into(),
            beneficiary_bank_code: "SCB".into(),
            beneficiary_bank_branch: Some(LONG.into()),
            callback_url: None,
            extra_data: Some(LONG.into()),
        })
        .await?
        .into_inner();
    // A cashier session, open, and a channel deposit's simulator page.
    let session = client
        .create_cashier_deposit(&m::CreateCashierDepositRequest {
            order_type: m::CreateCashierDepositRequestOrderType::Cashier,
            merchant_order_no: order_no("INERT-C1"),
            amount: None,
            currency_code: "THB".into(),
            callback_url: None,
            return_url: Some(format!("https://shop.example/back?{SHORT}")),
            extra_data: Some(LONG.into()),
            user_id: Some(LONG.into()),
            payer_bank_cards: Vec::new(),
        })
        .await?
        .into_inner();
    let channel = client
        .create_deposit(&m::CreateDepositRequest {
            merchant_order_no: order_no("INERT-B1"),
            amount: AmountNumber("100".parse()?),
            currency_code: "BDT".into(),
            callback_url: None,
            return_url: Some(format!("https://shop.example/back?{SHORT}")),
            extra_data: Some(LONG.into()),
            user_id: None,
            account_holder: Some(LONG.into()),
            mobile: None,
            email: None,
            bank_code: None,
            account_no: None,
        })
        .await?
        .into_inner();
    let delivery = web::first_delivery(app, &deposit.order_no).await?;

    let admin = operator(app, "admin", Role::Admin).await?;
    let console = Http::sign_in(&base, "console", &admin, PASSWORD, &clock).await?;
    let (long, short) = (shown(LONG), shown(SHORT));
    // Each page, and what of the payloads it must show escaped.
    let pages: Vec<(String, Vec<&str>)> = vec![
        ("/console/withdrawals".into(), vec![&long]),
        (format!("/console/withdrawals?merchant={code}"), vec![&long]),
        (
            format!("/console/orders?q={}", deposit.order_no),
            vec![&long, &short],
        ),
        (
            format!("/console/orders?q={}", withdrawal.order_no),
            vec![&long],
        ),
        (
            format!("/console/orders?q={}", channel.order_no),
            vec![&long],
        ),
        (
            "/console/callbacks?status=WAITING_RETRY".into(),
            vec![&long],
        ),
        (
            format!("/console/callbacks?status=WAITING_RETRY&merchant={code}"),
            vec![&long],
        ),
        (format!("/console/callbacks/{delivery}"), vec![&short]),
        (format!("/console/merchants?q={code}"), vec![&long]),
        (
            format!("/console/merchants?merchant_id={}", merchant.merchant.id),
            vec![&long],
        ),
        ("/console/audit".into(), vec![]),
        ("/console/payouts".into(), vec![]),
        ("/console/bank".into(), vec![]),
        ("/console/changes".into(), vec![]),
        ("/console/ledger".into(), vec![]),
    ];
    visit(&console, &pages).await?;

    // The owner's portal.
    let invitation = owners::invite(
        app,
        &payments_testing::SET_UP,
        &merchant.merchant.id,
        "owner@inert.example.test".into(),
    )
    .await?;
    let sent = callbacks::find(app, &web::first_delivery(app, &invitation.id).await?).await?;
    let body: serde_json::Value = serde_json::from_str(&callbacks::open_body(app, &sent)?)?;
    let link = body["link"].as_str().context("the invitation's link")?;
    let token = link.rsplit("token=").next().context("a token")?;
    owners::accept(app, token, PASSWORD.into(), "inert-test").await?;
    let owner = Http::sign_in(
        &base,
        "portal",
        "owner@inert.example.test",
        PASSWORD,
        &clock,
    )
    .await?;
    let portal: Vec<(String, Vec<&str>)> = vec![
        ("/portal/orders".into(), vec![]),
        (
            format!("/portal/orders/{}", deposit.order_no),
            vec![&long, &short],
        ),
        (
            format!("/portal/orders/{}", withdrawal.order_no),
            vec![&long],
        ),
        ("/portal/balances".into(), vec![]),
        ("/portal/statements".into(), vec![]),
        ("/portal/keys".into(), vec![]),
        ("/portal/settings".into(), vec![]),
    ];
    visit(&owner, &portal).await?;

    // The payer's pages: the cashier's (its merchant's name) and the
    // channel's, paid, with the way back escaped in its attribute.
    let http = reqwest::Client::new();
    let text = inert(
        "the cashier page",
        http.get(&session.cashier_url).send().await?,
    )
    .await?;
    ensure!(
        text.contains(&long),
        "the cashier page does not name the merchant"
    );
    let url = channel
        .payment_url
        .context("a channel deposit's payment_url")?;
    let paid = http
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("action=pay&amount=100")
        .send()
        .await?;
    let text = inert("the simulator's page", paid).await?;
    ensure!(
        text.contains(&short),
        "the simulator's page has no escaped way back: {text}"
    );
    Ok(())
}

/// No page is written as a string: every one is a `maud` template, which
/// escapes what it is given, so no page depends on an escape someone
/// remembered. A string literal that opens a tag in the pages' sources
/// (their tests apart) is a page written by hand.
#[test]
fn no_page_is_written_as_a_string() {
    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["service/http/src", "channel-sim/src"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "found the sources");
    let mut by_hand = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (i, line) in code.lines().enumerate() {
            let opens_a_tag = line.match_indices('<').any(|(at, _)| {
                let before = line[..at].chars().last();
                let after = line[at + 1..].chars().next();
                matches!(before, Some('"') | Some('#'))
                    && after.is_some_and(|c| c.is_ascii_alphabetic() || c == '!' || c == '/')
            });
            if opens_a_tag {
                by_hand.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        by_hand.is_empty(),
        "HTML written as a string (make it a maud template):\n{}",
        by_hand.join("\n")
    );
}
