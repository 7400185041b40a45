DROP TABLE login_failures;
DROP TABLE web_sessions;
