-- Every attempt to deliver a callback, kept for operators: when it was
-- due, when it ran, how long it took and what came back.
CREATE TABLE callback_attempts (
    id TEXT PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES callback_deliveries (id),
    attempt INTEGER NOT NULL,
    scheduled_at BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    status_code INTEGER,
    error TEXT,
    outcome TEXT NOT NULL,
    next_attempt_at BIGINT
);
CREATE INDEX callback_attempts_delivery ON callback_attempts (delivery_id, started_at);

-- The signature is computed once, at the first attempt, so that every
-- retry sends the same bytes and the same signature.
ALTER TABLE callback_deliveries ADD COLUMN signature TEXT;
-- Set by each claim, so that the result of an attempt the sweep gave up on
-- cannot overwrite the record's later attempt.
ALTER TABLE callback_deliveries ADD COLUMN claim_token TEXT;
CREATE INDEX callback_deliveries_listing ON callback_deliveries (created_at, id);
