ALTER TABLE merchants DROP COLUMN callback_secrets;
ALTER TABLE merchants DROP COLUMN callback_scheme;
