-- What the expiry worker's inquiry pass reads (`channel_deposits_awaiting`):
-- channel deposits still awaiting payment, oldest first. Through
-- `deposit_orders_expiry` it read every order awaiting payment, channel or
-- account, and dropped the account ones: 173 ms for 239,808 pending account
-- deposits and no channel one (EXPLAIN ANALYZE, PostgreSQL 15), every pass.
-- This index holds only the rows the pass wants, so a pass costs what it
-- finds (0.05 ms there).
CREATE INDEX deposit_orders_channel_awaiting ON deposit_orders (created_at, order_no)
    WHERE route = 'channel' AND status IN ('pending', 'matched');
