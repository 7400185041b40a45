-- How many approvals a withdrawal has had, kept by the statement that locks
-- a pending order for an approval (`lock_pending_withdrawal`), in the
-- approving transaction that also inserts the approval: always the count of
-- its `withdrawal_approvals` rows. The approval reads those rows only when
-- the count says there are earlier ones, which the common approval, the
-- first of one needed, does not: one statement fewer (issue 56). Counted
-- under the order's row lock, so two approvers at once each see the other.
ALTER TABLE withdrawal_orders ADD COLUMN approvals_given INTEGER NOT NULL DEFAULT 0;
UPDATE withdrawal_orders
    SET approvals_given = (
        SELECT COUNT(*) FROM withdrawal_approvals a
        WHERE a.order_no = withdrawal_orders.order_no
    )
    WHERE order_no IN (SELECT order_no FROM withdrawal_approvals);
