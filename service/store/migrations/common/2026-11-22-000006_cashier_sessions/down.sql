DROP INDEX deposit_orders_cashier_session;
DROP TABLE cashier_sessions;
