-- Routing tables the operators set (issue 54): per currency, direction
-- and scope ('' for every merchant, else one merchant's id), the
-- candidates in order as a JSON list. Each takes the place of the table
-- the configuration has for the same key. Every instance reads them all
-- (a few rows) and keeps them in memory.
CREATE TABLE routing_tables (
    scope TEXT NOT NULL,
    currency TEXT NOT NULL,
    direction TEXT NOT NULL,
    candidates TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (scope, currency, direction)
);

-- What each channel was sent today, in stored units, for the candidates
-- that have a daily limit: raised only while it stays within the limit,
-- so instances racing for the last of a day's room never pass it.
CREATE TABLE channel_daily_use (
    channel TEXT NOT NULL,
    currency TEXT NOT NULL,
    direction TEXT NOT NULL,
    day BIGINT NOT NULL,
    used BIGINT NOT NULL,
    PRIMARY KEY (channel, currency, direction, day)
);

-- Why a withdrawal's payout went to its channel, as string pairs (JSON):
-- the table, the rule, and the channels it fell through from.
ALTER TABLE withdrawal_orders ADD COLUMN routing TEXT;
