DROP TRIGGER callback_deliveries_due ON callback_deliveries;
DROP FUNCTION payments_callback_due();
