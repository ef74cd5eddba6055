-- leakhound - SPDX-License-Identifier: MIT
-- real.sqlite3 workload: a table of ~20k rows, an index, GROUP BY queries.
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT, region TEXT, amount INTEGER);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO orders(customer, region, amount)
SELECT 'cust' || (i * 7919 % 997), 'region' || (i % 7), (i * 104729) % 10007 FROM n;
COMMIT;
CREATE INDEX orders_region ON orders(region);
SELECT count(*), sum(amount) FROM orders;
SELECT region, count(*), sum(amount), max(amount) FROM orders GROUP BY region ORDER BY region;
SELECT customer, count(*) AS n, sum(amount) AS total FROM orders
GROUP BY customer ORDER BY total DESC, customer LIMIT 5;
UPDATE orders SET amount = amount + 1 WHERE region = 'region3';
DELETE FROM orders WHERE amount % 5 = 0;
SELECT count(*), sum(amount) FROM orders;
