-- Every notification a channel's adapter posted, once per channel and
-- notification id (the unique key is what makes a repeat change nothing),
-- written in the transaction of the move it made. `outcome` says what it
-- did: applied, unchanged (the order already showed it), held (money for an
-- order that had expired or was cancelled, for an operator) or
-- contradictory (it contradicts the order, for an operator).
CREATE TABLE channel_notifications (
    id TEXT PRIMARY KEY NOT NULL,
    channel_id TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    order_no TEXT NOT NULL,
    amount BIGINT,
    channel_cost BIGINT,
    reference TEXT,
    reason TEXT,
    outcome TEXT NOT NULL,
    occurred_at BIGINT NOT NULL,
    received_at BIGINT NOT NULL,
    CONSTRAINT channel_notifications_once UNIQUE (channel_id, notification_id)
);
CREATE INDEX channel_notifications_order ON channel_notifications (order_no);
CREATE INDEX channel_notifications_outcome ON channel_notifications (outcome, received_at);

-- When the service first sent an approved withdrawal's payout to its
-- channel. Set before the call is made, so that after a crash, a timeout or
-- a broken connection the order is known to be in doubt: it is inquired
-- about, and re-sent only under the same order number.
ALTER TABLE withdrawal_orders ADD COLUMN payout_sent_at BIGINT;
-- When the service last asked the channel about a payout under way, so
-- that it asks again only after `payout_inquire_after_seconds`.
ALTER TABLE withdrawal_orders ADD COLUMN payout_inquired_at BIGINT;
