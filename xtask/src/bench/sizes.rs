//! The same service on tables a year old: seeded to each size in turn
//! (deposit orders; a fifth as many withdrawals; as many delivery records
//! and attempts as orders), spread over 100 merchants and 90 days with a
//! realistic mix of statuses, then create, query by merchant order number,
//! balance and claim-and-deliver measured at each size, and the plans of
//! the claim and the two queries at the largest.

use super::delivery::{self, Drain};
use super::{load_merchant, output, psql, step, Bench, Options, PG};
use anyhow::{bail, Result};
use serde_json::Value;
use std::process::Command;
use std::time::Instant;

/// Query plans by what they are of, `EXPLAIN (ANALYZE, BUFFERS)` output.
pub type Plans = Vec<(String, String)>;

/// Deliveries drained at each size.
pub const DRAIN: usize = 2_000;

/// How much work the load and the drains add per size, on top of the seed.
pub struct AtSize {
    pub orders: u64,
    pub seed_seconds: f64,
    pub create: Value,
    pub query: Value,
    pub balance: Value,
    pub drain: Drain,
    /// The claim query's own execution time (EXPLAIN ANALYZE), ms.
    pub claim_ms: f64,
    /// Peak memory (VmHWM) of the service under the load at this size.
    /// The drain's service is another process: its peak is `drain`'s.
    pub load_peak_kib: u64,
}

impl AtSize {
    /// The higher peak of this size's two services, KiB.
    pub fn peak_kib(&self) -> u64 {
        self.load_peak_kib.max(self.drain.peak_kib)
    }
}

pub fn run(bench: &Bench, database: &str, options: &Options) -> Result<(Vec<AtSize>, Plans)> {
    let service = bench.start(database, "sandbox", false)?;
    let key = bench.merchant(&service)?;
    drop(service);
    let merchant = load_merchant(database)?;
    seed_merchants(database, &merchant)?;

    let mut sizes = options.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let mut seeded = 0u64;
    let mut results = Vec::new();
    let mut explain = Vec::new();
    for (i, size) in sizes.iter().copied().enumerate() {
        let started = Instant::now();
        seed(database, seeded, size)?;
        seeded = size;
        let seed_seconds = started.elapsed().as_secs_f64();

        let service = bench.start_with(database, "sandbox", false, super::config::QUIET_JOBS)?;
        let at = |endpoint: &str, label: &str| {
            step(&format!(
                "{size} orders: {label}, 16 clients for {} s",
                bench.seconds
            ));
            bench.load_with(
                &service,
                &key,
                endpoint,
                16,
                &[("LOADGEN_SEEDED_ORDERS", size.to_string())],
            )
        };
        let create = at("create", "create-deposit")?;
        let query = at(
            "query-seeded",
            "query by merchant_order_no (seeded orders, at random)",
        )?;
        let balance = at("balance", "balance")?;
        let load_peak_kib = super::peak_memory_kib(service.pid())?;
        drop(service);

        step(&format!(
            "{size} orders: claim and deliver {DRAIN} due callbacks"
        ));
        let port = delivery::fill(bench, database, &key, DRAIN)?;
        let plan = explain_claim(database)?;
        let claim_ms = execution_ms(&plan);
        let drain = delivery::drain(bench, database, DRAIN, port)?;
        println!(
            "bench:   claim query {claim_ms:.2} ms; drained {DRAIN} at {:.0}/s",
            drain.per_second()
        );
        if i + 1 == sizes.len() {
            explain.push(("the claim (64 of the due deliveries)".to_string(), plan));
            explain.push((
                "query by merchant_order_no".to_string(),
                explain_analyze(
                    database,
                    &format!(
                        "SELECT * FROM deposit_orders WHERE merchant_id = '{merchant}' \
                         AND merchant_order_no = 'S{}' LIMIT 1",
                        (size / 200).max(1) * 100
                    ),
                )?,
            ));
            explain.push((
                "balance".to_string(),
                explain_analyze(
                    database,
                    &format!(
                        "SELECT * FROM balances WHERE merchant_id = '{merchant}' ORDER BY currency"
                    ),
                )?,
            ));
        }
        results.push(AtSize {
            orders: size,
            seed_seconds,
            create,
            query,
            balance,
            drain,
            claim_ms,
            load_peak_kib,
        });
    }
    Ok((results, explain))
}

