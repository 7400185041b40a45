-- Money is BIGINT in ten-thousandths of the currency unit and time is BIGINT
-- Unix seconds, so both backends store exactly the same values.

CREATE TABLE merchants (
    id TEXT PRIMARY KEY,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    callback_timeout_seconds INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    -- HMAC of the key under the master key: the lookup index.
    key_hash TEXT NOT NULL UNIQUE,
    -- The key encrypted under the master key (callbacks are signed with it).
    key_ciphertext TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    -- Set when the key is rotated out: it keeps working until then.
    expires_at BIGINT
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id);

CREATE TABLE deposit_orders (
    id TEXT PRIMARY KEY,
    order_no TEXT NOT NULL UNIQUE,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    merchant_order_no TEXT NOT NULL,
    request_fingerprint TEXT NOT NULL,
    order_type TEXT NOT NULL,
    route TEXT NOT NULL,
    status TEXT NOT NULL,
    currency TEXT NOT NULL,
    requested_amount BIGINT NOT NULL,
    amount BIGINT NOT NULL,
    fee BIGINT NOT NULL,
    actual_amount BIGINT NOT NULL,
    expected_remark TEXT UNIQUE,
    account_id TEXT,
    channel_id TEXT,
    channel_order_no TEXT,
    payment_url TEXT,
    payment_snapshot TEXT NOT NULL,
    callback_url TEXT,
    callback_status TEXT NOT NULL,
    callback_count INTEGER NOT NULL,
    user_id TEXT,
    extra_data TEXT,
    payer_account_holder TEXT,
    payer_mobile TEXT,
    payer_email TEXT,
    payer_bank_code TEXT,
    payer_account_no TEXT,
    payer_account_last4 TEXT,
    cashier_session_id TEXT,
    estimated_channel_cost BIGINT,
    estimated_profit BIGINT,
    actual_channel_cost BIGINT,
    actual_profit BIGINT,
    expire_at BIGINT NOT NULL,
    matched_at BIGINT,
    completed_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    -- Idempotency rests on this constraint, not on a read before the write.
    CONSTRAINT deposit_orders_merchant_order_no UNIQUE (merchant_id, merchant_order_no)
);

CREATE TABLE balances (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    currency TEXT NOT NULL,
    available BIGINT NOT NULL,
    frozen BIGINT NOT NULL,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT balances_merchant_currency UNIQUE (merchant_id, currency)
);
