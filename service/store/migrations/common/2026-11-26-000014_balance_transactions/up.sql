-- One line per change of a merchant's balance, written in the transaction
-- of the journal entry that made it: how much the available and frozen
-- sides moved, the fee the service earned by it, and both sides after.
-- `version` is the balance's version after the change: the balance row's
-- lock orders the lines of one merchant and currency, so it counts them
-- without a gap, and `created_at` never goes back along it (the balance's
-- `updated_at` never does).
CREATE TABLE balance_transactions (
    id TEXT PRIMARY KEY NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    currency TEXT NOT NULL,
    version BIGINT NOT NULL,
    kind TEXT NOT NULL,
    order_no TEXT NOT NULL,
    merchant_order_no TEXT NOT NULL,
    available_change BIGINT NOT NULL,
    frozen_change BIGINT NOT NULL,
    fee BIGINT NOT NULL,
    available_after BIGINT NOT NULL,
    frozen_after BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    CONSTRAINT balance_transactions_version UNIQUE (merchant_id, currency, version)
);
CREATE INDEX balance_transactions_day ON balance_transactions (merchant_id, currency, created_at);

-- The lines of the entries booked before this table existed, from the
-- journal: the balance's version counts exactly the entries that moved it.
INSERT INTO balance_transactions (id, merchant_id, currency, version, kind, order_no,
    merchant_order_no, available_change, frozen_change, fee, available_after, frozen_after,
    created_at)
SELECT 'bt-' || e.id, e.merchant_id, e.currency,
    ROW_NUMBER() OVER w,
    e.kind, e.order_no, COALESCE(d.merchant_order_no, x.merchant_order_no, ''),
    e.av, e.fr, e.fee,
    SUM(e.av) OVER w, SUM(e.fr) OVER w,
    e.created_at
FROM (
    SELECT j.id, j.merchant_id, j.currency, j.kind, j.order_no, j.created_at,
        COALESCE((SELECT SUM(p.amount) FROM postings p WHERE p.entry_id = j.id
            AND p.account = 'merchant:' || j.merchant_id || ':available'), 0) AS av,
        COALESCE((SELECT SUM(p.amount) FROM postings p WHERE p.entry_id = j.id
            AND p.account = 'merchant:' || j.merchant_id || ':frozen'), 0) AS fr,
        COALESCE((SELECT SUM(p.amount) FROM postings p WHERE p.entry_id = j.id
            AND p.account = 'system:fees'), 0) AS fee
    FROM journal_entries j
) e
LEFT JOIN deposit_orders d ON d.order_no = e.order_no
LEFT JOIN withdrawal_orders x ON x.order_no = e.order_no
WHERE e.av <> 0 OR e.fr <> 0
WINDOW w AS (PARTITION BY e.merchant_id, e.currency ORDER BY e.created_at, e.id
    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);

-- A merchant's order lists: newest first within one merchant.
CREATE INDEX deposit_orders_merchant_created ON deposit_orders (merchant_id, created_at, order_no);
CREATE INDEX withdrawal_orders_merchant_created ON withdrawal_orders (merchant_id, created_at, order_no);
