-- Hosted cashier sessions. The token in the payer's URL is stored as a
-- keyed hash (for lookup) and sealed (so a resent create answers the same
-- URL); never in the clear. A session's state is not stored: it follows
-- from its order (found by cashier_session_id) and its expiry.
CREATE TABLE cashier_sessions (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    merchant_order_no TEXT NOT NULL,
    request_fingerprint TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    token_sealed TEXT NOT NULL,
    currency TEXT NOT NULL,
    amount BIGINT,
    payer_cards TEXT NOT NULL,
    callback_url TEXT,
    extra_data TEXT,
    user_id TEXT,
    created_at BIGINT NOT NULL,
    expire_at BIGINT NOT NULL,
    CONSTRAINT cashier_sessions_merchant_order_no UNIQUE (merchant_id, merchant_order_no)
);
CREATE UNIQUE INDEX deposit_orders_cashier_session ON deposit_orders (cashier_session_id)
    WHERE cashier_session_id IS NOT NULL;
