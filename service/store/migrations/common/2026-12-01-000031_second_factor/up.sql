-- A second factor for the console (issue 57): an operator who may decide
-- a money action proves a code from an authenticator app (RFC 6238) at
-- sign-in and again before approving one. One row an operator: the
-- secret sealed under the master key, when its first code was proven
-- (NULL while enrolment is under way), and the last time step a code was
-- accepted for, so that no code is accepted twice.
CREATE TABLE operator_second_factors (
    id TEXT PRIMARY KEY REFERENCES operators (id),
    secret_sealed TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    enrolled_at BIGINT,
    last_step BIGINT
);
-- When the session's second factor was proven; NULL for a session whose
-- operator needs none, or that has not proven it yet.
ALTER TABLE web_sessions ADD COLUMN second_factor_at BIGINT;
