-- Every instance's delivery worker LISTENs on `payments_callback_due`: a
-- callback that becomes due (queued, or put back to WAITING_RETRY) is
-- announced at its commit, to workers on any instance. NOTIFY folds
-- identical notices within one transaction, so a busy commit costs one.
CREATE FUNCTION payments_callback_due() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('payments_callback_due', '');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER callback_deliveries_due
    AFTER INSERT OR UPDATE OF status ON callback_deliveries
    FOR EACH ROW WHEN (NEW.status = 'WAITING_RETRY')
    EXECUTE FUNCTION payments_callback_due();
