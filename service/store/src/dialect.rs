//! Every statement the store sends as text rather than building it with
//! diesel, in one place: what the two SQL dialects say differently, and
//! the PostgreSQL-only batch writes. None spells a stored value: statuses
//! are bound through the same mapping as every diesel query's
//! (`status_sql`). `raw_statements` lists them all, so a test can
//! snapshot their text and compile each against either backend's schema.

use super::Backend;

/// What the two SQL dialects say differently.
pub(super) trait Dialect {
    /// Statement that gives the current transaction one snapshot, if it
    /// does not have one already.
    const SNAPSHOT: Option<&'static str>;
    /// Statement that locks one merchant row (`$1`: its id), where row
    /// locks exist.
    const LOCK_MERCHANT: Option<&'static str>;
    /// Claims due deliveries (`$1`/`?`: now, then the limit, then the
    /// claimer's name, which prefixes the claim token, then SENDING and
    /// WAITING_RETRY, bound through the same mapping as every diesel
    /// query's).
    const CLAIM_CALLBACKS: &'static str;
    /// Reads a merchant's rate bucket (`$1`: its id), held until the
    /// transaction ends where row locks exist.
    const RATE_BUCKET: &'static str;
    /// Places the oldest unplaced merchant events (`$1`: the last position
    /// handed out, `$2`: how many at most) in the order they were
    /// inserted. Run only under the `event_positions` row's lock.
    const SEQUENCE_EVENTS: &'static str;
    /// Settings for the rest of a sequencing pass's transaction, where the
    /// planner needs them (no binds; sent as one simple statement).
    const SEQUENCE_PLAN: Option<&'static str>;
    /// Settings for the rest of a transaction whose statements are to be
    /// planned once per connection, where prepared statements can be told
    /// so (no binds; sent as one simple statement).
    const PLAN_ONCE: Option<&'static str>;
    /// One merchant's balance lines of one currency between two times
    /// (`$1`: merchant, `$2`: currency, `$3` from inclusive, `$4` to
    /// exclusive), summed per kind.
    const DAY_TOTALS: &'static str;
    /// Tells the other instances' delivery workers, at commit, that
    /// deliveries are due (where instances share a database by network).
    const ANNOUNCE_CALLBACKS: Option<&'static str>;
}

