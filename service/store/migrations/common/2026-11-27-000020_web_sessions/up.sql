-- The console's and the portal's sign-ins. A session is known only by the
-- master key's keyed hash of its cookie; the cookie itself is never stored.
-- A session ends at logout, after its idle or absolute limit, or when its
-- operator or owner can no longer act (checked on every request).
CREATE TABLE web_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    realm TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    merchant_id TEXT,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    ended_at BIGINT
);
CREATE INDEX web_sessions_subject ON web_sessions (realm, subject_id);

-- Failed sign-ins, counted per account (the keyed hash of the email) and per
-- address over a window to rate-limit guessing; old rows are pruned by the
-- sign-in that counts them.
CREATE TABLE login_failures (
    id TEXT PRIMARY KEY NOT NULL,
    realm TEXT NOT NULL,
    account TEXT NOT NULL,
    address TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX login_failures_account ON login_failures (realm, account, at);
CREATE INDEX login_failures_address ON login_failures (realm, address, at);
