ALTER TABLE callback_deliveries DROP COLUMN receiver_host;
