-- Billing statements: what the service charged a merchant in one period
-- (start inclusive, end exclusive, Unix seconds, UTC), per currency. A
-- statement is never edited; a correction supersedes it with the next
-- version, so (merchant, period start, version) names one statement and
-- makes issuing idempotent across instances and restarts.
CREATE TABLE billing_statements (
    id TEXT PRIMARY KEY NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    number TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    billing_period TEXT NOT NULL,
    period_start BIGINT NOT NULL,
    period_end BIGINT NOT NULL,
    totals TEXT NOT NULL,
    document_sha256 TEXT NOT NULL,
    document_bytes BIGINT NOT NULL,
    issued_by TEXT NOT NULL,
    issued_at BIGINT NOT NULL,
    remarks TEXT,
    superseded_at BIGINT,
    CONSTRAINT billing_statements_version UNIQUE (merchant_id, period_start, version),
    CONSTRAINT billing_statements_number UNIQUE (number)
);
CREATE INDEX billing_statements_merchant ON billing_statements (merchant_id, issued_at, id);
CREATE INDEX billing_statements_issued ON billing_statements (issued_at, id);

-- The statement's PDF, written once with it and served unchanged; apart
-- so that a listing never reads it.
CREATE TABLE billing_documents (
    statement_id TEXT PRIMARY KEY NOT NULL REFERENCES billing_statements (id),
    pdf BYTEA NOT NULL
);

-- A merchant's billing period when it is not the default (`month`).
CREATE TABLE billing_settings (
    merchant_id TEXT PRIMARY KEY NOT NULL REFERENCES merchants (id),
    billing_period TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
