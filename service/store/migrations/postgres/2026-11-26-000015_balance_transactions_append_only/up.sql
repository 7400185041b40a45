-- Balance lines, like the journal they mirror, are append-only.
CREATE TRIGGER balance_transactions_append_only BEFORE UPDATE OR DELETE ON balance_transactions
    FOR EACH ROW EXECUTE FUNCTION ledger_is_append_only();
