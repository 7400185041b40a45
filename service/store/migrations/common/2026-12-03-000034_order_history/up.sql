-- An order's timeline reads its events and balance lines by order number
-- (issue 53): without these, each order page scanned a merchant's whole
-- feed and balance history.
CREATE INDEX merchant_events_order ON merchant_events (merchant_id, order_no);
CREATE INDEX balance_transactions_order ON balance_transactions (merchant_id, order_no);
