-- Legitimate read-only queries for core.guard: every line must be ALLOWED in its dialect.
-- Format: <dialect><TAB><one SQL statement>. Lines starting with "-- " and blank lines are notes.
-- Spider/BIRD/defog-style analytics written by hand for Askbase (not copied from any benchmark).

-- SQLite
sqlite	SELECT name, age FROM singer WHERE age > 30 ORDER BY age DESC
sqlite	SELECT count(*) FROM orders
sqlite	SELECT country, count(*) AS n FROM singer GROUP BY country HAVING count(*) > 1 ORDER BY n DESC LIMIT 5
sqlite	SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.singer_id WHERE T2.year = 2014
sqlite	SELECT name FROM singer WHERE id NOT IN (SELECT singer_id FROM concert)
sqlite	SELECT name FROM singer WHERE name LIKE '%son%' COLLATE NOCASE
sqlite	SELECT name FROM stadium EXCEPT SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.id
sqlite	SELECT name FROM a UNION SELECT name FROM b INTERSECT SELECT name FROM c
sqlite	SELECT strftime('%Y', order_date) AS year, sum(amount) FROM orders GROUP BY year
sqlite	SELECT strftime('%Y-%m', created_at) AS month, count(*) FROM users WHERE created_at >= date('now', '-12 months') GROUP BY 1 ORDER BY 1
sqlite	SELECT julianday(shipped) - julianday(ordered) AS days FROM orders
sqlite	SELECT datetime('now', 'localtime'), date('now', 'start of month'), time('now')
sqlite	SELECT CAST(strftime('%w', order_date) AS INTEGER) AS weekday, avg(amount) FROM orders GROUP BY weekday
sqlite	SELECT unixepoch('now') - unixepoch(created_at) FROM users
sqlite	SELECT customer_id, amount, sum(amount) OVER (PARTITION BY customer_id ORDER BY order_date ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM orders
sqlite	SELECT name, rank() OVER (ORDER BY score DESC) AS r, dense_rank() OVER (ORDER BY score DESC) AS dr, row_number() OVER () AS rn FROM players
sqlite	SELECT name, lag(score, 1, 0) OVER w, lead(score) OVER w FROM players WINDOW w AS (ORDER BY played_at)
sqlite	SELECT ntile(4) OVER (ORDER BY salary) AS quartile, percent_rank() OVER (ORDER BY salary), cume_dist() OVER (ORDER BY salary) FROM staff
sqlite	SELECT first_value(name) OVER (PARTITION BY dept ORDER BY salary DESC), last_value(name) OVER (PARTITION BY dept), nth_value(name, 2) OVER (PARTITION BY dept) FROM staff
sqlite	WITH top AS (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id) SELECT c.name, t.total FROM top AS t JOIN customers AS c ON c.id = t.customer_id ORDER BY t.total DESC LIMIT 10
sqlite	WITH RECURSIVE chain(id, manager_id, depth) AS (SELECT id, manager_id, 0 FROM employees WHERE manager_id IS NULL UNION ALL SELECT e.id, e.manager_id, c.depth + 1 FROM employees AS e JOIN chain AS c ON e.manager_id = c.id) SELECT * FROM chain
sqlite	WITH RECURSIVE cnt(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 10) SELECT x FROM cnt
sqlite	SELECT CASE WHEN amount > 100 THEN 'big' WHEN amount > 10 THEN 'medium' ELSE 'small' END AS size, count(*) FROM orders GROUP BY size
sqlite	SELECT iif(active, 'yes', 'no'), ifnull(nickname, name), coalesce(email, phone, 'none'), nullif(score, 0) FROM users
sqlite	SELECT upper(name), lower(city), length(name), substr(phone, 1, 3), trim(name), ltrim(code, '0'), rtrim(code), replace(name, ' ', '_') FROM users
sqlite	SELECT instr(email, '@'), printf('%.2f', amount), format('%d items', n), hex(id), quote(name), unicode(name), char(65), typeof(amount) FROM orders
sqlite	SELECT name || ' (' || country || ')' AS label FROM singer
sqlite	SELECT group_concat(name, ', ') FROM singer GROUP BY country
sqlite	SELECT abs(delta), round(price, 2), max(a, b), min(a, b), random() % 10, total(amount), avg(price) FROM items
sqlite	SELECT json_extract(payload, '$.user.id'), json_array_length(payload, '$.items'), json_type(payload) FROM events
sqlite	SELECT e.id, j.value FROM events AS e, json_each(e.payload, '$.tags') AS j
sqlite	SELECT json_object('id', id, 'name', name), json_group_array(name) FROM users GROUP BY country
sqlite	SELECT payload ->> '$.user.name' FROM events
sqlite	SELECT count(DISTINCT customer_id) FILTER (WHERE amount > 10) FROM orders
sqlite	SELECT name FROM users WHERE name GLOB 'A*' AND email NOT LIKE '%@example.com' ESCAPE '\'
sqlite	SELECT name FROM users WHERE created_at BETWEEN '2020-01-01' AND '2020-12-31' AND id IN (1, 2, 3)
sqlite	SELECT * FROM orders WHERE EXISTS (SELECT 1 FROM refunds WHERE refunds.order_id = orders.id)
sqlite	SELECT "order", [group], `select` FROM "weird table"
sqlite	SELECT t.* FROM (SELECT name, count(*) AS c FROM users GROUP BY name) AS t WHERE t.c > 1
sqlite	SELECT name FROM users ORDER BY created_at DESC NULLS LAST LIMIT 10 OFFSET 20
sqlite	SELECT * FROM orders LIMIT 20, 10
sqlite	SELECT a.name, b.name FROM users AS a LEFT JOIN users AS b ON a.referrer = b.id
sqlite	SELECT a.x FROM a CROSS JOIN b NATURAL JOIN c
sqlite	SELECT count(*) FROM users WHERE deleted_at IS NULL AND verified IS NOT 0
sqlite	SELECT sum(CASE WHEN status = 'paid' THEN 1 ELSE 0 END) * 1.0 / count(*) AS paid_ratio FROM invoices
sqlite	SELECT name FROM users WHERE lower(name) = 'delete' -- names only
sqlite	/* top customers */ SELECT name FROM customers ORDER BY spend DESC
sqlite	SELECT 'O''Brien' AS name, 'a\b' AS path;
sqlite	SELECT * FROM main.users
sqlite	SELECT "DROP", "DELETE" FROM "select"
sqlite	SELECT * FROM generate_series(1, 10)
sqlite	SELECT likely(a > 1), unlikely(b), coalesce(x, 0) FROM t
sqlite	SELECT ceil(price), floor(price), sqrt(area), power(2, 10), log10(n), ln(n), exp(1), pi(), mod(7, 3) FROM shapes
sqlite	SELECT median FROM stats WHERE median > 3
sqlite	SELECT id FROM t WHERE (a, b) = (1, 2)
sqlite	SELECT CAST(score AS REAL) / NULLIF(games, 0) FROM players
sqlite	WITH v(x) AS (VALUES (1), (2), (3)) SELECT x FROM v

-- PostgreSQL
postgres	SELECT name, email FROM customers WHERE email ILIKE '%@gmail.com' ORDER BY name
postgres	SELECT date_trunc('month', created_at) AS month, count(*) FROM orders GROUP BY 1 ORDER BY 1
postgres	SELECT EXTRACT(YEAR FROM created_at) AS y, EXTRACT(DOW FROM created_at) AS dow, count(*) FROM orders GROUP BY 1, 2
postgres	SELECT date_part('day', now() - created_at) FROM users
postgres	SELECT created_at::date, created_at::timestamp, amount::numeric(10, 2), id::text FROM orders
postgres	SELECT CAST(amount AS DECIMAL(10, 2)), CAST(created_at AS DATE) FROM orders
postgres	SELECT * FROM orders WHERE created_at >= CURRENT_DATE - INTERVAL '30 days'
postgres	SELECT * FROM orders WHERE created_at >= now() - interval '1 year' AND created_at < current_timestamp
postgres	SELECT age(now(), birth_date), to_char(created_at, 'YYYY-MM'), to_date('2024-01-01', 'YYYY-MM-DD'), to_timestamp(1700000000) FROM users
postgres	SELECT make_date(2024, 1, 1), justify_days(interval '35 days'), date_bin('15 minutes', ts, TIMESTAMP '2001-01-01') FROM events
postgres	SELECT customer_id, sum(amount) OVER (PARTITION BY customer_id ORDER BY created_at) AS running_total FROM orders
postgres	SELECT id, amount, avg(amount) OVER (ORDER BY created_at ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS moving_avg FROM orders
postgres	SELECT * FROM (SELECT name, dept, salary, row_number() OVER (PARTITION BY dept ORDER BY salary DESC) AS rn FROM staff) AS ranked WHERE rn <= 3
postgres	WITH monthly AS (SELECT date_trunc('month', created_at) AS m, sum(amount) AS total FROM orders GROUP BY 1) SELECT m, total, total - lag(total) OVER (ORDER BY m) AS change FROM monthly
postgres	WITH RECURSIVE tree AS (SELECT id, parent_id, name FROM categories WHERE parent_id IS NULL UNION ALL SELECT c.id, c.parent_id, c.name FROM categories c JOIN tree t ON c.parent_id = t.id) SELECT * FROM tree
postgres	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) AS median, percentile_disc(0.9) WITHIN GROUP (ORDER BY amount) FROM orders
postgres	SELECT mode() WITHIN GROUP (ORDER BY city) FROM customers
postgres	SELECT count(*) FILTER (WHERE status = 'paid') AS paid, count(*) FILTER (WHERE status <> 'paid') AS unpaid FROM invoices
postgres	SELECT string_agg(name, ', ' ORDER BY name), array_agg(DISTINCT city), bool_or(active), bool_and(verified) FROM customers
postgres	SELECT stddev(amount), variance(amount), corr(x, y), regr_slope(y, x), covar_pop(x, y) FROM measurements
postgres	SELECT coalesce(nickname, name), nullif(score, 0), greatest(a, b, c), least(a, b) FROM players
postgres	SELECT concat(first_name, ' ', last_name), concat_ws('-', a, b), initcap(name), left(code, 2), right(code, 3), lpad(id::text, 6, '0'), split_part(email, '@', 2), position('@' IN email), strpos(email, '@') FROM users
postgres	SELECT substring(phone FROM 1 FOR 3), btrim(name), reverse(name), repeat('*', 3), translate(name, 'ae', 'AE'), md5(email), char_length(name), octet_length(name) FROM users
postgres	SELECT regexp_replace(phone, '[^0-9]', '', 'g'), regexp_match(email, '@(.*)$'), name ~ '^A', name ~* 'smith', name !~ 'x' FROM users
postgres	SELECT * FROM users WHERE name SIMILAR TO '%(son|sen)' OR email LIKE 'a%'
postgres	SELECT payload -> 'user' ->> 'id', payload #>> '{items,0,sku}', payload ? 'coupon', payload @> '{"vip": true}' FROM events
postgres	SELECT jsonb_array_length(payload -> 'items'), jsonb_typeof(payload), jsonb_build_object('id', id, 'n', name), to_jsonb(name) FROM events
postgres	SELECT e.id, item ->> 'sku' FROM events e CROSS JOIN LATERAL jsonb_array_elements(e.payload -> 'items') AS item
postgres	SELECT key, value FROM events, jsonb_each_text(payload)
postgres	SELECT json_agg(name), jsonb_agg(id), json_build_object('a', 1) FROM users
postgres	SELECT d::date FROM generate_series(DATE '2024-01-01', DATE '2024-12-31', INTERVAL '1 month') AS d
postgres	SELECT unnest(tags) AS tag, count(*) FROM posts GROUP BY 1
postgres	SELECT array_length(tags, 1), cardinality(tags), array_to_string(tags, ','), tags[1] FROM posts WHERE 'sql' = ANY(tags)
postgres	SELECT * FROM orders WHERE customer_id = ANY(ARRAY[1, 2, 3]) AND status <> ALL(ARRAY['void'])
postgres	SELECT DISTINCT ON (customer_id) customer_id, created_at FROM orders ORDER BY customer_id, created_at DESC
postgres	SELECT name FROM customers ORDER BY spend DESC NULLS LAST FETCH FIRST 10 ROWS ONLY
postgres	SELECT name FROM customers LIMIT 10 OFFSET 5
postgres	SELECT * FROM public.orders o JOIN sales.customers c USING (customer_id)
postgres	SELECT "User"."Name" FROM "User" WHERE "User"."Id" = 1
postgres	SELECT round(avg(amount)::numeric, 2), ceil(x), floor(x), trunc(x, 1), abs(x), sign(x), sqrt(x), cbrt(x), power(x, 2), mod(a, b), div(a, b), ln(x), log(x), exp(x), width_bucket(x, 0, 100, 10) FROM t
postgres	SELECT random() < 0.1 AS sample FROM t
postgres	SELECT CASE WHEN total > 1000 THEN 'gold' ELSE 'silver' END, total IS DISTINCT FROM 0 FROM accounts
postgres	SELECT a.id FROM a LEFT JOIN b ON a.id = b.a_id WHERE b.a_id IS NULL
postgres	SELECT x FROM t1 UNION ALL SELECT x FROM t2 EXCEPT SELECT x FROM t3 ORDER BY x LIMIT 5
postgres	SELECT (SELECT max(amount) FROM orders o WHERE o.customer_id = c.id) AS biggest FROM customers c
postgres	TABLE customers
postgres	SELECT E'tab\tseparated', $$dollar 'quoted'$$, 'it''s' FROM t
postgres	SELECT now() AT TIME ZONE 'UTC', clock_timestamp(), localtimestamp FROM t
postgres	SELECT count(*) FROM orders GROUP BY ROLLUP (region, product)
postgres	SELECT region, product, sum(amount) FROM orders GROUP BY GROUPING SETS ((region), (product), ())
postgres	SELECT * FROM orders TABLESAMPLE BERNOULLI (10)
postgres	SELECT name FROM users WHERE created_at::date = CURRENT_DATE - 1
postgres	SELECT to_char(amount, 'FM999,999.00'), to_number('12,454.8-', '99G999D9S') FROM t
postgres	SELECT COUNT(*)::float / NULLIF(COUNT(DISTINCT customer_id), 0) FROM orders
postgres	SELECT "user", "current_user" FROM audit_log
postgres	SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM items i WHERE i.order_id = o.id AND i.sku LIKE 'A%')
postgres	SELECT strftime('%Y', created_at) FROM orders
postgres	SELECT CURRENT_TIME, ROW(1, 2), to_tsvector('english', body) @@ plainto_tsquery('cat') FROM docs
postgres	SELECT x.a, x.b FROM jsonb_to_recordset('[{"a": 1, "b": "x"}]') AS x(a int, b text)
postgres	WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT count(*) FROM r

