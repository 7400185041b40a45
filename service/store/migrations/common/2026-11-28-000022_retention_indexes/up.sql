-- Retention deletes the oldest rows of these tables in small batches
-- (app::retention); each batch reads the oldest first by these columns.
CREATE INDEX callback_attempts_started ON callback_attempts (started_at);
CREATE INDEX channel_notifications_received ON channel_notifications (received_at);
CREATE INDEX web_sessions_last_seen ON web_sessions (last_seen_at);
