ALTER TABLE cashier_sessions DROP COLUMN return_url;
ALTER TABLE deposit_orders DROP COLUMN return_url;
