-- What the vault keeps in the database, sealed under the current master
-- key: the lookup index's key (`lookup`), which must outlive every master
-- key because the tokens and sessions it indexes are stored only hashed
-- (issue 57, `payments keys rotate`).
CREATE TABLE vault_keys (
    id TEXT PRIMARY KEY,
    sealed TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