-- MySQL / MariaDB
mysql	SELECT name, DATE_FORMAT(created_at, '%Y-%m') AS month FROM users
mysql	SELECT YEAR(created_at), MONTH(created_at), DAY(created_at), DAYOFWEEK(created_at), WEEK(created_at), QUARTER(created_at) FROM orders
mysql	SELECT DATEDIFF(shipped_at, ordered_at), TIMESTAMPDIFF(HOUR, ordered_at, shipped_at) FROM orders
mysql	SELECT DATE_ADD(created_at, INTERVAL 7 DAY), DATE_SUB(NOW(), INTERVAL 1 MONTH), CURDATE(), CURTIME(), NOW() FROM users
mysql	SELECT * FROM orders WHERE created_at >= NOW() - INTERVAL 30 DAY
mysql	SELECT STR_TO_DATE('01/02/2024', '%m/%d/%Y'), UNIX_TIMESTAMP(created_at), FROM_UNIXTIME(1700000000), LAST_DAY(created_at) FROM users
mysql	SELECT EXTRACT(YEAR_MONTH FROM created_at), DAYNAME(created_at), MONTHNAME(created_at), WEEKDAY(created_at) FROM orders
mysql	SELECT IF(amount > 100, 'big', 'small'), IFNULL(note, ''), COALESCE(a, b), NULLIF(a, 0) FROM orders
mysql	SELECT CONCAT(first_name, ' ', last_name), CONCAT_WS(',', a, b), SUBSTRING_INDEX(email, '@', -1), LOCATE('@', email), LEFT(name, 1), UPPER(name), LCASE(name) FROM users
mysql	SELECT GROUP_CONCAT(DISTINCT name ORDER BY name SEPARATOR ', ') FROM users GROUP BY country
mysql	SELECT LPAD(id, 6, '0'), REPLACE(name, 'a', 'b'), TRIM(name), CHAR_LENGTH(name), LENGTH(name), REVERSE(name), INSTR(name, 'x'), FIELD(status, 'a', 'b'), FIND_IN_SET('x', tags) FROM users
mysql	SELECT name FROM users WHERE name REGEXP '^[A-M]' AND email RLIKE 'example'
mysql	SELECT REGEXP_REPLACE(phone, '[^0-9]', ''), REGEXP_SUBSTR(email, '@.*') FROM users
mysql	SELECT JSON_EXTRACT(payload, '$.user.id'), JSON_UNQUOTE(JSON_EXTRACT(payload, '$.name')), payload->'$.a', payload->>'$.b' FROM events
mysql	SELECT JSON_OBJECT('id', id), JSON_ARRAYAGG(name), JSON_LENGTH(payload), JSON_CONTAINS(payload, '1', '$.ids'), JSON_KEYS(payload) FROM events GROUP BY id
mysql	SELECT customer_id, SUM(amount) OVER (PARTITION BY customer_id ORDER BY created_at) AS running FROM orders
mysql	SELECT name, RANK() OVER (ORDER BY score DESC) AS r, ROW_NUMBER() OVER w AS rn FROM players WINDOW w AS (ORDER BY id)
mysql	WITH top AS (SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id) SELECT * FROM top ORDER BY total DESC LIMIT 5
mysql	WITH RECURSIVE seq AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM seq WHERE n < 12) SELECT n FROM seq
mysql	SELECT `order`.`id`, `select` FROM `order` WHERE `group` = 1
mysql	SELECT * FROM orders LIMIT 10, 20
mysql	SELECT SQL_CALC_FOUND_ROWS id FROM orders LIMIT 10
mysql	SELECT DISTINCT country FROM users ORDER BY country
mysql	SELECT CAST(amount AS DECIMAL(10, 2)), CAST(created_at AS DATE), CONVERT(amount, SIGNED) FROM orders
mysql	SELECT ROUND(AVG(price), 2), TRUNCATE(price, 1), CEIL(price), FLOOR(price), ABS(x), POW(x, 2), SQRT(x), MOD(a, 3), RAND() FROM items
mysql	SELECT a.name FROM users a JOIN orders b ON a.id = b.user_id WHERE b.amount BETWEEN 10 AND 100 GROUP BY a.name HAVING COUNT(*) >= 2
mysql	SELECT name FROM users WHERE id IN (SELECT user_id FROM orders WHERE amount > (SELECT AVG(amount) FROM orders))
mysql	SELECT 'it\'s', "double quoted", 'tab\there' FROM dual
mysql	SELECT name FROM users # trailing comment
mysql	SELECT name FROM users -- trailing comment
mysql	SELECT name FROM users WHERE name = 'a' COLLATE utf8mb4_general_ci
mysql	SELECT user, host_name FROM accounts
mysql	SELECT COUNT(*) FROM users WHERE deleted_at IS NULL AND NOT banned
mysql	SELECT id, amount / NULLIF(qty, 0) AS unit_price FROM lines
mysql	SELECT STD(amount), VARIANCE(amount), BIT_OR(flags), MAX(amount) - MIN(amount) FROM orders
mysql	SELECT HOUR(ts), MINUTE(ts), SECOND(ts), TIME_TO_SEC(TIMEDIFF(end_ts, start_ts)) FROM shifts
mysql	SELECT YEARWEEK(created_at), PERIOD_DIFF(202401, 202312), MAKEDATE(2024, 32) FROM t
mysql	SELECT * FROM orders USE INDEX (idx_created) WHERE created_at > '2024-01-01'
mysql	SELECT name FROM users UNION ALL SELECT name FROM admins ORDER BY name LIMIT 100
mysql	SELECT name FROM customers WHERE name = 'O\'Brien'
mysql	SELECT 1 FROM DUAL WHERE EXISTS (SELECT 1 FROM users WHERE banned)

