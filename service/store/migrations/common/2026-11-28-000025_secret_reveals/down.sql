DROP TABLE secret_reveals;
