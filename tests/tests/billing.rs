//! Billing statements against the ledger: a month of generated traffic is
//! billed to the last digit (each statement's fees are the `system:fees`
//! postings of its merchant and period, read from the journal with SQL of
//! this test's own); the PDF, rendered by poppler, says what the
//! statement says; several issuers, and an issuer killed mid-run, leave
//! one statement and one event per merchant and period.

use anyhow::{bail, Context, Result};
use chrono::{TimeZone, Utc};
use diesel::Connection;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl as _};
use payments_service::app::billing::{self, Statement, SETTLE_SECONDS};
use payments_service::app::listings::Listing;
use payments_service::app::merchants::{self, Merchant};
use payments_service::app::{deposits, withdrawals, App};
use payments_service::clock::ManualClock;
use payments_service::domain::billing::{period_end, period_start};
use payments_service::domain::fees::Direction;
use payments_service::domain::status::BillingPeriod;
use payments_service::{server, Profile};
use payments_testing::{approved_withdrawal, new_deposit, TestService};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::str::FromStr;
use std::sync::Arc;

fn at(y: i32, m: u32, d: u32, h: u32) -> i64 {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap().timestamp()
}

fn dec(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

#[derive(diesel::QueryableByName)]
struct Total {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    total: i64,
}

/// The rows `sql` reads from the service's database, on either backend.
async fn load<T>(url: &str, sql: &str) -> Result<Vec<T>>
where
    T: diesel::QueryableByName<diesel::sqlite::Sqlite>
        + diesel::QueryableByName<diesel::pg::Pg>
        + Send
        + 'static,
{
    Ok(match url.strip_prefix("sqlite://") {
        Some(path) => {
            let mut c = diesel::SqliteConnection::establish(path)?;
            diesel::RunQueryDsl::load(diesel::sql_query(sql), &mut c)?
        }
        None => {
            let mut c = AsyncPgConnection::establish(url).await?;
            diesel::sql_query(sql).load(&mut c).await?
        }
    })
}

/// The fees the journal booked for `merchant` in `[from, to)`, per
/// currency: the `system:fees` postings of its entries.
async fn journal_fees(
    url: &str,
    merchant: &str,
    from: i64,
    to: i64,
) -> Result<BTreeMap<String, i64>> {
    let mut out = BTreeMap::new();
    for currency in ["THB", "USD"] {
        let sql = format!(
            "SELECT CAST(COALESCE(SUM(p.amount), 0) AS BIGINT) AS total FROM postings p \
             JOIN journal_entries j ON j.id = p.entry_id \
             WHERE p.account = 'system:fees' AND p.currency = '{currency}' \
             AND j.merchant_id = '{merchant}' AND j.created_at >= {from} AND j.created_at < {to}"
        );
        let rows: Vec<Total> = load(url, &sql).await?;
        let total = rows.into_iter().next().map_or(0, |r| r.total);
        if total != 0 {
            out.insert(currency.to_string(), total);
        }
    }
    Ok(out)
}

/// One day of a merchant's traffic at `day` (midnight, UTC): two
/// deposits, and on some days a paid and a failed withdrawal.
async fn one_day(app: &App, clock: &ManualClock, m: &Merchant, day: i64, n: usize) -> Result<()> {
    for (i, hour) in [1_i64, 13].into_iter().enumerate() {
        clock.set(day + hour * 3600 + i64::try_from(n % 50)?);
        let amount = Decimal::new(
            10_000 + i64::try_from((n * 7919 + i * 104_729) % 90_000)?,
            2,
        );
        let no = format!("d-{n}-{i}");
        let order = deposits::create(app, m, new_deposit(&no, amount, "THB", None)).await?;
        deposits::complete(app, &payments_testing::SET_UP, &order.order_no, None, None).await?;
    }
    clock.set(day + 20 * 3600);
    if n.is_multiple_of(3) {
        let w = approved_withdrawal(app, m, &format!("w-{n}"), "1234567890").await?;
        withdrawals::settle(app, &w.order_no, None).await?;
    }
    if n.is_multiple_of(5) {
        let w = approved_withdrawal(app, m, &format!("f-{n}"), "1234567890").await?;
        withdrawals::fail(app, &w.order_no, Some("account closed".into())).await?;
    }
    Ok(())
}

/// Merchants with odd fees, each with a month of traffic (October's last
/// day to November's last second), on `clock`.
async fn a_month(svc: &TestService, clock: &ManualClock) -> Result<Vec<Merchant>> {
    let app = svc.service.app();
    let mut made = Vec::new();
    for (name, period) in [
        ("Monthly", None),
        ("Weekly", Some("week")),
        ("Daily", Some("day")),
    ] {
        clock.set(at(2026, 10, 31, 9));
        let m = svc.new_merchant(name).await?.merchant;
        payments_service::app::fees::set(
            app,
            &payments_testing::SET_UP,
            &m.id,
            "THB",
            Direction::Deposit,
            payments_service::domain::fees::RateConfig {
                percent: dec("1.37"),
                fixed: dec("0.29"),
                minimum: dec("0"),
            },
        )
        .await?;
        payments_service::app::fees::set(
            app,
            &payments_testing::SET_UP,
            &m.id,
            "THB",
            Direction::Withdrawal,
            payments_service::domain::fees::RateConfig {
                percent: dec("0.5"),
                fixed: dec("3.33"),
                minimum: dec("0"),
            },
        )
        .await?;
        if let Some(p) = period {
            billing::set_period(app, &payments_testing::SET_UP, &m.id, p).await?;
        }
        made.push(merchants::find(app, &m.id).await?);
    }
    for (n, day) in (0..31)
        .map(|d| at(2026, 10, 31, 0) + d * 86_400)
        .enumerate()
    {
        for m in &made {
            one_day(app, clock, m, day, n).await?;
        }
    }
    // A line on each side of November's end.
    for (i, when) in [at(2026, 12, 1, 0) - 1, at(2026, 12, 1, 0)]
        .into_iter()
        .enumerate()
    {
        clock.set(when);
        let no = format!("edge-{i}");
        let order =
            deposits::create(app, &made[0], new_deposit(&no, dec("777.77"), "THB", None)).await?;
        deposits::complete(app, &payments_testing::SET_UP, &order.order_no, None, None).await?;
    }
    Ok(made)
}

async fn statements_of(app: &App, merchant: &str) -> Result<Vec<Statement>> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = billing::list(
            app,
            Listing {
                merchant_id: Some(merchant.to_string()),
                cursor,
                limit: Some(200),
                ..Listing::default()
            },
        )
        .await?;
        all.extend(page.items);
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok(all),
        }
    }
}