-- DuckDB
duckdb	SELECT city, count(*) AS n FROM members GROUP BY ALL ORDER BY n DESC
duckdb	SELECT date_trunc('month', ordered_at) AS month, sum(total) FROM orders GROUP BY 1 ORDER BY 1
duckdb	SELECT strftime(ordered_at, '%Y-%m') AS month, count(*) FROM orders GROUP BY month
duckdb	SELECT name, list(total ORDER BY total DESC)[1] AS biggest FROM members JOIN orders ON orders.member_id = members.id GROUP BY name
duckdb	SELECT member_id, total, rank() OVER (PARTITION BY member_id ORDER BY total DESC) AS r FROM orders QUALIFY r <= 3
duckdb	SELECT name FROM members WHERE name ILIKE '%ann%'
duckdb	SELECT extract(year FROM ordered_at) AS y, median(total), quantile_cont(total, 0.9) FROM orders GROUP BY y
duckdb	SELECT count(DISTINCT member_id) FILTER (WHERE total > 100) FROM orders
duckdb	FROM orders SELECT member_id, sum(total) GROUP BY member_id
duckdb	SELECT name, email FROM members ORDER BY name LIMIT 10

-- Snowflake
snowflake	SELECT city, COUNT(*) AS n FROM members GROUP BY city ORDER BY n DESC
snowflake	SELECT DATE_TRUNC('MONTH', ordered_at) AS month, SUM(total) FROM orders GROUP BY 1 ORDER BY 1
snowflake	SELECT member_id, total FROM orders QUALIFY ROW_NUMBER() OVER (PARTITION BY member_id ORDER BY total DESC) = 1
snowflake	SELECT DATEADD(month, -1, CURRENT_DATE()) AS since, COUNT(*) FROM orders WHERE ordered_at >= DATEADD(month, -1, CURRENT_DATE())
snowflake	SELECT IFF(total > 100, 'big', 'small') AS size, COUNT(*) FROM orders GROUP BY size
snowflake	SELECT name, LISTAGG(DISTINCT city, ', ') WITHIN GROUP (ORDER BY city) FROM members GROUP BY name
snowflake	SELECT DATEDIFF(day, MIN(ordered_at), MAX(ordered_at)) FROM orders
snowflake	SELECT name FROM members WHERE name ILIKE '%ann%' ORDER BY name LIMIT 10
snowflake	SELECT YEAR(ordered_at) AS y, MEDIAN(total) FROM orders GROUP BY y

