DROP TRIGGER audit_events_no_delete;
DROP TRIGGER audit_events_no_update;
