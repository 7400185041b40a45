-- Change requests (issue 51): an action that creates, moves or releases
-- money, as one person filed it, waiting for a second, different person.
-- `parameters` holds exactly what will be done (the direct operation's
-- body, as the service read it); it moves nothing until approved.
CREATE TABLE change_requests (
    id TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    merchant_id TEXT,
    parameters TEXT NOT NULL,
    summary TEXT NOT NULL,
    remarks TEXT,
    status TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    requested_by_name TEXT NOT NULL,
    requested_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    decided_by TEXT,
    decided_by_name TEXT,
    decided_at BIGINT,
    decision_remarks TEXT
);
CREATE INDEX change_requests_status ON change_requests (status, requested_at, id);
CREATE INDEX change_requests_maker ON change_requests (requested_by, status);
