ALTER TABLE withdrawal_orders DROP COLUMN approvals_given;
