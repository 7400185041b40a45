ALTER TABLE withdrawal_orders DROP COLUMN routing;
DROP TABLE channel_daily_use;
DROP TABLE routing_tables;
