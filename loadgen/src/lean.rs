//! Create-deposit as cheaply as a client can send it: the body written as
//! text, signed by `payments-wire` (the generated client's own signer) over
//! fields set directly, and posted over one kept-alive HTTP/1.1 connection
//! per client with hyper's bare connection API.
//!
//! Why not the generated client here: the load shares the service's cores,
//! and a create through it (reqwest's pool and URL handling, the body
//! serialized and parsed again to be signed, the answer parsed into the
//! contract's types) cost the load generator 62 to 73 µs of CPU; through
//! this, 30 to 35 µs (16 clients, 8 s, against one service, alternating,
//! 2026-12-06; the service took 139 to 171 µs and PostgreSQL 168 to 202 µs
//! a create meanwhile). The bench compares the service with pgbench, whose
//! client is C; a heavy client charged the service for CPU it never used.
//! The generated client still sends the run's first create, so a key, a
//! contract or an answer that is wrong stops the run before anything is
//! counted, and `create-generated` measures the whole create through it.

use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use payments_wire::SigningFields;
use std::fmt::Write;

const PATH: &str = "/api/v1/merchant/orders/deposit";

/// One client's connection to the service.
pub struct Lean {
    sender: SendRequest<Full<Bytes>>,
    base: String,
    authority: String,
    key: String,
}

impl Lean {
    /// Connects to `base` (`http://host:port`), as the merchant holding `key`.
    pub async fn connect(base: &str, key: &str) -> Result<Lean> {
        let uri: hyper::Uri = base
            .parse()
            .with_context(|| format!("the base URL {base}"))?;
        if uri.scheme_str() != Some("http") {
            bail!("the lean client speaks plain http, not {base}");
        }
        let authority = uri
            .authority()
            .ok_or_else(|| anyhow!("the base URL {base} has no host"))?
            .to_string();
        let stream = tokio::net::TcpStream::connect(&authority)
            .await
            .with_context(|| format!("connecting to {authority}"))?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .context("the HTTP/1.1 handshake")?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                eprintln!("loadgen: a connection ended: {e}");
            }
        });
        Ok(Lean {
            sender,
            base: base.to_string(),
            authority,
            key: key.to_string(),
        })
    }

    /// Creates the deposit `no` (the fields of the generated client's
    /// template); an answer other than 200 with an order number is an
    /// error.
    pub async fn create(&mut self, no: &str) -> Result<()> {
        // One list for the body and for what is signed: the two cannot
        // disagree. No value needs escaping in JSON.
        let sent = [
            ("merchant_order_no", no),
            ("amount", "100.50"),
            ("currency_code", "THB"),
            ("user_id", "bench-user"),
        ];
        let mut fields = SigningFields::new();
        let mut body = String::from("{");
        for (name, value) in sent {
            if body.len() > 1 {
                body.push(',');
            }
            let _ = write!(body, "\"{name}\":\"{value}\"");
            fields.insert(name, Some(value.to_string()));
        }
        body.push('}');
        let signature = payments_wire::sign(&fields, &self.key);
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default()
            .to_string();
        let request = hyper::Request::post(PATH)
            .header(hyper::header::HOST, &self.authority)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header("x-api-key", &self.key)
            .header("x-timestamp", timestamp)
            .header("x-signature", signature)
            .body(Full::new(Bytes::from(body)))?;
        // A connection the other end closed (a balancer in front, a
        // restart) is made again, as reqwest's pool would.
        if self.sender.ready().await.is_err() {
            *self = Lean::connect(&self.base, &self.key).await?;
        }
        let answer = self.sender.send_request(request).await?;
        let status = answer.status();
        let body = answer.into_body().collect().await?.to_bytes();
        const NUMBERED: &[u8] = b"\"order_no\":\"D";
        let numbered = body.windows(NUMBERED.len()).any(|w| w == NUMBERED);
        if status != hyper::StatusCode::OK || !numbered {
            bail!(
                "creating {no}: {status} {}",
                String::from_utf8_lossy(&body[..body.len().min(300)])
            );
        }
        Ok(())
    }
}
