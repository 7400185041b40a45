//! Callbacks as they arrive: each body, and when (Unix ms). Answers 200 at
//! once and keeps the connection open.

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Notify;

#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    arrivals: Arc<Mutex<Vec<(Bytes, f64)>>>,
    arrived: Arc<Notify>,
}

impl Receiver {
    pub async fn start(port: u16) -> Result<Receiver> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .with_context(|| format!("listening on 127.0.0.1:{port}"))?;
        let port = listener.local_addr()?.port();
        let receiver = Receiver {
            url: format!("http://127.0.0.1:{port}/callback"),
            arrivals: Arc::default(),
            arrived: Arc::default(),
        };
        let serving = receiver.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let r = serving.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let r = r.clone();
                            async move {
                                let body = request.into_body().collect().await?.to_bytes();
                                let at = super::unix_ms();
                                if let Ok(mut a) = r.arrivals.lock() {
                                    a.push((body, at));
                                }
                                r.arrived.notify_waiters();
                                Ok::<_, hyper::Error>(hyper::Response::new(Full::new(Bytes::new())))
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(receiver)
    }

    /// Waits until `n` orders had a callback `wanted` accepts, or `limit`
    /// passed; returns how many did. Each wake reads only the arrivals
    /// since the last: a recount of all of them on every arrival made the
    /// receiver's own work grow with the square of a drain's size and take
    /// a quarter of the machine from the sender it measured.
    pub async fn wait_for(
        &self,
        n: usize,
        limit: Duration,
        wanted: fn(&serde_json::Value) -> bool,
    ) -> usize {
        let deadline = tokio::time::Instant::now() + limit;
        let mut orders = std::collections::HashSet::new();
        let mut read = 0;
        loop {
            let notified = self.arrived.notified();
            let new: Vec<Bytes> = self
                .arrivals
                .lock()
                .map(|a| a[read..].iter().map(|(body, _)| body.clone()).collect())
                .unwrap_or_default();
            read += new.len();
            orders.extend(new.iter().filter_map(|body| key_of(body, wanted)));
            if orders.len() >= n {
                return orders.len();
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.first_arrivals(wanted).len();
            }
        }
    }

    /// The first arrival `wanted` accepts of each order: its `bench_id`
    /// when the body has one, else its order number → Unix ms.
    pub fn first_arrivals(&self, wanted: fn(&serde_json::Value) -> bool) -> HashMap<String, f64> {
        let mut first = HashMap::new();
        let arrivals = self.arrivals.lock().map(|a| a.clone()).unwrap_or_default();
        for (body, at) in arrivals {
            if let Some(key) = key_of(&body, wanted) {
                first.entry(key).or_insert(at);
            }
        }
        first
    }
}

/// The order a callback `wanted` accepts is about: its `bench_id` when the
/// body has one, else its order number.
fn key_of(body: &[u8], wanted: fn(&serde_json::Value) -> bool) -> Option<String> {
    let v = serde_json::from_slice::<serde_json::Value>(body).ok()?;
    if !wanted(&v) {
        return None;
    }
    v.get("bench_id")
        .or_else(|| v.get("order_no"))
        .and_then(|k| k.as_str())
        .map(str::to_string)
}

/// Every callback counts.
pub fn any(_: &serde_json::Value) -> bool {
    true
}
