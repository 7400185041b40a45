ALTER TABLE operators DROP COLUMN password_hash;
DROP TABLE owner_invitations;
DROP TABLE merchant_owners;
