ALTER TABLE web_sessions DROP COLUMN second_factor_at;
DROP TABLE operator_second_factors;
