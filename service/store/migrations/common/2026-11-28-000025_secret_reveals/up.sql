-- A secret issued by a form post, kept (encrypted under the master key)
-- for the one page that shows it after the redirect: post, redirect, get,
-- so that reloading the page never issues another (issue 57). A row is
-- taken (deleted) when shown, and any left unshown are deleted after ten
-- minutes by the next reveal kept.
CREATE TABLE secret_reveals (
    id TEXT PRIMARY KEY,
    session TEXT NOT NULL,
    ciphertext TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX secret_reveals_created_at ON secret_reveals (created_at);
