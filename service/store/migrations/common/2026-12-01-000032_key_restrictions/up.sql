-- Where a merchant's API key is accepted from, and what it may do (issue
-- 57): an address allowlist (comma-separated networks, each normalised;
-- NULL for anywhere) and a scope (`full`, or `read_only`: queries,
-- balances and listings only).
ALTER TABLE api_keys ADD COLUMN allowed_addresses TEXT;
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'full';
