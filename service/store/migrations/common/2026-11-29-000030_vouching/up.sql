-- Who counts as a second person (issue 51). An operator made or raised by
-- one admin alone is not one until a second admin vouches for them: else
-- one admin with two identities would meet four eyes alone. `made_by` is
-- the person who last made or raised the operator (NULL: the configuration
-- or the command line, which are for bootstrap); `vouched_by` the second
-- admin, or `bootstrap`. Operators from before this migration count.
ALTER TABLE operators ADD COLUMN made_by TEXT;
ALTER TABLE operators ADD COLUMN vouched_by TEXT;
ALTER TABLE operators ADD COLUMN vouched_at BIGINT;
UPDATE operators SET vouched_by = 'bootstrap', vouched_at = updated_at;
