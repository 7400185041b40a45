//! A merchant's callback endpoint for tests: it records every request and
//! answers each attempt as the test scripted it (a status, silence until
//! the caller times out, or a dropped connection).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;

/// How the receiver answers one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Status(u16),
    /// Says nothing for this long (the caller's timeout should fire).
    Silence(Duration),
    /// Closes the connection without an answer.
    Hangup,
    /// Says nothing until the test calls `release`, then answers 200: an
    /// attempt held in flight for as long as the test needs.
    Hold,
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The receiver's own clock when the request arrived.
    pub at: std::time::Instant,
    /// The receiver's wall clock when the request arrived, in Unix seconds:
    /// what a merchant checks `X-Timestamp` against.
    pub wall_unix: i64,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Answer>,
    otherwise: Option<Answer>,
    /// Answers for requests whose JSON body's `email` (else `tenant_id`) is the key, before
    /// 200: one receiver shared by scenarios running at once (the platform
    /// address is one per service) answers each scenario as it scripted.
    keyed: std::collections::HashMap<String, VecDeque<Answer>>,
    received: Vec<Received>,
}

/// What a platform event is keyed by: an invitation's `email`, else the
/// `tenant_id` it concerns (a billing statement's merchant).
fn key_of(body: &str) -> Option<String> {
    let doc = serde_json::from_str::<serde_json::Value>(body).ok()?;
    doc.get("email")
        .or_else(|| doc.get("tenant_id"))?
        .as_str()
        .map(str::to_string)
}

/// A listener on `host`: on the next free port of `ports`, or any free one.
async fn bind(host: &str, ports: Option<(u16, u16)>) -> std::io::Result<TcpListener> {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let Some((first, last)) = ports else {
        return TcpListener::bind((host, 0)).await;
    };
    let span = u32::from(last - first) + 1;
    for _ in 0..span {
        let offset = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let port = first + u16::try_from(u32::from(offset) % span).unwrap_or(0);
        if let Ok(listener) = TcpListener::bind((host, port)).await {
            return Ok(listener);
        }
    }
    Err(std::io::Error::other(format!(
        "no free receiver port in {first}-{last} on {host}: widen the range"
    )))
}

#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    state: Arc<Mutex<State>>,
    arrived: Arc<Notify>,
    released: Arc<tokio::sync::watch::Sender<bool>>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").field("url", &self.url).finish()
    }
}

impl Receiver {
    /// Listens on a free local port over plain http; answers 200 unless
    /// scripted.
    pub async fn start() -> std::io::Result<Receiver> {
        Receiver::listen(None).await
    }

    /// The same over https, as `https://localhost:PORT/callback`, with the
    /// certificate the acceptor serves.
    pub async fn start_tls(tls: TlsAcceptor) -> std::io::Result<Receiver> {
        Receiver::listen(Some(tls)).await
    }

    /// The platform's receiver: on `port` when the service under test was
    /// configured with it (a remote run), else on a free one.
    pub async fn start_platform(
        tls: Option<TlsAcceptor>,
        port: Option<u16>,
    ) -> std::io::Result<Receiver> {
        Receiver::listen_on(tls, port.map(|p| (p, p))).await
    }

    async fn listen(tls: Option<TlsAcceptor>) -> std::io::Result<Receiver> {
        let settings = crate::settings::current().map_err(std::io::Error::other)?;
        Receiver::listen_on(tls, settings.receiver_ports).await
    }

