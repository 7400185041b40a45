DROP TABLE rate_buckets;
