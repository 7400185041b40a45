ALTER TABLE api_keys DROP COLUMN scope;
ALTER TABLE api_keys DROP COLUMN allowed_addresses;
