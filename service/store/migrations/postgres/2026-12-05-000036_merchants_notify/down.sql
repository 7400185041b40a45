DROP TRIGGER merchant_fees_changed ON merchant_fees;
DROP TRIGGER api_keys_changed ON api_keys;
DROP TRIGGER merchants_changed ON merchants;
DROP FUNCTION payments_notify();
