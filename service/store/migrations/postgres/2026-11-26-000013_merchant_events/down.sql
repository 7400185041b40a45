DROP TABLE event_positions;
DROP TABLE merchant_events;