-- BigQuery
bigquery	SELECT city, COUNT(*) AS n FROM members GROUP BY city ORDER BY n DESC
bigquery	SELECT DATE_TRUNC(ordered_at, MONTH) AS month, SUM(total) FROM orders GROUP BY month ORDER BY month
bigquery	SELECT EXTRACT(YEAR FROM ordered_at) AS y, COUNTIF(total > 100) FROM orders GROUP BY y
bigquery	SELECT FORMAT_DATE('%Y-%m', ordered_at) AS month, COUNT(*) FROM orders GROUP BY month
bigquery	SELECT member_id, total FROM orders QUALIFY ROW_NUMBER() OVER (PARTITION BY member_id ORDER BY total DESC) = 1
bigquery	SELECT SAFE_DIVIDE(SUM(total), COUNT(DISTINCT member_id)) FROM orders
bigquery	SELECT name FROM members WHERE LOWER(name) LIKE '%ann%' ORDER BY name LIMIT 10
bigquery	SELECT DATE_DIFF(MAX(ordered_at), MIN(ordered_at), DAY) FROM orders
bigquery	SELECT m.name, SUM(o.total) FROM sales.members AS m JOIN sales.orders AS o ON o.member_id = m.id GROUP BY m.name

-- Databricks SQL
databricks	SELECT city, count(*) AS n FROM members GROUP BY city ORDER BY n DESC
databricks	SELECT date_trunc('MONTH', ordered_at) AS month, sum(total) FROM orders GROUP BY 1 ORDER BY 1
databricks	SELECT year(ordered_at) AS y, percentile_approx(total, 0.5) FROM orders GROUP BY y
databricks	SELECT member_id, total FROM orders QUALIFY row_number() OVER (PARTITION BY member_id ORDER BY total DESC) = 1
databricks	SELECT datediff(max(ordered_at), min(ordered_at)) FROM orders
databricks	SELECT name, collect_list(city) FROM members GROUP BY name
databricks	SELECT name FROM members WHERE name ILIKE '%ann%' ORDER BY name LIMIT 10
databricks	SELECT m.name, sum(o.total) FROM sales.members AS m JOIN sales.orders AS o ON o.member_id = m.id GROUP BY m.name

