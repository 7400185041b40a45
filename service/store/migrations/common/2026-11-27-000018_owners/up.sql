-- A merchant's owners (the people of a tenant) and the invitations that
-- bring them in. An invitation's token is stored only as the master key's
-- keyed hash; the link that carries it leaves the service once, in the
-- `tenant_owner_invite` platform event, whose stored body is sealed.
-- Passwords are stored only as Argon2id PHC strings.
CREATE TABLE merchant_owners (
    id TEXT PRIMARY KEY NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    email TEXT NOT NULL,
    status TEXT NOT NULL,
    password_hash TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT merchant_owners_email UNIQUE (merchant_id, email)
);

CREATE TABLE owner_invitations (
    id TEXT PRIMARY KEY NOT NULL,
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    owner_id TEXT NOT NULL REFERENCES merchant_owners (id),
    email TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    issued_by TEXT NOT NULL,
    issued_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    ended_at BIGINT,
    CONSTRAINT owner_invitations_token UNIQUE (token_hash)
);
CREATE INDEX owner_invitations_merchant ON owner_invitations (merchant_id, issued_at);
CREATE INDEX owner_invitations_owner ON owner_invitations (owner_id, status);

-- The console's sign-in (next): an operator's password, hashed the same way.
ALTER TABLE operators ADD COLUMN password_hash TEXT;
