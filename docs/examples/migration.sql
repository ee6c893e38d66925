-- make channel required, add the carrier
ALTER TABLE orders_delta ALTER COLUMN channel SET NOT NULL;
ALTER TABLE orders_delta ADD COLUMNS (carrier STRING COMMENT 'IATA code');
