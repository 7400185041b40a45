-- Credits reported by the banks of the receiving accounts. Every one is
-- kept, matched or not, so that no received money is ever lost from view.
CREATE TABLE bank_transactions (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    bank_reference TEXT NOT NULL,
    currency TEXT NOT NULL,
    amount BIGINT NOT NULL,
    remark TEXT,
    payer_name TEXT,
    payer_account_last4 TEXT,
    -- Identifies the reported content, so that a re-ingestion is told from
    -- a different transaction reusing the reference.
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    order_no TEXT,
    received_at BIGINT NOT NULL,
    matched_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT bank_transactions_reference UNIQUE (account_id, bank_reference)
);
CREATE INDEX bank_transactions_listing ON bank_transactions (created_at, id);

-- The amount a floating-amount order is matched by. Unique among orders
-- awaiting payment on one account, so that an amount names one order.
ALTER TABLE deposit_orders ADD COLUMN match_amount BIGINT;
CREATE UNIQUE INDEX deposit_orders_match_amount
    ON deposit_orders (account_id, match_amount) WHERE status = 'pending';

CREATE INDEX deposit_orders_listing ON deposit_orders (created_at, order_no);
CREATE INDEX withdrawal_orders_listing ON withdrawal_orders (created_at, order_no);

-- Receiving account per currency that an operator assigned to the
-- merchant (JSON object); currencies not in it use the first configured.
ALTER TABLE merchants ADD COLUMN receiving_accounts TEXT NOT NULL DEFAULT '{}';
