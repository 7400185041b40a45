//! The callback side of `cargo xtask bench`, run as its own process beside
//! a release-built service, so the service's figures (and its memory) are
//! its own:
//!
//!     delivery_bench fill <base> <api-key> <operator-token> <n> <callback-url>
//!         n deposits created and completed through the API while the
//!         service's worker is off: n deliveries due at once.
//!     delivery_bench receive <port> <n> <limit-seconds> [<arrivals.csv>]
//!         a receiver that answers 200 (keep-alive, as a merchant's server
//!         does) and exits after n callbacks, printing when they arrived,
//!         and writing each one's first arrival (Unix ms) to the file: by
//!         its `bench_id` when the body has one, else by its order.
//!     delivery_bench serve <port>
//!         the same receiver without end: what an HTTP load tool posts to
//!         for the ceiling.
//!
//! Each prints one JSON line last, for `cargo xtask bench` to read.

mod support;

use anyhow::{bail, Context, Result};
use merchant_client::Credentials;
use std::sync::Arc;
use std::time::Duration;
use support::receiver::{self, Receiver};

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["fill", base, key, token, n, url] => fill(base, key, token, n.parse()?, url).await,
        ["receive", port, n, limit] => {
            receive(port.parse()?, n.parse()?, limit.parse()?, None).await
        }
        ["receive", port, n, limit, log] => {
            receive(port.parse()?, n.parse()?, limit.parse()?, Some(log)).await
        }
        ["serve", port] => {
            let receiver = Receiver::start(port.parse()?).await?;
            eprintln!("delivery_bench: receiving on {}", receiver.url);
            std::future::pending::<()>().await;
            Ok(())
        }
        _ => bail!(
            "usage: delivery_bench fill <base> <api-key> <operator-token> <n> <callback-url> \
             | receive <port> <n> <limit-seconds> [<arrivals.csv>] | serve <port>"
        ),
    }
}

async fn receive(port: u16, n: usize, limit: u64, log: Option<&str>) -> Result<()> {
    let receiver = Receiver::start(port).await?;
    eprintln!(
        "delivery_bench: waiting for {n} callbacks on {}",
        receiver.url
    );
    let got = receiver
        .wait_for(n, Duration::from_secs(limit), receiver::any)
        .await;
    let arrivals = receiver.first_arrivals(receiver::any);
    if let Some(log) = log {
        let mut text = String::with_capacity(arrivals.len() * 48);
        for (key, at) in &arrivals {
            text.push_str(&format!("{key},{at:.3}\n"));
        }
        std::fs::write(log, text).with_context(|| format!("writing {log}"))?;
    }
    let first = arrivals.values().copied().fold(f64::INFINITY, f64::min);
    let last = arrivals.values().copied().fold(0.0, f64::max);
    println!(
        "{}",
        serde_json::json!({
            "received": got,
            "orders": arrivals.len(),
            "first_unix_ms": first,
            "last_unix_ms": last,
        })
    );
    if arrivals.len() < n {
        bail!("only {} of {n} orders were called back", arrivals.len());
    }
    Ok(())
}

struct Clients {
    merchant: merchant_client::merchant::Client,
    people: support::two_people::TwoPeople,
}

impl Clients {
    async fn new(base: &str, key: &str, token: &str) -> Result<Arc<Clients>> {
        Ok(Arc::new(Clients {
            merchant: merchant_client::merchant::Client::new(
                base,
                Credentials::new(key.to_string()),
            ),
            people: support::two_people::TwoPeople::make(base, token).await?,
        }))
    }

    /// Creates `n` deposits called back at `url`, 32 requests at a time;
    /// returns their order numbers.
    async fn create(self: &Arc<Self>, n: usize, url: &str, tag: &str) -> Result<Vec<String>> {
        let mut orders = Vec::with_capacity(n);
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..n {
            if tasks.len() >= 32 {
                if let Some(done) = tasks.join_next().await {
                    orders.push(done??);
                }
            }
            let (clients, url) = (self.clone(), url.to_string());
            let no = format!("{tag}-{i}");
            tasks.spawn(async move {
                let mut request = conformance::requests::deposit(&no, "100.50", "THB");
                request.callback_url = Some(url);
                let created = clients
                    .merchant
                    .create_deposit(&request)
                    .await
                    .map_err(|e| anyhow::anyhow!("creating deposit {no}: {e}"))?;
                Ok::<_, anyhow::Error>(created.into_inner().order_no)
            });
            if (i + 1) % 2000 == 0 {
                eprintln!("delivery_bench: {} of {n} deposits created", i + 1);
            }
        }
        while let Some(done) = tasks.join_next().await {
            orders.push(done??);
        }
        Ok(orders)
    }

    async fn complete(&self, order_no: &str) -> Result<()> {
        self.people
            .complete(order_no)
            .await
            .map_err(|e| anyhow::anyhow!("completing {order_no}: {e}"))
    }
}

async fn fill(base: &str, key: &str, token: &str, n: usize, url: &str) -> Result<()> {
    let clients = Clients::new(base, key, token).await?;
    let tag = format!("F{:x}", std::process::id());
    let orders = clients.create(n, url, &tag).await?;
    let mut tasks = tokio::task::JoinSet::new();
    for (i, order) in orders.into_iter().enumerate() {
        if tasks.len() >= 32 {
            if let Some(done) = tasks.join_next().await {
                done??;
            }
        }
        let clients = clients.clone();
        tasks.spawn(async move { clients.complete(&order).await });
        if (i + 1) % 2000 == 0 {
            eprintln!("delivery_bench: {} of {n} deposits completed", i + 1);
        }
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    println!("{}", serde_json::json!({ "due": n }));
    Ok(())
}
