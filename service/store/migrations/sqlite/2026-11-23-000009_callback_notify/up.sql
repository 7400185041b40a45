-- SQLite has one process writing; the in-process wake-up is enough.
SELECT 1;
