ALTER TABLE callback_deliveries DROP COLUMN order_created_at;
ALTER TABLE callback_deliveries DROP COLUMN signing_key_id;
