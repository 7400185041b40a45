DROP TABLE audit_events;
DROP TABLE withdrawal_approvals;
DROP TABLE operator_tokens;
DROP TABLE operators;
