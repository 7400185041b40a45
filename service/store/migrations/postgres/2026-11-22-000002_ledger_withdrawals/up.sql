-- The ledger: every balance change is a journal entry whose postings sum to
-- zero. Accounts are `merchant:<id>:available`, `merchant:<id>:frozen` and
-- the service's own `system:clearing`, `system:fees`, `system:payouts`.
CREATE TABLE journal_entries (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    currency TEXT NOT NULL,
    kind TEXT NOT NULL,
    order_no TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    -- An order's effect of one kind is booked once, whatever retries.
    CONSTRAINT journal_entries_order_kind UNIQUE (order_no, kind)
);

CREATE TABLE postings (
    id TEXT PRIMARY KEY,
    entry_id TEXT NOT NULL REFERENCES journal_entries (id),
    account TEXT NOT NULL,
    currency TEXT NOT NULL,
    amount BIGINT NOT NULL
);
CREATE INDEX postings_entry ON postings (entry_id);
CREATE INDEX postings_account ON postings (account, currency);

CREATE FUNCTION ledger_is_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
    FOR EACH ROW EXECUTE FUNCTION ledger_is_append_only();
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
    FOR EACH ROW EXECUTE FUNCTION ledger_is_append_only();

CREATE TABLE withdrawal_orders (
    id TEXT PRIMARY KEY,
    order_no TEXT NOT NULL UNIQUE,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    merchant_order_no TEXT NOT NULL,
    request_fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    currency TEXT NOT NULL,
    amount BIGINT NOT NULL,
    fee BIGINT NOT NULL,
    actual_amount BIGINT NOT NULL,
    beneficiary_name TEXT NOT NULL,
    beneficiary_account TEXT NOT NULL,
    beneficiary_bank_code TEXT NOT NULL,
    beneficiary_bank_name TEXT,
    beneficiary_bank_branch TEXT,
    payout_method TEXT NOT NULL,
    is_auto_approved BOOLEAN NOT NULL,
    approved_at BIGINT,
    approved_by TEXT,
    approval_remarks TEXT,
    processed_at BIGINT,
    completed_at BIGINT,
    rejected_at BIGINT,
    failed_at BIGINT,
    bank_reference TEXT,
    callback_url TEXT,
    callback_status TEXT NOT NULL,
    callback_count INTEGER NOT NULL,
    needs_manual_intervention BOOLEAN NOT NULL,
    manual_reason TEXT,
    channel_id TEXT,
    channel_order_no TEXT,
    estimated_channel_cost BIGINT,
    estimated_profit BIGINT,
    actual_channel_cost BIGINT,
    actual_profit BIGINT,
    extra_data TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT withdrawal_orders_merchant_order_no UNIQUE (merchant_id, merchant_order_no)
);

-- A merchant's fee per currency and direction; `percent` is a decimal
-- string, `fixed` and `minimum` ten-thousandths.
CREATE TABLE merchant_fees (
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    currency TEXT NOT NULL,
    direction TEXT NOT NULL,
    percent TEXT NOT NULL,
    fixed BIGINT NOT NULL,
    minimum BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, currency, direction)
);

-- `off`, `always` or `up_to` (with limits per currency as a JSON object of
-- ten-thousandths).
ALTER TABLE merchants ADD COLUMN auto_approval TEXT NOT NULL DEFAULT 'off';
ALTER TABLE merchants ADD COLUMN auto_approval_limits TEXT NOT NULL DEFAULT '{}';
ALTER TABLE merchants ADD COLUMN rate_limit_per_minute INTEGER;
ALTER TABLE merchants ADD COLUMN rate_limit_burst INTEGER;
