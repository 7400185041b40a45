ALTER TABLE operators DROP COLUMN vouched_at;
ALTER TABLE operators DROP COLUMN vouched_by;
ALTER TABLE operators DROP COLUMN made_by;