/// 99 merchants beside the load's own, each with its balance rows (zero:
/// the seed writes no ledger, and balances change only through it);
/// orders go to all 100 in turn, the load's merchant first (order
/// `S<multiple of 100>` is its).
fn seed_merchants(database: &str, merchant: &str) -> Result<()> {
    psql(
        database,
        &format!(
            "INSERT INTO merchants (id, code, name, status, callback_timeout_seconds, created_at, updated_at) \
             SELECT 'seed-merchant-' || m, 'seed' || m, 'Seeded merchant ' || m, 'active', 10, \
               floor(extract(epoch from now()))::bigint - 200 * 86400, floor(extract(epoch from now()))::bigint \
             FROM generate_series(1, 99) AS m;
             CREATE TABLE bench_seed_merchants (k int PRIMARY KEY, id text NOT NULL);
             INSERT INTO bench_seed_merchants VALUES (0, '{merchant}');
             INSERT INTO bench_seed_merchants SELECT m, 'seed-merchant-' || m FROM generate_series(1, 99) AS m;
             INSERT INTO balances (id, merchant_id, currency, available, frozen, version, created_at, updated_at) \
             SELECT 'seed-balance-' || m || '-' || c, 'seed-merchant-' || m, c, 0, 0, 0, \
               floor(extract(epoch from now()))::bigint - 200 * 86400, floor(extract(epoch from now()))::bigint \
             FROM generate_series(1, 99) AS m, unnest(ARRAY['THB', 'USD']) AS c;"
        ),
    )
}

