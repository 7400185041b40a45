//! The load side of `cargo xtask bench --only abuse` (issue 55), run as its
//! own process beside a release-built service:
//!
//!     abuse_bench flood <base> <crowd-key> <api-key> <connections> <rate> <seconds>
//!         a merchant's steady creates at `rate` a second for `seconds`
//!         alone; then the same again while `connections` connections,
//!         opened at once from 127.0.0.4 (`CROWD_ADDRESS`), each send one
//!         create signed by another merchant (`crowd-key`).
//!     abuse_bench sign-ins <base> <api-key> <attempts> <rate> <seconds> <email> <password>
//!         the same steady creates alone and then beside `attempts`
//!         concurrent console sign-ins with wrong passwords (unknown
//!         emails, from 127.0.0.4); meanwhile the operator `email` signs in
//!         from 127.0.0.2 with the right password, as a person would: once,
//!         and again after `Retry-After` when told to wait.
//!     abuse_bench steady <base> <api-key> <rate> <seconds> <tag>
//!         the steady creates alone, printing their figures: the two above
//!         run it as a process of its own, so that its requests are not
//!         queued behind the crowd's thousands of tasks in one runtime
//!         (which measured the load generator, not the service).
//!     abuse_bench crowd-creates <base> <crowd-key> <connections>
//!     abuse_bench crowd-sign-ins <login-url> <attempts>
//!         the crowds of the first two, each a process of its own run at
//!         nice 19 (`CROWD_NICE`), printing `sending` as they send.
//!     abuse_bench hold <port>
//!         a callback receiver that reads each request and never answers:
//!         the caller's timeout ends every attempt.
//!
//! The first two print one JSON line last.

mod support;

use anyhow::{bail, Context, Result};
use merchant_client::merchant as m_client;
use merchant_client::Credentials;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::quantile_ms;
use tokio::io::AsyncReadExt;

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["flood", base, crowd, key, n, rate, seconds] => {
            let (n, rate, seconds) = (n.parse()?, rate.parse()?, seconds.parse()?);
            flood(base, crowd, key, n, rate, seconds).await
        }
        ["sign-ins", base, key, n, rate, seconds, email, password] => {
            sign_ins(
                base,
                key,
                n.parse()?,
                rate.parse()?,
                seconds.parse()?,
                email,
                password,
            )
            .await
        }
        ["steady", base, key, rate, seconds, tag] => {
            let tally = steady(merchant(base, key)?, rate.parse()?, seconds.parse()?, tag).await;
            println!("{}", tally.figures());
            Ok(())
        }
        ["crowd-creates", base, crowd_key, n] => crowd_creates(base, crowd_key, n.parse()?).await,
        ["crowd-sign-ins", login, n] => crowd_sign_ins(login, n.parse()?).await,
        ["hold", port] => hold(port.parse()?).await,
        _ => bail!(
            "usage: abuse_bench flood <base> <crowd-key> <api-key> <connections> <rate> <seconds> \
             | sign-ins <base> <api-key> <attempts> <rate> <seconds> <email> <password> \
             | steady <base> <api-key> <rate> <seconds> <tag> \
             | crowd-creates <base> <crowd-key> <connections> | crowd-sign-ins <login-url> <attempts> \
             | hold <port>"
        ),
    }
}

/// A merchant client on a connection pool of its own.
fn merchant(base: &str, key: &str) -> Result<m_client::Client> {
    merchant_from(base, key, reqwest::Client::builder())
}

/// The same, on connections `builder` makes.
fn merchant_from(
    base: &str,
    key: &str,
    builder: reqwest::ClientBuilder,
) -> Result<m_client::Client> {
    let client = builder.timeout(Duration::from_secs(60)).build()?;
    Ok(m_client::Client::new_with_client(
        base,
        client,
        Credentials::new(key.to_string()),
    ))
}

/// Latencies (microseconds) and answers by kind.
#[derive(Default)]
struct Tally {
    micros: Vec<u32>,
    kinds: BTreeMap<String, u64>,
}

impl Tally {
    /// Every answer of `sent`, as each task finishes.
    async fn of(mut sent: tokio::task::JoinSet<(Duration, String)>) -> Tally {
        let mut tally = Tally::default();
        while let Some(done) = sent.join_next().await {
            if let Ok((took, kind)) = done {
                tally.add(took, kind);
            }
        }
        tally
    }

