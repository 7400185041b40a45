ALTER TABLE callback_deliveries DROP COLUMN queued_at_ms;