impl Dialect for diesel_async::AsyncPgConnection {
    // READ COMMITTED takes a new snapshot per statement.
    const SNAPSHOT: Option<&'static str> =
        Some("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    // The channel the insert trigger notifies (migration 000009).
    const ANNOUNCE_CALLBACKS: Option<&'static str> =
        Some("SELECT pg_notify('payments_callback_due', '')");
    const LOCK_MERCHANT: Option<&'static str> =
        Some("SELECT id FROM merchants WHERE id = $1 FOR UPDATE");
    // The innermost query locks the oldest due candidates, skipping
    // merchants and receivers with no room ($6, $8: JSON objects of
    // room left, by merchant id and by host); the window above keeps of
    // each merchant and each host no more than its room (or the cap, $7,
    // $9, for those with nothing in flight); the oldest of those, up to
    // $2, are claimed. $10: how many candidates to look at. $11: the
    // status of a merchant whose callbacks are held (suspended).
    const CLAIM_CALLBACKS: &'static str =
        "UPDATE callback_deliveries SET status = $4, updated_at = $1, \
         claim_token = $3 || ':' || md5(random()::text || clock_timestamp()::text) \
         WHERE id IN (SELECT id FROM (SELECT id, next_attempt_at, \
         ROW_NUMBER() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at, id) AS nm, \
         ROW_NUMBER() OVER (PARTITION BY receiver_host ORDER BY next_attempt_at, id) AS nh, \
         COALESCE(($6::json ->> merchant_id)::bigint, $7) AS rm, \
         CASE WHEN receiver_host IS NULL THEN $2 \
         ELSE COALESCE(($8::json ->> receiver_host)::bigint, $9) END AS rh \
         FROM (SELECT id, merchant_id, receiver_host, next_attempt_at FROM callback_deliveries \
         WHERE status = $5 AND next_attempt_at <= $1 \
         AND NOT EXISTS (SELECT 1 FROM merchants AS m \
         WHERE m.id = callback_deliveries.merchant_id AND m.status = $11) \
         AND COALESCE(($6::json ->> merchant_id)::bigint, 1) > 0 \
         AND (receiver_host IS NULL OR COALESCE(($8::json ->> receiver_host)::bigint, 1) > 0) \
         ORDER BY next_attempt_at LIMIT $10 FOR UPDATE SKIP LOCKED) AS c) AS r \
         WHERE nm <= rm AND nh <= rh ORDER BY next_attempt_at LIMIT $2) RETURNING *";
    const RATE_BUCKET: &'static str =
        "SELECT merchant_id, units, at_ms FROM rate_buckets WHERE merchant_id = $1 FOR UPDATE";
    // The unplaced events are found by walking the partial index in
    // order, never by a bitmap scan: every event placed leaves a dead
    // entry there until vacuum, and only an index scan marks those dead
    // as it passes, so that the next pass skips them. A bitmap scan
    // fetched every one of them from the heap on every pass (1,686
    // buffers a pass in the money path bench, a sixth of the database's
    // time), and a hash join read the whole table when its statistics
    // were stale (issue 56).
    const SEQUENCE_PLAN: Option<&'static str> =
        Some("SET LOCAL enable_bitmapscan = off; SET LOCAL enable_hashjoin = off");
    // The delivery worker's claim and its outcomes' statements: prepared,
    // but PostgreSQL planned them again at every run (2,067 claims, 1,759
    // outcome batches, `pg_stat_statements.plans`, issue 56), because a
    // generic plan's estimate for a `LIMIT $n` or an `unnest` of an array
    // parameter is higher than a custom plan's for the values at hand, and
    // it keeps choosing custom plans while that holds. Their plans are the
    // same either way (the claim's and the outcome's index scans), and
    // planning the claim took longer than running it (0.38 ms to 0.33 ms).
    const PLAN_ONCE: Option<&'static str> = Some("SET LOCAL plan_cache_mode = force_generic_plan");
    const SEQUENCE_EVENTS: &'static str = "UPDATE merchant_events SET position = $1 + v.n \
         FROM (SELECT seq, ROW_NUMBER() OVER (ORDER BY seq) AS n FROM merchant_events \
         WHERE position IS NULL ORDER BY seq LIMIT $2) AS v WHERE merchant_events.seq = v.seq";
    const DAY_TOTALS: &'static str = "SELECT kind, COUNT(*) AS count, \
         CAST(SUM(available_change) AS BIGINT) AS available_change, \
         CAST(SUM(frozen_change) AS BIGINT) AS frozen_change, CAST(SUM(fee) AS BIGINT) AS fee \
         FROM balance_transactions WHERE merchant_id = $1 AND currency = $2 \
         AND created_at >= $3 AND created_at < $4 GROUP BY kind ORDER BY kind";
}

impl Dialect for crate::SqliteConn {
    // A SQLite transaction reads one snapshot from its first read on.
    const SNAPSHOT: Option<&'static str> = None;
    // One process per database file: the local bell is enough.
    const ANNOUNCE_CALLBACKS: Option<&'static str> = None;
    // A SQLite write transaction excludes every other writer already.
    const LOCK_MERCHANT: Option<&'static str> = None;
    // As PostgreSQL's, with json_each for the rooms (a key lookup, not a
    // JSON path: hosts have dots and colons).
    const CLAIM_CALLBACKS: &'static str =
        "UPDATE callback_deliveries SET status = ?4, updated_at = ?1, \
         claim_token = ?3 || ':' || lower(hex(randomblob(16))) \
         WHERE id IN (SELECT id FROM (SELECT id, next_attempt_at, \
         ROW_NUMBER() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at, id) AS nm, \
         ROW_NUMBER() OVER (PARTITION BY receiver_host ORDER BY next_attempt_at, id) AS nh, \
         COALESCE((SELECT value FROM json_each(?6) WHERE key = c.merchant_id), ?7) AS rm, \
         CASE WHEN receiver_host IS NULL THEN ?2 \
         ELSE COALESCE((SELECT value FROM json_each(?8) WHERE key = c.receiver_host), ?9) END AS rh \
         FROM (SELECT id, merchant_id, receiver_host, next_attempt_at FROM callback_deliveries AS d \
         WHERE status = ?5 AND next_attempt_at <= ?1 \
         AND NOT EXISTS (SELECT 1 FROM merchants AS m WHERE m.id = d.merchant_id AND m.status = ?11) \
         AND COALESCE((SELECT value FROM json_each(?6) WHERE key = d.merchant_id), 1) > 0 \
         AND (receiver_host IS NULL \
         OR COALESCE((SELECT value FROM json_each(?8) WHERE key = d.receiver_host), 1) > 0) \
         ORDER BY next_attempt_at LIMIT ?10) AS c) AS r \
         WHERE nm <= rm AND nh <= rh ORDER BY next_attempt_at LIMIT ?2) RETURNING *";
    const RATE_BUCKET: &'static str =
        "SELECT merchant_id, units, at_ms FROM rate_buckets WHERE merchant_id = ?1";
    // SQLite's planner walks the partial index as it is.
    const SEQUENCE_PLAN: Option<&'static str> = None;
    const PLAN_ONCE: Option<&'static str> = None;
    const SEQUENCE_EVENTS: &'static str = "UPDATE merchant_events SET position = ?1 + v.n \
         FROM (SELECT seq, ROW_NUMBER() OVER (ORDER BY seq) AS n FROM merchant_events \
         WHERE position IS NULL ORDER BY seq LIMIT ?2) AS v WHERE merchant_events.seq = v.seq";
    const DAY_TOTALS: &'static str = "SELECT kind, COUNT(*) AS count, \
         CAST(SUM(available_change) AS BIGINT) AS available_change, \
         CAST(SUM(frozen_change) AS BIGINT) AS frozen_change, CAST(SUM(fee) AS BIGINT) AS fee \
         FROM balance_transactions WHERE merchant_id = ?1 AND currency = ?2 \
         AND created_at >= ?3 AND created_at < ?4 GROUP BY kind ORDER BY kind";
}

/// The same on both backends.
pub(super) const ACCOUNT_SUMS: &str =
    "SELECT account, currency, CAST(SUM(amount) AS BIGINT) AS total \
     FROM postings GROUP BY account, currency";
pub(super) const UNBALANCED_ENTRIES: &str =
    "SELECT entry_id, CAST(SUM(amount) AS BIGINT) AS total \
     FROM postings GROUP BY entry_id HAVING SUM(amount) <> 0";
/// Each merchant's balance lines per currency, summed.
pub(super) const LINE_SUMS: &str = "SELECT merchant_id, currency, COUNT(*) AS lines, \
     CAST(SUM(available_change) AS BIGINT) AS available, \
     CAST(SUM(frozen_change) AS BIGINT) AS frozen, MAX(version) AS last_version \
     FROM balance_transactions GROUP BY merchant_id, currency";
/// The UTC days on which each balance changed.
pub(super) const LINE_DAYS: &str =
    "SELECT DISTINCT merchant_id, currency, CAST(created_at / 86400 AS BIGINT) AS day \
     FROM balance_transactions ORDER BY merchant_id, currency, day";
/// Balance lines stamped earlier than the line before them.
pub(super) const LINES_BACK_IN_TIME: &str =
    "SELECT CAST(COUNT(*) AS BIGINT) AS n FROM (SELECT created_at, \
     LAG(created_at) OVER (PARTITION BY merchant_id, currency ORDER BY version) AS before \
     FROM balance_transactions) AS t WHERE t.before > t.created_at";
pub(super) const NEWEST_MIGRATION: &str =
    "SELECT MAX(version) AS version FROM __diesel_schema_migrations";

/// PostgreSQL: the channel every instance's delivery worker listens on
/// (the `callback_notify` migration's trigger notifies it).
pub(super) const LISTEN_CALLBACKS_DUE: &str = "LISTEN payments_callback_due";
/// PostgreSQL: the channel every instance hears changes to merchants, API
/// keys and fee rates on (the `merchants_notify` migration's triggers).
pub(super) const LISTEN_MERCHANTS_CHANGED: &str = "LISTEN payments_merchants_changed";
pub(super) const MERCHANTS_CHANGED: &str = "payments_merchants_changed";
/// PostgreSQL: whether a listening connection is still there.
pub(super) const PING: &str = "SELECT 1";

/// PostgreSQL: a claimed batch's outcomes in one statement (`$1`..`$7`,
/// `$9`: the columns as arrays, `$8`: SENDING); returns the positions it
/// kept.
pub(super) const FINISH_DELIVERIES: &str = "UPDATE callback_deliveries AS d SET status = u.status, attempts = u.attempts, \
     next_attempt_at = u.next_attempt_at, signature = u.signature, updated_at = u.updated_at, \
     signing_key_id = u.signing_key_id \
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::int8[], $6::text[], $7::int8[], $9::text[]) \
     WITH ORDINALITY AS u(id, token, status, attempts, next_attempt_at, signature, updated_at, signing_key_id, n) \
     WHERE d.id = u.id AND d.status = $8 AND d.claim_token = u.token RETURNING u.n";

/// PostgreSQL: one balance's waiting credits (`$3`, `$4`: their sums,
/// `$5`: how many, `$6`: the time) and their lines (`$7`..`$13`: the
/// columns as arrays, in order), in one statement: the row moved unless
/// a side would go below zero, and each line written with its version and
/// the balance after it, as `unit::Waited::lines_after` computes them, only
/// if the row moved. Returns the row as moved, or nothing.
pub(super) const CREDIT_WITH_LINES: &str = "WITH b AS (UPDATE balances SET \
     available = available + $3, frozen = frozen + $4, version = version + $5, \
     updated_at = CASE WHEN updated_at > $6 THEN updated_at ELSE $6 END \
     WHERE merchant_id = $1 AND currency = $2 AND available + $3 >= 0 AND frozen + $4 >= 0 \
     RETURNING id, merchant_id, currency, available, frozen, version, created_at, updated_at), \
     u AS (SELECT u.*, sum(u.available_change) OVER (ORDER BY u.n) AS available_sum, \
     sum(u.frozen_change) OVER (ORDER BY u.n) AS frozen_sum \
     FROM unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::int8[], $12::int8[], $13::int8[]) \
     WITH ORDINALITY AS u(id, kind, order_no, merchant_order_no, available_change, frozen_change, fee, n)), \
     lines AS (INSERT INTO balance_transactions (id, merchant_id, currency, version, kind, order_no, \
     merchant_order_no, available_change, frozen_change, fee, available_after, frozen_after, created_at) \
     SELECT u.id, b.merchant_id, b.currency, b.version - $5 + u.n, u.kind, u.order_no, \
     u.merchant_order_no, u.available_change, u.frozen_change, u.fee, \
     b.available - $3 + u.available_sum::int8, b.frozen - $4 + u.frozen_sum::int8, b.updated_at \
     FROM b, u) \
     SELECT * FROM b";

/// PostgreSQL: each order's callback summary for a batch, one statement
/// per order table (`$1`..`$4`: order numbers, statuses, counts, times).
pub(super) fn note_orders(table: &str) -> String {
    format!(
        "UPDATE {table} AS o SET callback_status = u.status, \
         callback_count = o.callback_count + u.n, updated_at = u.now \
         FROM unnest($1::text[], $2::text[], $3::int4[], $4::int8[]) AS u(order_no, status, n, now) \
         WHERE o.order_no = u.order_no"
    )
}

/// What a raw statement is, for checking it: a query can be compiled
/// without running it (`PREPARE`, `EXPLAIN`); a utility statement cannot,
/// and is run inside a transaction that is rolled back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawKind {
    Query,
    Utility,
}

