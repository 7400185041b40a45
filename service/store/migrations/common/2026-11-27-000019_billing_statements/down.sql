DROP TABLE billing_settings;
DROP TABLE billing_documents;
DROP TABLE billing_statements;
