DROP INDEX web_sessions_last_seen;
DROP INDEX channel_notifications_received;
DROP INDEX callback_attempts_started;
