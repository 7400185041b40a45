-- SQLite has one process writing; its own generation counter is enough.
SELECT 1;
