DROP INDEX callback_deliveries_listing;
ALTER TABLE callback_deliveries DROP COLUMN claim_token;
ALTER TABLE callback_deliveries DROP COLUMN signature;
DROP TABLE callback_attempts;
