-- How each merchant's callbacks are signed, and the callback secrets the
-- Standard Webhooks scheme signs with (encrypted under the master key, as
-- API keys are; a JSON array). Every merchant before this migration keeps
-- the customer's scheme and has no secret.
ALTER TABLE merchants ADD COLUMN callback_scheme TEXT NOT NULL DEFAULT 'seed';
ALTER TABLE merchants ADD COLUMN callback_secrets TEXT NOT NULL DEFAULT '[]';
