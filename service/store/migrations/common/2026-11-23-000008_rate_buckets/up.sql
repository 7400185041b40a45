-- A merchant's request budget, shared by every instance on this database:
-- `units` sixty-thousandths of a request (so a rate per minute refills in
-- whole units per millisecond), as of `at_ms` on the service's clock.
CREATE TABLE rate_buckets (
    merchant_id TEXT PRIMARY KEY NOT NULL REFERENCES merchants (id),
    units BIGINT NOT NULL,
    at_ms BIGINT NOT NULL
);
