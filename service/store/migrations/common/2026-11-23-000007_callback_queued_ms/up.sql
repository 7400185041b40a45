-- When the commit that queued the delivery began, in milliseconds, so that
-- the delay to its first attempt can be measured finer than created_at's
-- seconds. Empty on records queued before this migration.
ALTER TABLE callback_deliveries ADD COLUMN queued_at_ms BIGINT;
