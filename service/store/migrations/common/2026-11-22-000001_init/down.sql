DROP TABLE balances;
DROP TABLE deposit_orders;
DROP TABLE api_keys;
DROP TABLE merchants;
