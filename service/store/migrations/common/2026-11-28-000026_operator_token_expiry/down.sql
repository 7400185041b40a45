ALTER TABLE operator_tokens DROP COLUMN expires_at;
