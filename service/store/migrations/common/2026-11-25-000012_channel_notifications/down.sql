ALTER TABLE withdrawal_orders DROP COLUMN payout_inquired_at;
ALTER TABLE withdrawal_orders DROP COLUMN payout_sent_at;
DROP TABLE channel_notifications;