#[tokio::test]
async fn a_month_of_traffic_is_billed_to_the_last_digit() -> Result<()> {
    let clock = ManualClock::at(at(2026, 10, 31, 9));
    let svc = TestService::start(Profile::Sandbox, Arc::new(clock.clone())).await?;
    let app = svc.service.app().clone();
    let made = a_month(&svc, &clock)
        .await
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;

    // Not yet: December's first ten minutes may still commit November.
    clock.set(at(2026, 12, 1, 0) + SETTLE_SECONDS - 1);
    let early = billing::issue_due(&app, 1000)
        .await
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    clock.set(at(2026, 12, 1, 0) + SETTLE_SECONDS);
    // A second instance issues beside the first: one statement each.
    let second = server::build_app(app.config.clone(), Arc::new(clock.clone())).await?;
    let (a, b) = tokio::join!(
        billing::issue_due(&app, 1000),
        billing::issue_due(&second, 1000)
    );
    let dbg = |e: payments_service::domain::error::ApiError| anyhow::anyhow!("{e:?}");
    let issued = early + a.map_err(dbg)? + b.map_err(dbg)?;
    assert_eq!(
        billing::issue_due(&app, 1000).await?,
        0,
        "nothing is issued twice"
    );

    let mut checked = 0;
    for m in &made {
        let statements = statements_of(&app, &m.id).await?;
        let periods: BTreeSet<(i64, i64)> = statements
            .iter()
            .map(|s| (s.row.period_start, s.row.period_end))
            .collect();
        assert_eq!(periods.len(), statements.len(), "one statement per period");
        // Contiguous from the period the merchant was created in to the
        // last one that ended.
        let kind = statements[0].row.billing_period;
        let mut start = period_start(at(2026, 10, 31, 9), kind).unwrap();
        for (s, e) in &periods {
            assert_eq!(*s, start, "{}: a gap or an overlap", m.name);
            start = *e;
        }
        assert!(
            period_end(start, kind).unwrap() + SETTLE_SECONDS > at(2026, 12, 1, 0) + SETTLE_SECONDS
        );
        for s in &statements {
            let journal = journal_fees(
                &svc.database_url,
                &m.id,
                s.row.period_start,
                s.row.period_end,
            )
            .await?;
            let billed: BTreeMap<String, i64> = s
                .totals
                .iter()
                .filter(|t| t.total_fees != 0)
                .map(|t| (t.currency.clone(), t.total_fees))
                .collect();
            assert_eq!(billed, journal, "{} {}", m.name, s.row.number);
            for t in &s.totals {
                assert_eq!(
                    t.total_fees,
                    t.deposit_fees + t.withdrawal_fees,
                    "{}",
                    s.row.number
                );
            }
            checked += 1;
        }
    }
    let monthly = statements_of(&app, &made[0].id).await?;
    let november = monthly
        .iter()
        .find(|s| s.row.period_start == at(2026, 11, 1, 0))
        .context("November's statement")?;
    let thb = &november.totals[0];
    // 30 November days of two deposits, plus the edge deposit one second
    // before December; the one at December's first second is December's.
    assert_eq!(thb.deposit_count, 61);
    assert!(thb.withdrawal_count >= 10 && thb.deposit_fees > 0 && thb.withdrawal_fees > 0);
    assert_eq!(issued, checked);
    // October (its last day), November; the weekly from Monday 26 October;
    // the daily one per day.
    assert_eq!(monthly.len(), 2);
    assert_eq!(statements_of(&app, &made[1].id).await?.len(), 5);
    assert_eq!(statements_of(&app, &made[2].id).await?.len(), 31);
    println!("billed {checked} statements of 3 merchants against the journal");
    Ok(())
}

