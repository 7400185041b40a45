ALTER TABLE deposit_orders DROP COLUMN account_name;
