DROP INDEX balance_transactions_order;
DROP INDEX merchant_events_order;
