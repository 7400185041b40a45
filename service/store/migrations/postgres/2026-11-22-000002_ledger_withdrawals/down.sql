ALTER TABLE merchants DROP COLUMN rate_limit_burst;
ALTER TABLE merchants DROP COLUMN rate_limit_per_minute;
ALTER TABLE merchants DROP COLUMN auto_approval_limits;
ALTER TABLE merchants DROP COLUMN auto_approval;
DROP TABLE merchant_fees;
DROP TABLE withdrawal_orders;
DROP TABLE postings;
DROP TABLE journal_entries;
DROP FUNCTION ledger_is_append_only();
