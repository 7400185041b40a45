-- Operator tokens expire (issue 57): a token issued from now on carries
-- its end. NULL on tokens issued before: they work until revoked.
ALTER TABLE operator_tokens ADD COLUMN expires_at BIGINT;
