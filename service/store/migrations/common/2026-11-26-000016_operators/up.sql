-- Operators are people: a role decides what each may do. Their API tokens
-- are stored only as keyed hashes (the master key's lookup hash), like
-- merchants' keys, so a copy of the database does not act as anyone.
CREATE TABLE operators (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT operators_email UNIQUE (email)
);

CREATE TABLE operator_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    operator_id TEXT NOT NULL REFERENCES operators (id),
    token_hash TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT,
    CONSTRAINT operator_tokens_hash UNIQUE (token_hash)
);
CREATE INDEX operator_tokens_operator ON operator_tokens (operator_id, created_at);

-- One row per approval of a withdrawal: at or above its currency's
-- dual-approval threshold the order moves only on the second, and the key
-- makes a second approval by the same operator impossible, not merely
-- checked. `approver_key` is the identity's id, or `config:<name>` for a
-- bootstrap token from the configuration.
CREATE TABLE withdrawal_approvals (
    order_no TEXT NOT NULL,
    approver_key TEXT NOT NULL,
    approver_name TEXT NOT NULL,
    remarks TEXT,
    approved_at BIGINT NOT NULL,
    PRIMARY KEY (order_no, approver_key)
);

-- Every operator action, appended in the transaction of the action. Rows
-- are never updated or deleted: each dialect's migration after this one
-- refuses both at the database.
CREATE TABLE audit_events (
    id TEXT PRIMARY KEY NOT NULL,
    created_at BIGINT NOT NULL,
    operator_id TEXT,
    operator_name TEXT NOT NULL,
    role TEXT NOT NULL,
    action TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id TEXT NOT NULL,
    remarks TEXT,
    request_id TEXT NOT NULL,
    before_state TEXT,
    after_state TEXT
);
CREATE INDEX audit_events_newest ON audit_events (created_at, id);
CREATE INDEX audit_events_target ON audit_events (target_id, created_at);
