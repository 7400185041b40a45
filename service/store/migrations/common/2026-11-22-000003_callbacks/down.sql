DROP INDEX deposit_orders_expiry;
DROP TABLE callback_deliveries;
