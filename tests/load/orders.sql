-- leakhound - SPDX-License-Identifier: MIT
-- load.sqlite3 workload: 200k orders over 2k customers, an index, a join with group by,
-- a window function and an update; deterministic output.
PRAGMA journal_mode = OFF;
PRAGMA cache_size = -16000;
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, region TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER, amount INTEGER, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO customers SELECT i, 'customer-' || i, 'region-' || (i % 17) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO orders SELECT i, 1 + (i * 7919) % 2000, (i * 104729) % 10007,
                          printf('order %d for %d', i, (i * 7919) % 2000) FROM n;
CREATE INDEX orders_customer ON orders (customer, amount);
SELECT count(*), sum(amount) FROM orders;
SELECT c.region, count(*), sum(o.amount), max(o.amount)
  FROM orders o JOIN customers c ON c.id = o.customer
  GROUP BY c.region ORDER BY c.region;
SELECT customer, total FROM (
  SELECT customer, sum(amount) AS total, rank() OVER (ORDER BY sum(amount) DESC) AS r
    FROM orders GROUP BY customer) WHERE r <= 5 ORDER BY total DESC, customer;
UPDATE orders SET note = upper(note) WHERE amount % 3 = 0;
SELECT count(*) FROM orders WHERE note LIKE 'ORDER%';
SELECT group_concat(name, ';') FROM (SELECT name FROM customers ORDER BY name LIMIT 5);
