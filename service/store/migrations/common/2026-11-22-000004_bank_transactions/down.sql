ALTER TABLE merchants DROP COLUMN receiving_accounts;
DROP INDEX withdrawal_orders_listing;
DROP INDEX deposit_orders_listing;
DROP INDEX deposit_orders_match_amount;
ALTER TABLE deposit_orders DROP COLUMN match_amount;
DROP TABLE bank_transactions;
