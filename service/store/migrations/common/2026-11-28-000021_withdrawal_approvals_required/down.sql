DROP INDEX withdrawal_orders_beneficiary;
ALTER TABLE withdrawal_orders DROP COLUMN approvals_required;