    async fn listen_on(
        tls: Option<TlsAcceptor>,
        ports: Option<(u16, u16)>,
    ) -> std::io::Result<Receiver> {
        // A deployment elsewhere reaches the suite at the address and name
        // QA configured; a local one at the loopback address.
        let settings = crate::settings::current().map_err(std::io::Error::other)?;
        let listener = bind(&settings.receiver_bind, ports).await?;
        let port = listener.local_addr()?.port();
        let host = settings.receiver_host(tls.is_some());
        let url = match tls {
            Some(_) => format!("https://{host}:{port}/callback"),
            None => format!("http://{host}:{port}/callback"),
        };
        let receiver = Receiver {
            url,
            state: Arc::default(),
            arrived: Arc::default(),
            released: Arc::new(tokio::sync::watch::Sender::new(false)),
        };
        let serving = receiver.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let r = serving.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    // A refused handshake is the caller's verdict on our
                    // certificate, not a request: nothing is recorded.
                    let _ = match tls {
                        Some(tls) => match tls.accept(stream).await {
                            Ok(secured) => r.serve(secured).await,
                            Err(_) => Ok(()),
                        },
                        None => r.serve(stream).await,
                    };
                });
            }
        });
        Ok(receiver)
    }

    /// Answers the next requests in this order, then `otherwise` (200 if
    /// never set).
    pub fn script(&self, answers: &[Answer]) {
        if let Ok(mut s) = self.state.lock() {
            s.script.extend(answers.iter().copied());
        }
    }

    /// Answers requests whose body's `email` is `key` in this order, then
    /// 200.
    pub fn script_for(&self, key: &str, answers: &[Answer]) {
        if let Ok(mut s) = self.state.lock() {
            s.keyed
                .entry(key.to_string())
                .or_default()
                .extend(answers.iter().copied());
        }
    }

    /// The requests whose body's `email` is `key`.
    pub fn received_for(&self, key: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| key_of(&r.body).as_deref() == Some(key))
            .collect()
    }

    /// Waits until `count` requests for `key` have arrived, or `limit`
    /// passes; what arrived either way.
    pub async fn wait_for_key(&self, key: &str, count: usize, limit: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.arrived.notified();
            let got = self.received_for(key);
            if got.len() >= count {
                return got;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.received_for(key);
            }
        }
    }

    pub fn otherwise(&self, answer: Answer) {
        if let Ok(mut s) = self.state.lock() {
            s.otherwise = Some(answer);
        }
    }

    /// Lets every held request (and any later one) answer 200.
    pub fn release(&self) {
        self.released.send_replace(true);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state
            .lock()
            .map(|s| s.received.clone())
            .unwrap_or_default()
    }

    /// Waits until `count` requests have arrived, or `limit` passes.
    /// Returns what arrived either way; the caller asserts.
    pub async fn wait_for(&self, count: usize, limit: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.arrived.notified();
            let got = self.received();
            if got.len() >= count {
                return got;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.received();
            }
        }
    }

    async fn serve<S: AsyncRead + AsyncWrite + Unpin>(&self, mut stream: S) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let header_end = loop {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
        let mut lines = head.split("\r\n");
        let mut request_line = lines.next().unwrap_or_default().split(' ');
        let method = request_line.next().unwrap_or_default().to_string();
        let path = request_line.next().unwrap_or_default().to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < header_end + length {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let end = buf.len().min(header_end + length);
        let body = String::from_utf8_lossy(&buf[header_end..end]).to_string();
        let answer = {
            let mut s = self
                .state
                .lock()
                .map_err(|_| std::io::Error::other("receiver state poisoned"))?;
            s.received.push(Received {
                method,
                path,
                headers,
                body,
                at: std::time::Instant::now(),
                wall_unix: chrono::Utc::now().timestamp(),
            });
            let key = s.received.last().and_then(|r| key_of(&r.body));
            match key.and_then(|k| s.keyed.get_mut(&k)) {
                Some(keyed) => keyed.pop_front().unwrap_or(Answer::Status(200)),
                None => {
                    let next = s.script.pop_front();
                    next.or(s.otherwise).unwrap_or(Answer::Status(200))
                }
            }
        };
        self.arrived.notify_waiters();
        let answer = match answer {
            Answer::Hold => {
                let mut released = self.released.subscribe();
                if released.wait_for(|r| *r).await.is_err() {
                    return Ok(());
                }
                Answer::Status(200)
            }
            other => other,
        };
        match answer {
            Answer::Hold => Ok(()),
            Answer::Status(code) => {
                let reply = format!(
                    "HTTP/1.1 {code} Scripted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                stream.write_all(reply.as_bytes()).await?;
                stream.shutdown().await
            }
            Answer::Silence(d) => {
                tokio::time::sleep(d).await;
                Ok(())
            }
            Answer::Hangup => Ok(()),
        }
    }
}