-- Trino
trino	SELECT city, count(*) AS n FROM members GROUP BY city ORDER BY n DESC
trino	SELECT date_trunc('month', ordered_at) AS month, sum(total) FROM orders GROUP BY 1 ORDER BY 1
trino	SELECT year(ordered_at) AS y, approx_percentile(total, 0.5) FROM orders GROUP BY year(ordered_at)
trino	SELECT count_if(total > 100), count(DISTINCT member_id) FROM orders
trino	SELECT date_diff('day', min(ordered_at), max(ordered_at)) FROM orders
trino	SELECT name FROM members WHERE lower(name) LIKE '%ann%' ORDER BY name LIMIT 10
trino	SELECT m.name, sum(o.total) FROM sales.members AS m JOIN sales.orders AS o ON o.member_id = m.id GROUP BY m.name
trino	SELECT member_id, total, rank() OVER (PARTITION BY member_id ORDER BY total DESC) FROM orders

-- Redshift
redshift	SELECT city, COUNT(*) AS n FROM members GROUP BY city ORDER BY n DESC
redshift	SELECT DATE_TRUNC('month', ordered_at) AS month, SUM(total) FROM orders GROUP BY 1 ORDER BY 1
redshift	SELECT DATEADD(month, -1, GETDATE()), COUNT(*) FROM orders WHERE ordered_at >= DATEADD(month, -1, GETDATE())
redshift	SELECT DATEDIFF(day, MIN(ordered_at), MAX(ordered_at)) FROM orders
redshift	SELECT name, LISTAGG(city, ', ') WITHIN GROUP (ORDER BY city) FROM members GROUP BY name
redshift	SELECT NVL(email, 'none') FROM members ORDER BY name LIMIT 10
redshift	SELECT m.name, SUM(o.total) FROM sales.members AS m JOIN sales.orders AS o ON o.member_id = m.id GROUP BY m.name
redshift	SELECT EXTRACT(YEAR FROM ordered_at) AS y, MEDIAN(total) FROM orders GROUP BY 1
