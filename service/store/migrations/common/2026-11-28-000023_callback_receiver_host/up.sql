-- The receiver's host (and port), so that the delivery claim can hold each
-- receiver to its share of the attempts in flight (issue 55, fair
-- delivery). NULL on records queued before it: they are capped by merchant
-- only.
ALTER TABLE callback_deliveries ADD COLUMN receiver_host TEXT;
