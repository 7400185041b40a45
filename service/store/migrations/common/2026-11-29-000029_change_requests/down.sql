DROP TABLE change_requests;
