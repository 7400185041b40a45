-- Every instance remembers, for a moment, the key and merchant a signed
-- request named (`credentials`). A change to a merchant, an API key or a
-- fee rate is announced at its commit on `payments_merchants_changed`, so
-- that every instance LISTENing forgets what it remembered at once: a
-- merchant suspended or a key revoked on one instance is refused on all of
-- them, not a second later. NOTIFY folds identical notices within one
-- transaction, so rotating every key costs one notice per batch.
-- The channel is the trigger's argument.
CREATE FUNCTION payments_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify(TG_ARGV[0], '');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER merchants_changed AFTER INSERT OR UPDATE OR DELETE ON merchants
    FOR EACH STATEMENT EXECUTE FUNCTION payments_notify('payments_merchants_changed');
CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION payments_notify('payments_merchants_changed');
CREATE TRIGGER merchant_fees_changed AFTER INSERT OR UPDATE OR DELETE ON merchant_fees
    FOR EACH STATEMENT EXECUTE FUNCTION payments_notify('payments_merchants_changed');
