//! What a merchant reads to reconcile: its event feed, its balance lines,
//! its order lists and its daily statements.

use super::common::PaymentsWorld;
use conformance::{harness, RawRequest, Reply};
use cucumber::{then, when};
use rust_decimal::Decimal;
use serde_json::Value;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// A signed GET as the merchant, its reply kept as the scenario's last.
async fn get(world: &mut PaymentsWorld, path: &str, query: &[(&str, String)]) -> Reply {
    get_with_path(world, path, vec![], query).await
}

/// The same, with path parameters (signed like the query's).
async fn get_with_path(
    world: &mut PaymentsWorld,
    path: &str,
    path_params: Vec<(String, String)>,
    query: &[(&str, String)],
) -> Reply {
    let mut raw = RawRequest::new(world.merchant(), path.to_string());
    raw.path_params = path_params;
    raw.query = query
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let reply = harness().await.send(raw).await.expect("a reply");
    world.reply = Some(reply.clone());
    reply
}

fn items(reply: &Reply) -> Vec<Value> {
    reply.body["items"].as_array().cloned().unwrap_or_default()
}

fn names(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn decimal(v: &Value) -> Decimal {
    Decimal::from_str(
        v.as_str()
            .unwrap_or_else(|| panic!("{v} is a decimal string")),
    )
    .unwrap_or_else(|e| panic!("{v}: {e}"))
}

/// How long a change may take to reach the feed: positions are given after
/// commit by a job (ARCHITECTURE.md, "The events feed"), so a read right
/// after an action may not hold it yet. Against a deployment under load
/// this is generous; a read that finds what it expects returns at once.
const FEED_PATIENCE: Duration = Duration::from_secs(15);

async fn read_feed(world: &mut PaymentsWorld, query: Vec<(&'static str, String)>) -> Reply {
    world.events_query = query.clone();
    get(world, "/api/v1/merchant/events", &query).await
}

/// Reads the feed again, with the last read's query, until `done` holds of
/// the reply (or the patience runs out; the caller's assertion then
/// reports the last reply).
async fn read_feed_until(world: &mut PaymentsWorld, done: impl Fn(&Reply) -> bool) {
    let deadline = Instant::now() + FEED_PATIENCE;
    while !done(world.reply()) && world.reply().status == 200 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let query = world.events_query.clone();
        read_feed(world, query).await;
    }
}

#[when("the merchant reads its events")]
async fn read_events(world: &mut PaymentsWorld) {
    read_feed(world, vec![]).await;
}

#[when(expr = "the merchant reads its events of types {string}")]
async fn read_events_of(world: &mut PaymentsWorld, types: String) {
    read_feed(world, vec![("types", types)]).await;
}

#[when("the merchant reads its events after the last cursor")]
async fn read_events_after(world: &mut PaymentsWorld) {
    let cursor = world.reply().body["next_cursor"]
        .as_str()
        .expect("the last read gave a cursor")
        .to_string();
    read_feed(world, vec![("after", cursor)]).await;
}

/// Reads the feed a page at a time from the follower's cursor (from the
/// start without one) until a page says there is no more.
async fn follow(world: &mut PaymentsWorld, limit: i64) {
    loop {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(cursor) = world.feed_cursor.clone() {
            query.push(("after", cursor));
        }
        let reply = read_feed(world, query).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let page = items(&reply);
        assert!(page.len() as i64 <= limit, "{}", reply.body);
        world.listed.extend(page);
        world.feed_cursor = Some(
            reply.body["next_cursor"]
                .as_str()
                .expect("a cursor")
                .to_string(),
        );
        if reply.body["has_more"] != Value::Bool(true) {
            break;
        }
    }
}

#[when(expr = "the merchant follows its events {int} at a time")]
async fn follow_events(world: &mut PaymentsWorld, limit: i64) {
    world.listed.clear();
    world.feed_cursor = None;
    follow(world, limit).await;
}

fn event_names(reply: &Reply) -> Vec<String> {
    items(reply)
        .iter()
        .map(|e| e["event"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[then(expr = "the events are {string}")]
async fn events_are(world: &mut PaymentsWorld, expected: String) {
    let expected = names(&expected);
    read_feed_until(world, |r| event_names(r) == expected).await;
    assert_eq!(
        event_names(world.reply()),
        expected,
        "{}",
        world.reply().body
    );
}

#[then(expr = "the events include {string}")]
async fn events_include(world: &mut PaymentsWorld, name: String) {
    read_feed_until(world, |r| event_names(r).contains(&name)).await;
    let body = &world.reply().body;
    assert!(event_names(world.reply()).contains(&name), "{body}");
}

#[then("every event's data is its callback body")]
async fn data_is_callback(world: &mut PaymentsWorld) {
    for e in items(world.reply()) {
        assert_eq!(e["data"]["event"], e["event"], "{e}");
        assert_eq!(e["data"]["order_no"], e["order_no"], "{e}");
        assert!(e["event_id"].as_str().is_some_and(|s| !s.is_empty()), "{e}");
        assert_eq!(
            e["callback_status"], "none",
            "no callback_url, no callback: {e}"
        );
    }
}

#[then("it followed the same events as one read of them all, each once")]
async fn same_as_one_read(world: &mut PaymentsWorld) {
    let deadline = Instant::now() + FEED_PATIENCE;
    loop {
        let followed: Vec<Value> = world.listed.iter().map(|e| e["event_id"].clone()).collect();
        let all = read_feed(world, vec![("limit", "500".into())]).await;
        let all: Vec<Value> = items(&all).iter().map(|e| e["event_id"].clone()).collect();
        assert!(!all.is_empty());
        assert!(
            all.starts_with(&followed),
            "the follower read {followed:?}, not a start of the feed {all:?}"
        );
        if followed == all {
            break;
        }
        // An event positioned after the follower's last page is on its next.
        assert!(
            Instant::now() < deadline,
            "followed {followed:?}, the feed holds {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        follow(world, 1).await;
    }
}

#[when(expr = "the merchant reads its {word} balance transactions")]
async fn read_lines(world: &mut PaymentsWorld, currency: String) {
    get(
        world,
        "/api/v1/merchant/balance/transactions",
        &[("currency_code", currency)],
    )
    .await;
}

#[then(expr = "the balance transactions are {string}")]
async fn lines_are(world: &mut PaymentsWorld, expected: String) {
    let got: Vec<String> = items(world.reply())
        .iter()
        .map(|l| l["type"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(got, names(&expected), "{}", world.reply().body);
}

#[then(expr = "the balance transactions sum to the merchant's {word} balance")]
async fn lines_sum(world: &mut PaymentsWorld, currency: String) {
    let lines = items(world.reply());
    let total: Decimal = lines.iter().map(|l| decimal(&l["amount"])).sum();
    let available: Decimal = lines.iter().map(|l| decimal(&l["available_change"])).sum();
    for l in &lines {
        assert_eq!(
            decimal(&l["amount"]),
            decimal(&l["available_change"]) + decimal(&l["frozen_change"]),
            "{l}"
        );
    }
    let balances = get(world, "/api/v1/merchant/balance", &[]).await;
    let balance = items(&balances)
        .into_iter()
        .find(|b| b["currency_code"] == currency.as_str())
        .expect("a balance in the currency");
    assert_eq!(total, decimal(&balance["total_balance"]), "{balance}");
    assert_eq!(
        available,
        decimal(&balance["available_balance"]),
        "{balance}"
    );
    let last = lines.last().expect("a line");
    assert_eq!(last["version"], balance["version"]);
    assert_eq!(
        decimal(&last["available_after"]),
        decimal(&balance["available_balance"])
    );
}

#[when(expr = "the merchant lists its {word} orders {int} at a time")]
async fn list_orders(world: &mut PaymentsWorld, kind: String, limit: i64) {
    list_orders_with(world, kind, limit, String::new()).await;
}

#[when(expr = "the merchant lists its {word} orders {int} at a time with the query {string}")]
async fn list_orders_with(world: &mut PaymentsWorld, kind: String, limit: i64, query: String) {
    let path = format!("/api/v1/merchant/orders/{kind}");
    let filters: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let mut cursor: Option<String> = None;
    let mut listed = Vec::new();
    loop {
        let mut q: Vec<(&str, String)> = filters
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        q.push(("limit", limit.to_string()));
        if let Some(c) = &cursor {
            q.push(("cursor", c.clone()));
        }
        let reply = get(world, &path, &q).await;
        if reply.status != 200 {
            break;
        }
        let page = items(&reply);
        assert!(page.len() as i64 <= limit, "{}", reply.body);
        listed.extend(page);
        match reply.body["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    world.listed = listed;
}

#[when(
    expr = "the merchant reads its {word} statements of the day its balance last changed and of the day before"
)]
async fn read_statements(world: &mut PaymentsWorld, currency: String) {
    let balances = get(world, "/api/v1/merchant/balance", &[]).await;
    let balance = items(&balances)
        .into_iter()
        .find(|b| b["currency_code"] == currency.as_str())
        .expect("a balance in the currency");
    let changed = balance["updated_at"].as_str().expect("updated_at");
    let day = chrono::DateTime::parse_from_rfc3339(changed)
        .expect("RFC 3339")
        .date_naive();
    let before = day.pred_opt().expect("a day before");
    let earlier = statement(world, &before.to_string(), &currency).await;
    assert_eq!(earlier.status, 200, "{}", earlier.body);
    world.replies = vec![earlier, balances];
    statement(world, &day.to_string(), &currency).await;
}

async fn statement(world: &mut PaymentsWorld, date: &str, currency: &str) -> Reply {
    let path = format!("/api/v1/merchant/statements/{date}");
    let params = vec![("date".to_string(), date.to_string())];
    get_with_path(
        world,
        &path,
        params,
        &[("currency_code", currency.to_string())],
    )
    .await
}

#[when(expr = "the merchant reads its statement of {string} in {word}")]
async fn read_statement(world: &mut PaymentsWorld, date: String, currency: String) {
    statement(world, &date, &currency).await;
}

#[then("the statement's lines take its opening to its closing")]
async fn statement_adds_up(world: &mut PaymentsWorld) {
    let s = world.reply().body.clone();
    let moved: Decimal = s["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| decimal(&l["amount"]))
        .sum();
    assert_eq!(
        decimal(&s["opening_balance"]) + moved,
        decimal(&s["closing_balance"]),
        "{s}"
    );
    assert_eq!(
        decimal(&s["opening_available"]) + decimal(&s["opening_frozen"]),
        decimal(&s["opening_balance"])
    );
}

#[then("the statement closes at the balance, and opens where the day before closed")]
async fn statement_chains(world: &mut PaymentsWorld) {
    let s = world.reply().body.clone();
    let earlier = &world.replies[0].body;
    let balance = items(&world.replies[1])
        .into_iter()
        .find(|b| b["currency_code"] == s["currency_code"])
        .expect("the balance");
    assert_eq!(
        decimal(&s["closing_balance"]),
        decimal(&balance["total_balance"]),
        "{s}"
    );
    assert_eq!(
        decimal(&s["closing_available"]),
        decimal(&balance["available_balance"])
    );
    assert_eq!(
        earlier["closing_balance"], s["opening_balance"],
        "{earlier} then {s}"
    );
    assert_eq!(earlier["closing_available"], s["opening_available"]);
    assert_eq!(earlier["closing_frozen"], s["opening_frozen"]);
}
