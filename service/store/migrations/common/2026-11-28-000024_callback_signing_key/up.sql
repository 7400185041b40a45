-- Which API key signed a seed-scheme callback, and when its order was
-- created (issue 57): a retry reuses the signature only while that key
-- still works, and a callback never carries a key issued after its order
-- was created. NULL on records queued before: their order's time is taken
-- to be the record's own, and their first attempt from now on records the
-- key.
ALTER TABLE callback_deliveries ADD COLUMN signing_key_id TEXT;
ALTER TABLE callback_deliveries ADD COLUMN order_created_at BIGINT;
