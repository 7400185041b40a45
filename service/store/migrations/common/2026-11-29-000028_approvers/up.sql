-- An approval's id, which sorts in the order approvals were made (a UUID
-- version 7, app::ids): two approvals of one order in the same second
-- listed by approver instead, at random (issue 51). Approvals made before
-- this have none and sort first within their second.
ALTER TABLE withdrawal_approvals ADD COLUMN id TEXT NOT NULL DEFAULT '';
-- Who decided a withdrawal (rejected it, or gave the approval that
-- approved it), by operator id: `approver.id` repeated the name, and two
-- approvers were one comma-joined string. None on orders decided before.
ALTER TABLE withdrawal_orders ADD COLUMN approver_id TEXT;