/// One statement the store sends as text.
#[derive(Clone, Debug)]
pub struct RawStatement {
    pub name: &'static str,
    pub kind: RawKind,
    pub sql: String,
}

/// Every raw statement the store sends to `backend`, in a fixed order.
pub fn raw_statements(backend: Backend) -> Vec<RawStatement> {
    fn of<D: Dialect>() -> Vec<(&'static str, RawKind, String)> {
        let mut all = vec![
            (
                "claim_callbacks",
                RawKind::Query,
                D::CLAIM_CALLBACKS.to_string(),
            ),
            ("rate_bucket", RawKind::Query, D::RATE_BUCKET.to_string()),
            (
                "sequence_events",
                RawKind::Query,
                D::SEQUENCE_EVENTS.to_string(),
            ),
            ("day_totals", RawKind::Query, D::DAY_TOTALS.to_string()),
            ("account_sums", RawKind::Query, ACCOUNT_SUMS.to_string()),
            (
                "unbalanced_entries",
                RawKind::Query,
                UNBALANCED_ENTRIES.to_string(),
            ),
            ("line_sums", RawKind::Query, LINE_SUMS.to_string()),
            ("line_days", RawKind::Query, LINE_DAYS.to_string()),
            (
                "lines_back_in_time",
                RawKind::Query,
                LINES_BACK_IN_TIME.to_string(),
            ),
            (
                "newest_migration",
                RawKind::Query,
                NEWEST_MIGRATION.to_string(),
            ),
        ];
        if let Some(sql) = D::LOCK_MERCHANT {
            all.push(("lock_merchant", RawKind::Query, sql.to_string()));
        }
        if let Some(sql) = D::SNAPSHOT {
            all.push(("snapshot", RawKind::Utility, sql.to_string()));
        }
        if let Some(sql) = D::SEQUENCE_PLAN {
            all.push(("sequence_plan", RawKind::Utility, sql.to_string()));
        }
        if let Some(sql) = D::PLAN_ONCE {
            all.push(("plan_once", RawKind::Utility, sql.to_string()));
        }
        all
    }
    let mut all = match backend {
        Backend::Postgres => of::<diesel_async::AsyncPgConnection>(),
        Backend::Sqlite => of::<crate::SqliteConn>(),
    };
    if backend == Backend::Postgres {
        all.extend(postgres_only());
    }
    all.into_iter()
        .map(|(name, kind, sql)| RawStatement { name, kind, sql })
        .collect()
}

/// The raw statements only PostgreSQL is sent.
fn postgres_only() -> Vec<(&'static str, RawKind, String)> {
    vec![
        (
            "finish_deliveries",
            RawKind::Query,
            FINISH_DELIVERIES.to_string(),
        ),
        (
            "credit_with_lines",
            RawKind::Query,
            CREDIT_WITH_LINES.to_string(),
        ),
        (
            "note_deposit_orders",
            RawKind::Query,
            note_orders("deposit_orders"),
        ),
        (
            "note_withdrawal_orders",
            RawKind::Query,
            note_orders("withdrawal_orders"),
        ),
        (
            "listen_callbacks_due",
            RawKind::Utility,
            LISTEN_CALLBACKS_DUE.to_string(),
        ),
        (
            "listen_merchants_changed",
            RawKind::Utility,
            LISTEN_MERCHANTS_CHANGED.to_string(),
        ),
        ("ping", RawKind::Query, PING.to_string()),
    ]
}
