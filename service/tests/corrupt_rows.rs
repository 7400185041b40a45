//! Nothing read from the database falls back to a default: a stored value
//! the code does not know (a status, an order type, an auto-approval mode)
//! or a settings document that does not parse is a 500 with the request id
//! in the envelope and a log line naming the table, the row and the column,
//! never another value. And an account order shows the account its payer
//! was shown, whatever the configuration says later.
//!
//! Runs the real binary, on PostgreSQL when PAYMENTS_TEST_DATABASE_URL is
//! set, else on the sandbox's SQLite file; the test writes the bad values
//! with SQL of its own, as a bad migration or a hand edit would.

mod support;

use diesel::connection::SimpleConnection;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use serde_json::{json, Value};
use support::{
    chrono_now, database_url, free_port, merchant_post, operator, start_with, wait_ready, Service,
};

/// Runs `sql` on the service's database.
async fn execute(database_url: &Option<String>, data: &std::path::Path, sql: &str) {
    match database_url {
        Some(url) => {
            let mut conn = AsyncPgConnection::establish(url).await.unwrap();
            conn.batch_execute(sql).await.unwrap();
        }
        None => {
            use diesel::Connection;
            let path = data.join("payments.db");
            let mut conn = diesel::SqliteConnection::establish(path.to_str().unwrap()).unwrap();
            conn.batch_execute(sql).unwrap();
        }
    }
}