    fn add(&mut self, took: Duration, kind: String) {
        self.micros
            .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
        *self.kinds.entry(kind).or_default() += 1;
    }

    fn figures(mut self) -> Value {
        self.micros.sort_unstable();
        json!({
            "requests": self.micros.len(),
            "p50_ms": quantile_ms(&self.micros, 0.5),
            "p99_ms": quantile_ms(&self.micros, 0.99),
            "max_ms": quantile_ms(&self.micros, 1.0),
            "answers": self.kinds,
        })
    }
}

/// What an answer was: its status, or how the request failed.
fn kind_of<T, E>(result: &Result<T, m_client::Error<E>>) -> String {
    match result {
        Ok(_) => "2xx".into(),
        Err(e) => match e.status() {
            Some(status) => status.as_u16().to_string(),
            None => match e {
                m_client::Error::CommunicationError(e) => no_answer(e),
                _ => "no answer".into(),
            },
        },
    }
}

/// Why a request got no answer: it never connected, it ran out of time, or
/// the connection broke under it.
fn no_answer(e: &reqwest::Error) -> String {
    let why = if e.is_connect() {
        "connect"
    } else if e.is_timeout() {
        "timeout"
    } else {
        "broken"
    };
    format!("no answer ({why})")
}

/// A load run as a process of its own (this program with other
/// arguments): its figures, the JSON line it prints last.
struct LoadProcess {
    child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

/// How much nicer than the service and the steady load a crowd's process
/// runs. On this bench's two shared cores, a crowd's own client (thousands
/// of connections opened, written and read at once) otherwise takes CPU
/// the service and the steady load would have, and the ratio measured the
/// load generator; a real crowd's clients run on machines of their own.
/// The service still meets every request the crowd sends.
const CROWD_NICE: &str = "19";

/// Where a crowd comes from: a host of its own, as a runaway client or a
/// script is, and not the steady merchant's (127.0.0.1), so the service's
/// bound on connections per address (`connections_per_address`) meets it
/// as it would a real one.
const CROWD_ADDRESS: &str = "127.0.0.4";

impl LoadProcess {
    /// `abuse_bench <args>`, at `nice` more than this process when given.
    fn start(nice: Option<&str>, args: &[&str]) -> Result<LoadProcess> {
        let me = std::env::current_exe()?;
        let mut command = match nice {
            Some(n) => {
                let mut c = tokio::process::Command::new("nice");
                c.args(["-n", n]).arg(me);
                c
            }
            None => tokio::process::Command::new(me),
        };
        let mut child = command
            .args(args)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting the load `{}`", args[0]))?;
        let stdout = child.stdout.take().context("the load's output")?;
        let lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        Ok(LoadProcess { child, lines })
    }

    /// Waits for the crowd to send: its line `sending`.
    async fn sending(&mut self) -> Result<()> {
        while let Some(line) = self.lines.next_line().await? {
            if line == "sending" {
                return Ok(());
            }
        }
        bail!("the crowd ended before it sent")
    }

    async fn figures(mut self) -> Result<Value> {
        let mut last = None;
        while let Some(line) = self.lines.next_line().await? {
            last = Some(line);
        }
        let status = self.child.wait().await?;
        if !status.success() {
            bail!("a load's process failed: {status}");
        }
        let last = last.context("the load printed nothing")?;
        Ok(serde_json::from_str(&last)?)
    }
}

/// The steady creates as a process of their own (`abuse_bench steady`).
fn steady_process(
    base: &str,
    key: &str,
    rate: u32,
    seconds: u64,
    tag: &str,
) -> Result<LoadProcess> {
    LoadProcess::start(
        None,
        &[
            "steady",
            base,
            key,
            &rate.to_string(),
            &seconds.to_string(),
            tag,
        ],
    )
}

/// Creates at `rate` a second for `seconds`, each sent on its tick
/// whatever the ones before are doing (an open loop: a slow answer does
/// not slow the arrivals).
async fn steady(client: m_client::Client, rate: u32, seconds: u64, tag: &str) -> Tally {
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate)));
    let run = std::process::id();
    // A second of the same creates first, not counted: the connections,
    // the key's lookup and the database's pages are warm before anything
    // is timed, so "alone" is the service's own pace and not a cold start.
    let warming = paced(
        &client,
        &mut tick,
        u64::from(rate),
        &format!("W{run}-{tag}"),
    )
    .await;
    warming.join_all().await;
    tick.reset();
    let n = u64::from(rate) * seconds;
    Tally::of(paced(&client, &mut tick, n, &format!("S{run}-{tag}")).await).await
}

