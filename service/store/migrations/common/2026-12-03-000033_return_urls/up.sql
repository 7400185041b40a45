-- Where the payer is sent back to when the payment is over (issue 53,
-- merchant 0.8.0): the merchant's own page, linked from the cashier's final
-- pages and passed to the channel's payment page. NULL: no link back.
ALTER TABLE deposit_orders ADD COLUMN return_url TEXT;
ALTER TABLE cashier_sessions ADD COLUMN return_url TEXT;