/// A signed GET; the reply's status and JSON body.
async fn merchant_get(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> (u16, Value) {
    let mut signing = payments_wire::SigningFields::new();
    for (k, v) in fields {
        signing.insert(*k, Some(v.to_string()));
    }
    let resp = http
        .get(format!("{base}{path}"))
        .header("x-api-key", key)
        .header("x-timestamp", chrono_now().to_string())
        .header("x-signature", payments_wire::sign(&signing, key))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn deposit(http: &reqwest::Client, base: &str, key: &str, order: &str) -> String {
    let body = json!({"merchant_order_no": order, "amount": 100, "currency_code": "THB"});
    let (status, created) =
        merchant_post(http, base, key, "/api/v1/merchant/orders/deposit", &body)
            .await
            .unwrap();
    assert_eq!(status, 200, "{created}");
    created["order_no"].as_str().unwrap().to_string()
}

/// Moves the sandbox's clock past the second for which a merchant's row
/// is remembered, so that the next request reads it from the database.
async fn forget_merchants(http: &reqwest::Client, s: &Service) {
    operator(
        http,
        s,
        "POST",
        "/api/v1/sandbox/clock/advance",
        json!({"seconds": 2}),
    )
    .await;
}

/// The service's log, as the test harness keeps it.
fn log(data: &std::path::Path) -> String {
    std::fs::read_to_string(data.join("stderr.log")).unwrap_or_default()
}

/// Asserts a 500 with the envelope, and a log line that names what was
/// read and carries the request id the envelope gave.
fn assert_named(data: &std::path::Path, reply: &(u16, Value), names: &[&str]) {
    let (status, body) = reply;
    assert_eq!(*status, 500, "{body}");
    let request_id = body["request_id"].as_str().expect("a request id");
    assert!(!request_id.is_empty());
    assert!(body["message"].is_string(), "{body}");
    let log = log(data);
    let line = log
        .lines()
        .find(|l| l.contains(request_id) && names.iter().all(|n| l.contains(n)))
        .unwrap_or_else(|| panic!("no log line names {names:?} for {request_id}:\n{log}"));
    // The client is told nothing of the database.
    assert!(!body.to_string().contains("column"), "{body} ({line})");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_stored_values_are_errors_naming_row_and_column() {
    let data = std::env::temp_dir().join(format!("payments-corrupt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let database_url = database_url().await;
    let http = reqwest::Client::new();
    let s = start_with(
        &data,
        free_port(),
        &database_url,
        &[("PAYMENTS_LOG_FORMAT", "json")],
    );
    wait_ready(&http, &s.base).await;
    let (base, key) = (s.base.as_str(), s.key.as_str());

    let status_order = deposit(&http, base, key, "CORRUPT-STATUS").await;
    let type_order = deposit(&http, base, key, "CORRUPT-TYPE").await;
    execute(
        &database_url,
        &data,
        &format!(
            "UPDATE deposit_orders SET status = 'paid-ish' WHERE order_no = '{status_order}';\n\
             UPDATE deposit_orders SET order_type = 'hosted' WHERE order_no = '{type_order}';"
        ),
    )
    .await;
    let path = |order: &str| format!("/api/v1/merchant/query/deposit/{order}");

    for (order, column, value) in [
        (&status_order, "status", "paid-ish"),
        (&type_order, "order_type", "hosted"),
    ] {
        let reply = merchant_get(&http, base, key, &path(order), &[("order_no", order)]).await;
        let (row, column) = (format!("order_no={order}"), format!("column {column}"));
        assert_named(&data, &reply, &["deposit_orders", &row, &column, value]);
    }

    // The merchant's own row: every signed request reads it first.
    let merchant_id: String = {
        let (status, balance) =
            merchant_get(&http, base, key, "/api/v1/merchant/balance", &[]).await;
        assert_eq!(status, 200, "{balance}");
        balance["merchant_id"].as_str().unwrap().to_string()
    };
    // Each bad value alone, the row made sound again after it; the value
    // itself is named where it is one word.
    for (set, column, value) in [
        (
            "auto_approval = 'sometimes'",
            "auto_approval",
            Some("sometimes"),
        ),
        (
            "auto_approval = 'up_to', receiving_accounts = '{\"THB\": 7'",
            "receiving_accounts",
            None,
        ),
        (
            "auto_approval = 'up_to', auto_approval_limits = '[\"THB\", 100]'",
            "auto_approval_limits",
            None,
        ),
    ] {
        let sql = format!("UPDATE merchants SET {set} WHERE id = '{merchant_id}'");
        execute(&database_url, &data, &sql).await;
        forget_merchants(&http, &s).await;
        let reply = merchant_get(&http, base, key, "/api/v1/merchant/balance", &[]).await;
        let (row, column) = (format!("id={merchant_id}"), format!("column {column}"));
        let mut names = vec!["merchants", &row, &column];
        names.extend(value);
        assert_named(&data, &reply, &names);
        let sound = format!(
            "UPDATE merchants SET auto_approval = 'off', receiving_accounts = '{{}}', \
             auto_approval_limits = '{{}}' WHERE id = '{merchant_id}'"
        );
        execute(&database_url, &data, &sound).await;
    }
    forget_merchants(&http, &s).await;
    let (status, _) = merchant_get(&http, base, key, "/api/v1/merchant/balance", &[]).await;
    assert_eq!(
        status, 200,
        "the merchant reads again once its row is sound"
    );

    let mut child = s.child;
    let _ = child.kill();
    let _ = child.wait();
}

/// The configuration of the sandbox's one THB receiving account, as a
/// file `PAYMENTS_CONFIG` names.
fn account_config(data: &std::path::Path, account_no: &str, bank: &str) -> std::path::PathBuf {
    let path = data.join(format!("config-{account_no}.toml"));
    std::fs::create_dir_all(data).unwrap();
    std::fs::write(
        &path,
        format!(
            "[[receiving_accounts]]\nid = \"acct-thb-1\"\ncurrency = \"THB\"\n\
             name = \"Collection {account_no}\"\naccount_no = \"{account_no}\"\n\
             account_holder = \"Holder {account_no}\"\nbank_code = \"{bank}\"\n\
             bank_name = \"Bank {bank}\"\n"
        ),
    )
    .unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn an_account_order_shows_the_account_it_was_created_with() {
    let data = std::env::temp_dir().join(format!("payments-shown-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let database_url = database_url().await;
    let http = reqwest::Client::new();
    let port = free_port();

    let before = account_config(&data, "1111111111", "KBANK");
    let s = start_with(
        &data,
        port,
        &database_url,
        &[("PAYMENTS_CONFIG", before.to_str().unwrap())],
    );
    wait_ready(&http, &s.base).await;
    let order = deposit(&http, &s.base, &s.key, "SHOWN-1").await;
    let read = |base: String, key: String, order: String| {
        let http = http.clone();
        async move {
            let path = format!("/api/v1/merchant/query/deposit/{order}");
            let (status, body) =
                merchant_get(&http, &base, &key, &path, &[("order_no", &order)]).await;
            assert_eq!(status, 200, "{body}");
            body
        }
    };
    let first = read(s.base.clone(), s.key.clone(), order.clone()).await;
    assert_eq!(first["account"]["account_no"], "1111111111", "{first}");
    let mut child = s.child;
    let _ = child.kill();
    let _ = child.wait();

    // The same account id, now another bank account.
    let after = account_config(&data, "2222222222", "SCB");
    let s = start_with(
        &data,
        port,
        &database_url,
        &[("PAYMENTS_CONFIG", after.to_str().unwrap())],
    );
    wait_ready(&http, &s.base).await;
    let again = read(s.base.clone(), s.key.clone(), order.clone()).await;
    assert_eq!(
        again["account"], first["account"],
        "the order's account changed with the configuration"
    );
    assert_eq!(again["account"]["account_no"], "1111111111");
    assert_eq!(again["account"]["bank_code"], "KBANK");
    assert_eq!(again["account"]["name"], "Collection 1111111111");
    assert_eq!(again["payment_snapshot"]["account_no"], "1111111111");
    // A new order is given the account as configured now.
    let fresh = deposit(&http, &s.base, &s.key, "SHOWN-2").await;
    let fresh = read(s.base.clone(), s.key.clone(), fresh).await;
    assert_eq!(fresh["account"]["account_no"], "2222222222");
    let mut child = s.child;
    let _ = child.kill();
    let _ = child.wait();
}
