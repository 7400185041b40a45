-- The receiving account's name as it was when an account order was
-- created, beside the bank details its payment_snapshot records, so that
-- the order never shows today's configuration instead. NULL for orders
-- created before this column (and for channel orders).
ALTER TABLE deposit_orders ADD COLUMN account_name TEXT;
