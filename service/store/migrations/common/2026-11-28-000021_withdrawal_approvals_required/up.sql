-- How many different approvers a withdrawal needs, decided when it is
-- created: two at or above its currency's threshold, and two when it takes
-- the day's sum to one beneficiary account past the threshold (one order
-- split into many). Orders made before this count by their amount alone.
ALTER TABLE withdrawal_orders ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1;
-- The day's earlier withdrawals to one beneficiary, read at each creation.
CREATE INDEX withdrawal_orders_beneficiary
    ON withdrawal_orders (merchant_id, beneficiary_account, created_at);
