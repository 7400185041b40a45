//! What the two SQL dialects say differently, in one place.

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
}

impl Dialect for diesel_async::AsyncPgConnection {
    // READ COMMITTED takes a new snapshot per statement.
    const SNAPSHOT: Option<&'static str> =
        Some("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    const LOCK_MERCHANT: Option<&'static str> =
        Some("SELECT id FROM merchants WHERE id = $1 FOR UPDATE");
    const CLAIM_CALLBACKS: &'static str =
        "UPDATE callback_deliveries SET status = $4, updated_at = $1, \
         claim_token = $3 || ':' || md5(random()::text || clock_timestamp()::text) \
         WHERE id IN (SELECT id FROM callback_deliveries \
         WHERE status = $5 AND next_attempt_at <= $1 \
         ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING *";
    const RATE_BUCKET: &'static str =
        "SELECT merchant_id, units, at_ms FROM rate_buckets WHERE merchant_id = $1 FOR UPDATE";
}

impl Dialect for crate::store::SqliteConn {
    // A SQLite transaction reads one snapshot from its first read on.
    const SNAPSHOT: Option<&'static str> = None;
    // A SQLite write transaction excludes every other writer already.
    const LOCK_MERCHANT: Option<&'static str> = None;
    const CLAIM_CALLBACKS: &'static str =
        "UPDATE callback_deliveries SET status = ?4, updated_at = ?1, \
         claim_token = ?3 || ':' || lower(hex(randomblob(16))) \
         WHERE id IN (SELECT id FROM callback_deliveries \
         WHERE status = ?5 AND next_attempt_at <= ?1 \
         ORDER BY next_attempt_at LIMIT ?2) RETURNING *";
    const RATE_BUCKET: &'static str =
        "SELECT merchant_id, units, at_ms FROM rate_buckets WHERE merchant_id = ?1";
}
