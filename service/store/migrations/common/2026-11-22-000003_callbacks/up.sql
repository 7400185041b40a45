-- The callback outbox: one record per order event, written in the same
-- transaction as the state change, only for orders with a callback_url.
-- The body is stored once, so every attempt sends the same bytes.
CREATE TABLE callback_deliveries (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    order_kind TEXT NOT NULL,
    order_no TEXT NOT NULL,
    event TEXT NOT NULL,
    callback_url TEXT NOT NULL,
    body TEXT NOT NULL,
    -- SENDING, WAITING_RETRY, SUCCESS or FAILED; a new record waits for
    -- its first attempt as WAITING_RETRY with no attempt made.
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT callback_deliveries_order_event UNIQUE (order_no, event)
);
CREATE INDEX callback_deliveries_due ON callback_deliveries (status, next_attempt_at);
CREATE INDEX deposit_orders_expiry ON deposit_orders (status, expire_at);
