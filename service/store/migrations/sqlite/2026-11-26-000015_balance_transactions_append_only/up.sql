-- Balance lines, like the journal they mirror, are append-only.
CREATE TRIGGER balance_transactions_no_update BEFORE UPDATE ON balance_transactions
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: UPDATE on balance_transactions refused'); END;
CREATE TRIGGER balance_transactions_no_delete BEFORE DELETE ON balance_transactions
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: DELETE on balance_transactions refused'); END;
