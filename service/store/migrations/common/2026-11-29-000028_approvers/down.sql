ALTER TABLE withdrawal_orders DROP COLUMN approver_id;
ALTER TABLE withdrawal_approvals DROP COLUMN id;