/// `count` creates, one on each of `tick`'s ticks, numbered `prefix-i`:
/// each answer's time and kind, as they come.
async fn paced(
    client: &m_client::Client,
    tick: &mut tokio::time::Interval,
    count: u64,
    prefix: &str,
) -> tokio::task::JoinSet<(Duration, String)> {
    let mut sent = tokio::task::JoinSet::new();
    for i in 0..count {
        tick.tick().await;
        let client = client.clone();
        let no = format!("{prefix}-{i}");
        sent.spawn(async move {
            let started = Instant::now();
            let made = client
                .create_deposit(&conformance::requests::deposit(&no, "100", "THB"))
                .await;
            (started.elapsed(), kind_of(&made))
        });
    }
    sent
}

/// The steady creates alone once more, after the crowd: a run alone on
/// this shared machine has tails of its own (the database's flushes, the
/// service's passes), so the ratio is taken against the quieter of the two
/// runs alone, the one that flatters the crowd's effect least.
async fn alone_again(base: &str, key: &str, rate: u32, seconds: u64) -> Result<Value> {
    eprintln!("abuse_bench: {rate} creates/s for {seconds} s alone again");
    steady_process(base, key, rate, seconds, "after")?
        .figures()
        .await
}

/// The steady creates alone, then beside a crowd (`crowd`: this program's
/// arguments, run at `CROWD_NICE`), then alone again; `during` runs once
/// the crowd sends, and its figures, if any, are kept under `during_key`.
async fn around_a_crowd<Fut>(
    (base, key, rate, seconds): (&str, &str, u32, u64),
    crowd: &[&str],
    during_key: &str,
    during: impl FnOnce() -> Fut,
) -> Result<Value>
where
    Fut: std::future::Future<Output = Result<Option<Value>>>,
{
    eprintln!("abuse_bench: {rate} creates/s for {seconds} s alone");
    let alone = steady_process(base, key, rate, seconds, "alone")?
        .figures()
        .await?;
    let beside = steady_process(base, key, rate, seconds, "beside")?;
    // Past the steady load's warming second (and its process's start), so
    // the crowd meets timed requests.
    tokio::time::sleep(Duration::from_secs(2)).await;
    eprintln!("abuse_bench: the crowd ({})", crowd.join(" "));
    let mut crowd = LoadProcess::start(Some(CROWD_NICE), crowd)?;
    crowd.sending().await?;
    let meanwhile = during().await?;
    let tally = crowd.figures().await?;
    let beside = beside.figures().await?;
    let alone_after = alone_again(base, key, rate, seconds).await?;
    let mut figures = json!({
        "alone": alone,
        "alone_after": alone_after,
        "beside": beside,
        "crowd": tally,
    });
    if let Some(v) = meanwhile {
        figures[during_key] = v;
    }
    Ok(figures)
}

async fn flood(
    base: &str,
    crowd_key: &str,
    key: &str,
    n: usize,
    rate: u32,
    seconds: u64,
) -> Result<()> {
    let figures = around_a_crowd(
        (base, key, rate, seconds),
        &["crowd-creates", base, crowd_key, &n.to_string()],
        "",
        || async { Ok(None) },
    )
    .await?;
    println!("{figures}");
    Ok(())
}