/// Orders `from + 1 ..= to`, their withdrawals (a fifth as many), one
/// callback delivery and one attempt per order. Times spread over the last
/// 90 days; pending orders are recent (older ones would have expired) and
/// the deliveries still waiting are due tomorrow, so nothing seeded is
/// worked on while the load runs.
fn seed(database: &str, from: u64, to: u64) -> Result<()> {
    if to <= from {
        bail!("sizes only grow: {from} then {to}");
    }
    let started = Instant::now();
    let now = "floor(extract(epoch from now()))::bigint";
    let orders = format!(
        "WITH s AS (
           SELECT i, m.id AS merchant_id,
             CASE WHEN i % 1000 < 850 THEN 'completed' WHEN i % 1000 < 960 THEN 'expired'
                  WHEN i % 1000 < 990 THEN 'cancelled' ELSE 'pending' END AS status,
             CASE WHEN i % 1000 < 990 THEN {now} - 3600 - (hashint4(i::int)::bigint & 2147483647) % (90 * 86400)
                  ELSE {now} - (hashint4(i::int)::bigint & 2147483647) % 600 END AS t,
             (100 + i % 9000) * 10000 AS amount
           FROM generate_series({from} + 1, {to}) AS i
           JOIN bench_seed_merchants m ON m.k = i % 100)
         INSERT INTO deposit_orders (id, order_no, merchant_id, merchant_order_no, request_fingerprint,
           order_type, route, status, currency, requested_amount, amount, fee, actual_amount,
           channel_id, channel_order_no, payment_url, payment_snapshot, callback_url, callback_status,
           callback_count, user_id, expire_at, completed_at, created_at, updated_at)
         SELECT 'seed-d-' || i, 'D' || to_char(to_timestamp(t), 'YYYYMMDD') || upper(substr(md5(i::text), 1, 12)),
           merchant_id, 'S' || i, md5('S' || i), 'direct', 'channel', status, 'THB', amount, amount,
           amount / 200, CASE WHEN status = 'completed' THEN amount ELSE 0 END,
           'seed-channel', 'CH' || i, 'https://pay.example/checkout/' || md5(i::text),
           '{{\"payment_url\":\"https://pay.example/checkout\"}}',
           'https://merchant-' || (i % 100) || '.example/callbacks/payments',
           CASE WHEN status = 'pending' THEN 'none' ELSE 'success' END,
           CASE WHEN status = 'pending' THEN 0 ELSE 1 END, 'user-' || (i % 5000),
           t + 1800, CASE WHEN status = 'completed' THEN t + 300 END, t, t + 300
         FROM s"
    );
    let withdrawals = format!(
        "WITH s AS (
           SELECT i, m.id AS merchant_id,
             CASE WHEN i % 100 < 90 THEN 'completed' WHEN i % 100 < 95 THEN 'rejected'
                  WHEN i % 100 < 98 THEN 'failed' ELSE 'pending' END AS status,
             {now} - 3600 - (hashint4(-i::int)::bigint & 2147483647) % (90 * 86400) AS t,
             (500 + i % 50000) * 10000 AS amount
           FROM generate_series({from} / 5 + 1, {to} / 5) AS i
           JOIN bench_seed_merchants m ON m.k = i % 100)
         INSERT INTO withdrawal_orders (id, order_no, merchant_id, merchant_order_no, request_fingerprint,
           status, currency, amount, fee, actual_amount, beneficiary_name, beneficiary_account,
           beneficiary_bank_code, payout_method, is_auto_approved, approved_at, completed_at,
           callback_url, callback_status, callback_count, needs_manual_intervention, created_at, updated_at)
         SELECT 'seed-w-' || i, 'W' || to_char(to_timestamp(t), 'YYYYMMDD') || upper(substr(md5('w' || i), 1, 12)),
           merchant_id, 'SW' || i, md5('SW' || i), status, 'THB', amount, amount / 100,
           amount - amount / 100, 'Beneficiary ' || i, lpad((i * 7919 % 10000000000)::text, 10, '0'),
           'KBANK', 'bank_transfer', i % 3 = 0, CASE WHEN status <> 'pending' THEN t + 60 END,
           CASE WHEN status = 'completed' THEN t + 900 END,
           'https://merchant-' || (i % 100) || '.example/callbacks/payments',
           CASE WHEN status = 'pending' THEN 'none' ELSE 'success' END,
           CASE WHEN status = 'pending' THEN 0 ELSE 1 END, false, t, t + 900
         FROM s"
    );
    let deliveries = format!(
        "INSERT INTO callback_deliveries (id, merchant_id, order_kind, order_no, event, callback_url,
           body, status, attempts, next_attempt_at, created_at, updated_at, signature)
         SELECT 'seed-cb-' || d.id, d.merchant_id, 'deposit', d.order_no,
           'deposit.' || CASE d.status WHEN 'pending' THEN 'matched' ELSE d.status END,
           d.callback_url,
           json_build_object('event', 'deposit.' || d.status, 'order_no', d.order_no,
             'merchant_order_no', d.merchant_order_no, 'status', d.status, 'currency_code', 'THB',
             'amount', (d.amount / 10000)::text || '.0000', 'fee', (d.fee / 10000.0)::text,
             'actual_amount', (d.actual_amount / 10000)::text || '.0000',
             'timestamp', d.updated_at)::text,
           CASE WHEN i % 1000 < 970 THEN 'SUCCESS' WHEN i % 1000 < 999 THEN 'FAILED' ELSE 'WAITING_RETRY' END,
           CASE WHEN i % 1000 < 970 THEN 1 WHEN i % 1000 < 999 THEN 5 ELSE 2 END,
           CASE WHEN i % 1000 = 999 THEN {now} + 86400 END,
           d.updated_at, d.updated_at + 2, md5('sig' || i) || md5('sig' || i)
         FROM generate_series({from} + 1, {to}) AS i
         JOIN deposit_orders d ON d.id = 'seed-d-' || i"
    );
    let attempts = format!(
        "INSERT INTO callback_attempts (id, delivery_id, attempt, scheduled_at, started_at,
           duration_ms, status_code, error, outcome, next_attempt_at)
         SELECT 'seed-at-' || c.id, c.id, c.attempts, c.created_at, c.updated_at - 1,
           40 + (hashint4(c.created_at::int) & 255),
           CASE c.status WHEN 'SUCCESS' THEN 200 ELSE 503 END, NULL,
           CASE c.status WHEN 'SUCCESS' THEN 'success' WHEN 'FAILED' THEN 'failed' ELSE 'retry' END,
           c.next_attempt_at
         FROM generate_series({from} + 1, {to}) AS i
         JOIN callback_deliveries c ON c.id = 'seed-cb-seed-d-' || i"
    );
    for (what, sql) in [
        ("deposit orders", orders),
        ("withdrawals", withdrawals),
        ("callback deliveries", deliveries),
        ("callback attempts", attempts),
    ] {
        step(&format!(
            "seeding {what} up to {to} orders ({:.0} s so far)",
            started.elapsed().as_secs_f64()
        ));
        psql(database, &sql)?;
    }
    step("VACUUM ANALYZE, as autovacuum would have by now on a year-old table");
    psql(database, "VACUUM ANALYZE")?;
    step(&format!(
        "seeded to {to} orders in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// The worker's claim as the service sends it (`now`, 64, this instance),
/// analysed inside a transaction that is rolled back.
fn explain_claim(database: &str) -> Result<String> {
    explain_analyze(
        database,
        "UPDATE callback_deliveries SET status = 'SENDING', \
         updated_at = floor(extract(epoch from now()))::bigint, \
         claim_token = 'bench' || ':' || md5(random()::text || clock_timestamp()::text) \
         WHERE id IN (SELECT id FROM callback_deliveries \
         WHERE status = 'WAITING_RETRY' AND next_attempt_at <= floor(extract(epoch from now()))::bigint \
         ORDER BY next_attempt_at LIMIT 64 FOR UPDATE SKIP LOCKED) RETURNING *",
    )
}

/// The plan and its timings; anything `sql` changes is rolled back.
fn explain_analyze(database: &str, sql: &str) -> Result<String> {
    Ok(output(Command::new("psql").args([
        &format!("{PG}/{database}"),
        "-qtA",
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
        "BEGIN",
        "-c",
        &format!("EXPLAIN (ANALYZE, BUFFERS) {sql}"),
        "-c",
        "ROLLBACK",
    ]))?
    .trim_end()
    .to_string())
}

fn execution_ms(plan: &str) -> f64 {
    plan.lines()
        .find_map(|l| l.trim().strip_prefix("Execution Time: "))
        .and_then(|t| t.trim_end_matches(" ms").parse().ok())
        .unwrap_or(0.0)
}
