//! Issue 55: the service holds at most `connections_at_once` connections
//! open. One past it is answered as soon as its request's head arrives,
//! with the service's 503 (`SERVICE_UNAVAILABLE`, `Retry-After: 1`, in the
//! envelope) and closed; once a connection goes, its place serves again.
//! Of them, `connections_reserved_per_surface` are kept for each surface: a
//! crowd on the pages that holds every shared one leaves the payment API
//! and the operator API theirs. And one address holds at most
//! `connections_per_address` of them, so one host's crowd leaves the rest to
//! others.

use payments_service::clock::ManualClock;
use payments_service::config::InFlightConfig;
use payments_service::Profile;
use payments_testing::TestService;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const AT_ONCE: usize = 16;

/// Requests in flight per surface: 16 in all, so `AT_ONCE` may be as low.
const SMALL: InFlightConfig = InFlightConfig {
    payments: 8,
    operators: 4,
    pages: 4,
    per_merchant: 4,
    running_per_merchant: None,
};

/// What the service answers on a new connection to `addr` to a plain
/// `GET /healthz`, whole (the service closes or answers `close`).
async fn ask(addr: &str) -> String {
    ask_at(addr, "GET /healthz").await
}

/// The same, for `request` (`METHOD path`).
async fn ask_at(addr: &str, request: &str) -> String {
    let mut conn = TcpStream::connect(addr).await.expect("a connection");
    conn.write_all(
        format!("{request} HTTP/1.1\r\nhost: t\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await
    .expect("the request written");
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer)
        .await
        .expect("the answer read");
    String::from_utf8_lossy(&answer).into_owned()
}

/// A sandbox holding at most `at_once` connections, `kept` of them for
/// each surface and `per_address` for one address; and its `host:port`.
async fn start(at_once: usize, kept: usize, per_address: usize) -> (TestService, String) {
    let service = TestService::start_with(
        Profile::Sandbox,
        Arc::new(ManualClock::at(1_800_000_000)),
        |c| {
            c.connections_at_once = at_once;
            c.connections_reserved_per_surface = kept;
            c.connections_per_address = per_address;
            c.requests_in_flight = SMALL;
        },
    )
    .await
    .unwrap();
    let addr = service.base_url().trim_start_matches("http://").to_string();
    (service, addr)
}

/// Asks until a connection is served again (a freed place is freed when
/// the server sees the close), within ten seconds; its answer.
async fn served_again(addr: &str) -> String {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let answer = ask(addr).await;
            if answer.starts_with("HTTP/1.1 200") {
                return answer;
            }
            assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("a freed place serves again")
}

#[tokio::test]
async fn a_connection_past_the_bound_is_answered_503_at_once_and_its_place_serves_again() {
    let (_service, addr) = start(AT_ONCE, 0, 0).await;

    // Every place held by a connection that has sent nothing yet. Each is
    // answered once it is served (the last one's answer proves the server
    // took all of them before the one past the bound).
    let mut held = hold(&addr, AT_ONCE).await;

    // An HTTP client (hyper's, as merchants' clients are) reads the
    // refusal as the answer to its request, a create with its body.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let refused = client
        .post(format!("http://{addr}/api/v1/merchant/orders/deposit"))
        .header("content-type", "application/json")
        .body(r#"{"merchant_order_no":"C-1","amount":"100","currency_code":"THB"}"#)
        .send()
        .await
        .expect("an answer, not a broken connection");
    assert_eq!(refused.status(), 503);
    let header = |name: &str| {
        refused
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(header("retry-after").as_deref(), Some("1"));
    assert_eq!(header("connection").as_deref(), Some("close"));
    let body: serde_json::Value = refused.json().await.expect("the envelope");
    assert_eq!(body["error_code"], "SERVICE_UNAVAILABLE");
    assert!(body["request_id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(
        body["message"].as_str().unwrap().contains("16"),
        "the message names the bound: {body}"
    );

    // One connection goes; the server frees its place when it sees the
    // close, and a new connection is served again.
    drop(held.pop());
    let served = served_again(&addr).await;
    assert!(served.contains("\r\n\r\n"));
}

/// The refusal reads a head through a buffer smaller than it, in the
/// pieces the client sends, and answers once its end has arrived however
/// it was split: a head that never ended would be closed unanswered.
#[tokio::test]
async fn a_head_past_the_bound_sent_in_pieces_is_answered_once_it_ends() {
    let (_service, addr) = start(AT_ONCE, 0, 0).await;
    let _held = hold(&addr, AT_ONCE).await;

    let long = "a".repeat(700);
    let head = format!("GET /healthz HTTP/1.1\r\nhost: t\r\nx-long: {long}\r\n\r\n");
    let (most, end) = head.split_at(head.len() - 1);
    let mut conn = TcpStream::connect(&addr).await.expect("a connection");
    for piece in [most, end] {
        conn.write_all(piece.as_bytes()).await.expect("written");
        conn.flush().await.expect("flushed");
        tokio::task::yield_now().await;
    }
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer)
        .await
        .expect("the answer read");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("SERVICE_UNAVAILABLE"), "{answer}");
}

/// `n` connections to `addr`, each served one `GET /healthz` (a page's
/// surface) and held open.
async fn hold(addr: &str, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..n {
        let mut conn = TcpStream::connect(addr).await.unwrap();
        conn.write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n")
            .await
            .unwrap();
        let mut head = [0u8; 12];
        conn.read_exact(&mut head).await.unwrap();
        assert_eq!(
            &head,
            b"HTTP/1.1 200",
            "connection {} is served",
            held.len() + 1
        );
        held.push(conn);
    }
    held
}

#[tokio::test]
async fn a_crowd_on_the_pages_leaves_the_payment_api_and_the_operator_api_their_kept_connections() {
    const KEPT: usize = 4;
    let (_service, addr) = start(2 * AT_ONCE, KEPT, 0).await;

    // The shared connections and the pages' kept ones, all held by pages.
    let _held = hold(&addr, 2 * AT_ONCE - 2 * KEPT).await;
    let page = ask(&addr).await;
    assert!(
        page.starts_with("HTTP/1.1 503"),
        "the pages have none left: {page}"
    );

    // A merchant's request and an operator's are served: answered by
    // their handlers (unsigned, so refused as such), not by the bound.
    let merchant = ask_at(&addr, "POST /api/v1/merchant/orders/deposit").await;
    assert!(merchant.starts_with("HTTP/1.1 4"), "{merchant}");
    assert!(!merchant.contains("SERVICE_UNAVAILABLE"), "{merchant}");
    let operator = ask_at(&addr, "GET /api/v1/operator/withdrawals").await;
    assert!(operator.starts_with("HTTP/1.1 4"), "{operator}");
    assert!(!operator.contains("SERVICE_UNAVAILABLE"), "{operator}");
}

#[tokio::test]
async fn one_address_holds_at_most_its_share_and_another_address_is_served() {
    const PER_ADDRESS: usize = 4;
    let (_service, addr) = start(AT_ONCE, 0, PER_ADDRESS).await;

    let held = hold(&addr, PER_ADDRESS).await;
    let refused = ask(&addr).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("SERVICE_UNAVAILABLE"), "{refused}");
    assert!(refused.contains("one address may (4)"), "{refused}");

    // From another address on the same machine, served.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let mut other = socket.connect(addr.parse().unwrap()).await.unwrap();
    other
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    other.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // The first address's connection goes; its place serves it again.
    drop(held);
    let served = served_again(&addr).await;
    assert!(served.contains("\r\n\r\n"));
}