/// `n` connections opened together, each sending one create signed with
/// `crowd_key`: prints `sending` as they go, then their figures.
async fn crowd_creates(base: &str, crowd_key: &str, n: usize) -> Result<()> {
    // Its own pool, so each request opens a connection of its own (none is
    // idle while all are in flight).
    let crowd = merchant_from(
        base,
        crowd_key,
        reqwest::Client::builder().local_address(Some(CROWD_ADDRESS.parse()?)),
    )?;
    let go = Arc::new(tokio::sync::Barrier::new(n + 1));
    let run = std::process::id();
    let mut burst = tokio::task::JoinSet::new();
    for i in 0..n {
        let (crowd, go) = (crowd.clone(), go.clone());
        let no = format!("F{run}-{i}");
        burst.spawn(async move {
            go.wait().await;
            let started = Instant::now();
            let made = crowd
                .create_deposit(&conformance::requests::deposit(&no, "100", "THB"))
                .await;
            (started.elapsed(), kind_of(&made))
        });
    }
    go.wait().await;
    println!("sending");
    println!("{}", Tally::of(burst).await.figures());
    Ok(())
}

async fn sign_ins(
    base: &str,
    key: &str,
    n: usize,
    rate: u32,
    seconds: u64,
    email: &str,
    password: &str,
) -> Result<()> {
    let login = format!("{base}/console/login");
    let figures = around_a_crowd(
        (base, key, rate, seconds),
        &["crowd-sign-ins", &login, &n.to_string()],
        "operator",
        || async {
            // The operator, a moment into the crowd, from an address of
            // their own.
            tokio::time::sleep(Duration::from_millis(200)).await;
            operator_signs_in(&login, email, password).await.map(Some)
        },
    )
    .await?;
    println!("{figures}");
    Ok(())
}

/// `n` console sign-ins at `login`, together, with unknown emails and
/// wrong passwords: prints `sending` as they go, then their figures.
async fn crowd_sign_ins(login: &str, n: usize) -> Result<()> {
    let crowd = reqwest::Client::builder()
        .local_address(Some(CROWD_ADDRESS.parse()?))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()?;
    let go = Arc::new(tokio::sync::Barrier::new(n + 1));
    let mut burst = tokio::task::JoinSet::new();
    for i in 0..n {
        let (crowd, go, login) = (crowd.clone(), go.clone(), login.to_string());
        burst.spawn(async move {
            go.wait().await;
            let started = Instant::now();
            let answered = crowd
                .post(&login)
                .header("content-type", FORM)
                .body(form(&[
                    ("email", &format!("nobody{i}@example.com")),
                    ("password", "not the password at all"),
                ]))
                .send()
                .await;
            let kind = match answered {
                Ok(r) => r.status().as_u16().to_string(),
                Err(e) => no_answer(&e),
            };
            (started.elapsed(), kind)
        });
    }
    go.wait().await;
    println!("sending");
    println!("{}", Tally::of(burst).await.figures());
    Ok(())
}

/// Signs in as a person would: again after `Retry-After` when asked to
/// wait, at most five times. Whether and when it got in.
async fn operator_signs_in(login: &str, email: &str, password: &str) -> Result<Value> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(Some("127.0.0.2".parse()?))
        .timeout(Duration::from_secs(60))
        .build()?;
    let started = Instant::now();
    let mut answers = Vec::new();
    for _ in 0..5 {
        let r = client
            .post(login)
            .header("content-type", FORM)
            .body(form(&[("email", email), ("password", password)]))
            .send()
            .await?;
        let status = r.status().as_u16();
        answers.push(status);
        let signed_in = status == 303 && r.headers().contains_key(reqwest::header::SET_COOKIE);
        if signed_in {
            return Ok(json!({
                "signed_in": true,
                "answers": answers,
                "after_ms": started.elapsed().as_secs_f64() * 1000.0,
            }));
        }
        let wait = r
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        match wait {
            Some(seconds) => tokio::time::sleep(Duration::from_secs(seconds)).await,
            None => break,
        }
    }
    Ok(json!({
        "signed_in": false,
        "answers": answers,
        "after_ms": started.elapsed().as_secs_f64() * 1000.0,
    }))
}

const FORM: &str = "application/x-www-form-urlencoded";

/// A form's fields, encoded as a browser posts them.
fn form(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish()
}

/// Reads whatever comes and never answers.
async fn hold(port: u16) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("abuse_bench: holding every request on {port}");
    let held = Arc::new(AtomicU64::new(0));
    loop {
        let (mut socket, _) = listener.accept().await?;
        held.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
        });
    }
}