/// Debian's poppler, installed once when missing (as the browser tests
/// install chromium).
fn poppler() -> Result<()> {
    let have = |bin: &str| Command::new(bin).arg("-v").output().is_ok();
    if have("pdftotext") && have("pdftoppm") {
        return Ok(());
    }
    eprintln!("billing tests: installing poppler-utils with apt-get (once)…");
    let installed = Command::new("apt-get")
        .args(["install", "-y", "-q", "poppler-utils"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
        || (Command::new("apt-get")
            .args(["update", "-q"])
            .status()
            .is_ok()
            && Command::new("apt-get")
                .args(["install", "-y", "-q", "poppler-utils"])
                .status()
                .map(|s| s.success())
                .unwrap_or(false));
    if !installed {
        bail!("pdftotext and pdftoppm are missing and `apt-get install poppler-utils` failed");
    }
    Ok(())
}

#[tokio::test]
async fn the_pdf_says_what_the_statement_says_and_renders() -> Result<()> {
    poppler()?;
    let clock = ManualClock::at(at(2026, 10, 31, 9));
    // The merchant's legal details, configured by its code.
    let svc = TestService::start_with(Profile::Sandbox, Arc::new(clock.clone()), |c| {
        c.billing.merchants.insert(
            "siam-games".into(),
            payments_service::config::PartyConfig {
                legal_name: "Siam Games Co., Ltd.".into(),
                address: vec!["7 Rama IV Road, Bangkok 10500".into()],
                tax_number: Some("0105561234567".into()),
            },
        );
    })
    .await?;
    let app = svc.service.app().clone();
    let m = merchants::create(
        &app,
        &payments_testing::SET_UP,
        "siam-games",
        "Siam Games (billing)",
    )
    .await?
    .merchant;
    payments_service::app::fees::set(
        &app,
        &payments_testing::SET_UP,
        &m.id,
        "THB",
        Direction::Deposit,
        payments_service::domain::fees::RateConfig {
            percent: dec("2.5"),
            fixed: dec("1.11"),
            minimum: dec("0"),
        },
    )
    .await?;
    for (i, amount) in ["1234.56", "99.99", "100000.01"].into_iter().enumerate() {
        clock.set(at(2026, 11, 3 + u32::try_from(i)?, 10));
        let order = deposits::create(
            &app,
            &m,
            new_deposit(&format!("p-{i}"), dec(amount), "THB", None),
        )
        .await?;
        deposits::complete(&app, &payments_testing::SET_UP, &order.order_no, None, None).await?;
    }
    clock.set(at(2026, 12, 2, 0));
    let s = billing::issue_for(
        &app,
        &payments_testing::SET_UP,
        &m.id,
        at(2026, 11, 1, 0),
        at(2026, 12, 1, 0),
        None,
    )
    .await?;
    // A number a person can quote: the period and the merchant's code.
    assert_eq!(s.row.number, "BS-20261101-siam-games-1");
    let pdf = billing::document(&app, Some(&m.id), &s.row.id).await?;
    assert_eq!(
        payments_service::app::billing::document::sha256_hex(&pdf),
        s.row.document_sha256,
        "served unchanged"
    );
    let dir = std::env::temp_dir().join(format!("billing-{}", s.row.id));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("statement.pdf");
    std::fs::write(&file, &pdf)?;
    let text = Command::new("pdftotext")
        .args(["-layout"])
        .arg(&file)
        .arg("-")
        .output()?;
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    let text = String::from_utf8(text.stdout)?;
    let t = &s.totals[0];
    let grouped = |u: i64| {
        payments_service::domain::money::grouped(payments_service::domain::money::from_units(u), 2)
    };
    // The sandbox's billing configuration: its issuer and THB's 7 % VAT.
    let fees = payments_service::domain::money::from_units(t.total_fees);
    let vat = (fees * dec("0.07"))
        .round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    let due = payments_service::domain::money::grouped(fees + vat, 2);
    let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = one_line(&text);
    for line in [
        // The issuer, with its address and tax number.
        "ISSUED BY Sandbox Payments Co., Ltd.".to_string(),
        "Bangkok 10120, Thailand Tax ID: 0105599999999".to_string(),
        "Billing statement".to_string(),
        format!("Statement no. {}", s.row.number),
        "Period: 1 November 2026 to 30 November 2026 (UTC)".to_string(),
        "Date of issue: 2 December 2026".to_string(),
        // Bill-to: the merchant by its name and code.
        format!(
            "BILL TO Siam Games Co., Ltd. 7 Rama IV Road, Bangkok 10500 Tax ID: 0105561234567 \
             Merchant code siam-games (id {})",
            m.id
        ),
        // The table, each amount grouped in THB's two digits.
        "Fees in THB Orders Amount Fees".to_string(),
        format!(
            "Deposits completed 3 {} {}",
            grouped(t.deposit_amount),
            grouped(t.deposit_fees)
        ),
        "Withdrawals completed 0 0.00 0.00".to_string(),
        format!("Fees {}", grouped(t.total_fees)),
        // The tax line, and what is due with it.
        format!(
            "VAT 7% on fees {}",
            payments_service::domain::money::grouped(vat, 2)
        ),
        format!("Total due THB {due}"),
        "Page 1 of 1".to_string(),
    ] {
        assert!(
            flat.contains(&line),
            "the PDF's text lacks {line:?}:\n{text}"
        );
    }
    assert_eq!(
        t.deposit_amount, 1_013_345_600,
        "1234.56 + 99.99 + 100000.01"
    );
    let png = dir.join("page");
    let rendered = Command::new("pdftoppm")
        .args(["-png", "-r", "100", "-f", "1", "-l", "1", "-singlefile"])
        .arg(&file)
        .arg(&png)
        .status()?;
    assert!(rendered.success());
    let image = std::fs::read(dir.join("page.png"))?;
    assert!(
        image.len() > 5_000 && image.starts_with(b"\x89PNG"),
        "a rendered page"
    );
    if let Ok(out) = std::env::var("BILLING_SCREENSHOT") {
        std::fs::write(out, &image)?;
    }
    Ok(())
}

#[tokio::test]
async fn a_statement_is_never_edited_and_a_correction_supersedes_it() -> Result<()> {
    let clock = ManualClock::at(at(2026, 11, 2, 9));
    let svc = TestService::start(Profile::Sandbox, Arc::new(clock.clone())).await?;
    let app = svc.service.app().clone();
    let m = svc.new_merchant("Corrected").await?.merchant;
    clock.set(at(2026, 11, 20, 0));
    let first = billing::issue_for(
        &app,
        &payments_testing::SET_UP,
        &m.id,
        at(2026, 11, 2, 0),
        at(2026, 11, 9, 0),
        None,
    )
    .await?;
    let again = billing::issue_for(
        &app,
        &payments_testing::SET_UP,
        &m.id,
        at(2026, 11, 5, 0),
        at(2026, 11, 12, 0),
        None,
    )
    .await;
    assert!(
        matches!(again, Err(payments_service::domain::error::ApiError::StatementAlreadyIssued(ref n)) if *n == first.row.number)
    );
    let second = billing::reissue(
        &app,
        &payments_testing::SET_UP,
        &first.row.id,
        Some("fee rule fixed".into()),
    )
    .await?;
    assert_eq!(second.row.version, 2);
    assert_eq!(
        second.supersedes().as_deref(),
        Some(first.row.number.as_str())
    );
    let old = billing::find(&app, None, &first.row.id).await?;
    assert_eq!(old.row.status.as_str(), "superseded");
    assert_eq!(
        (old.row.totals.clone(), old.row.document_sha256.clone()),
        (first.row.totals.clone(), first.row.document_sha256.clone())
    );
    assert!(
        billing::reissue(&app, &payments_testing::SET_UP, &first.row.id, None)
            .await
            .is_err(),
        "a superseded one is not corrected again"
    );
    let other = svc.new_merchant("Other").await?.merchant;
    assert!(
        billing::find(&app, Some(&other.id), &second.row.id)
            .await
            .is_err(),
        "not another merchant's"
    );
    Ok(())
}

/// Merchants created months ago, by an in-process service on a clock set
/// back, for the killed-issuer test's processes to bill on the real clock.
async fn merchants_months_ago(
    svc: &TestService,
    clock: &ManualClock,
    n: usize,
) -> Result<Vec<String>> {
    let app = svc.service.app();
    let mut ids = Vec::new();
    for i in 0..n {
        clock.set(Utc::now().timestamp() - 150 * 86_400 + i64::try_from(i)?);
        let m = svc.new_merchant(&format!("Old {i}")).await?.merchant;
        let order = deposits::create(app, &m, new_deposit("old", dec("500"), "THB", None)).await?;
        deposits::complete(app, &payments_testing::SET_UP, &order.order_no, None, None).await?;
        ids.push(m.id);
    }
    Ok(ids)
}

/// The `payments` executable beside this test's build.
fn payments_binary() -> Result<std::path::PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .ancestors()
        .find(|d| d.join("deps").is_dir())
        .context("not in a cargo target directory")?;
    let bin = dir.join("payments");
    if !bin.exists() {
        bail!(
            "{} is missing: `cargo build -p payments-service` builds it",
            bin.display()
        );
    }
    Ok(bin)
}

#[derive(diesel::QueryableByName)]
struct Pair {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    statements: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    events: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    distinct_periods: i64,
}

async fn counts(url: &str) -> Result<(i64, i64, i64)> {
    let sql = "SELECT (SELECT COUNT(*) FROM billing_statements) AS statements, \
        (SELECT COUNT(*) FROM callback_deliveries WHERE order_kind = 'billing_statement') AS events, \
        (SELECT COUNT(*) FROM (SELECT DISTINCT merchant_id, period_start FROM billing_statements) d) \
        AS distinct_periods";
    let rows: Vec<Pair> = load(url, sql).await?;
    let r = rows.into_iter().next().context("a count")?;
    Ok((r.statements, r.events, r.distinct_periods))
}

fn issuer(bin: &std::path::Path, svc: &TestService, instance: &str) -> Result<std::process::Child> {
    let cfg = &svc.service.app().config;
    let port = payments_testing::free_port()?;
    Ok(Command::new(bin)
        .env("PAYMENTS_PROFILE", "sandbox")
        .env("PAYMENTS_DATABASE_URL", &svc.database_url)
        .env(
            "PAYMENTS_MASTER_KEY",
            cfg.master_key.clone().unwrap_or_default(),
        )
        .env("PAYMENTS_BIND", format!("127.0.0.1:{port}"))
        .env(
            "PAYMENTS_DATA_DIR",
            std::env::temp_dir().join(format!("issuer-{}", uuid::Uuid::new_v4())),
        )
        .env("PAYMENTS_INSTANCE_ID", instance)
        .env("PAYMENTS_PLATFORM_EVENTS_URL", "http://127.0.0.1:9/events")
        .env(
            "PAYMENTS_PLATFORM_EVENTS_SECRET",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        )
        .env("PAYMENTS_LOG_LEVEL", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?)
}

#[tokio::test]
async fn two_issuers_and_a_kill_leave_one_statement_and_one_event_per_period() -> Result<()> {
    let bin = payments_binary()?;
    let clock = ManualClock::at(Utc::now().timestamp() - 150 * 86_400);
    let svc = TestService::start(Profile::Sandbox, Arc::new(clock.clone())).await?;
    let ids = merchants_months_ago(&svc, &clock, 24).await?;
    // What is due on the real clock: each month from the one each was
    // created in to the last that ended (settled) by now.
    let now = Utc::now().timestamp();
    let mut due = 0;
    for _ in &ids {
        let mut start = period_start(now - 150 * 86_400, BillingPeriod::Month).unwrap();
        while period_end(start, BillingPeriod::Month).unwrap() + SETTLE_SECONDS <= now {
            due += 1;
            start = period_end(start, BillingPeriod::Month).unwrap();
        }
    }
    let url = svc.database_url.clone();
    let mut a = issuer(&bin, &svc, "issuer-a")?;
    let mut b = issuer(&bin, &svc, "issuer-b")?;
    // Kill -9 the first once issuing is under way, then start it again.
    let mut at_kill = None;
    for _ in 0..600 {
        let (statements, _, _) = counts(&url).await?;
        if statements >= 8 {
            a.kill()?;
            a.wait()?;
            at_kill = Some(statements);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let at_kill = at_kill.context("issuing never started")?;
    let mut a = issuer(&bin, &svc, "issuer-a")?;
    let mut done = None;
    for _ in 0..1200 {
        let c = counts(&url).await?;
        if c.0 >= due {
            done = Some(c);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    a.kill()?;
    b.kill()?;
    let _ = (a.wait(), b.wait());
    let (statements, events, periods) =
        done.with_context(|| format!("fewer than {due} statements"))?;
    // Both issuers have stopped: nothing more can arrive.
    assert_eq!(counts(&url).await?, (statements, events, periods));
    assert_eq!((statements, events, periods), (due, due, due));
    println!(
        "{due} statements of {} merchants, {at_kill} issued when one issuer was killed",
        ids.len()
    );
    Ok(())
}

/// A statement issued by hand for a period before the merchant existed
/// (QA's scenarios do it) is no reason for the schedule to bill every period
/// since then: the schedule starts where the merchant does.
#[tokio::test]
async fn an_old_statement_by_hand_does_not_make_the_schedule_bill_the_years_between() -> Result<()>
{
    let clock = ManualClock::at(at(2026, 11, 2, 9));
    let svc = TestService::start(Profile::Sandbox, Arc::new(clock.clone())).await?;
    let app = svc.service.app().clone();
    let m = svc.new_merchant("Billed by hand").await?.merchant;
    billing::issue_for(
        &app,
        &payments_testing::SET_UP,
        &m.id,
        at(2020, 1, 1, 0),
        at(2020, 2, 1, 0),
        None,
    )
    .await?;
    assert_eq!(
        billing::issue_due(&app, 1000).await?,
        0,
        "nothing of 2020-02 to 2026-10"
    );
    // Its own first month is billed once it has ended and settled.
    clock.set(at(2026, 12, 3, 0));
    assert_eq!(billing::issue_due(&app, 1000).await?, 1);
    let periods: Vec<(i64, i64)> = statements_of(&app, &m.id)
        .await?
        .iter()
        .map(|s| (s.row.period_start, s.row.period_end))
        .collect();
    assert!(
        periods.contains(&(at(2026, 11, 1, 0), at(2026, 12, 1, 0))),
        "{periods:?}"
    );
    assert_eq!(periods.len(), 2, "{periods:?}");
    Ok(())
}
