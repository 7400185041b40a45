-- Every state change of a merchant's orders, written in the transaction of
-- the change with the body its callback sends (also when the order has no
-- callback_url). `seq` only orders the rows as they were inserted; the
-- merchant's feed reads `position`, which one sequencer at a time assigns
-- after commit (app/events.rs explains why that makes a cursor read
-- gap-free). `delivery_id` is the callback record, when there is one; the
-- event has the same id.
CREATE TABLE merchant_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    order_kind TEXT NOT NULL,
    order_no TEXT NOT NULL,
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    delivery_id TEXT,
    created_at BIGINT NOT NULL,
    position BIGINT UNIQUE
);
CREATE INDEX merchant_events_unsequenced ON merchant_events (seq) WHERE position IS NULL;
CREATE INDEX merchant_events_feed ON merchant_events (merchant_id, position);
CREATE INDEX merchant_events_created ON merchant_events (created_at);

-- The last position handed out. Its one row is the sequencer's lock: a pass
-- updates it first and holds it until it commits.
CREATE TABLE event_positions (
    id INTEGER PRIMARY KEY NOT NULL,
    last BIGINT NOT NULL
);
INSERT INTO event_positions (id, last) VALUES (1, 0);
