-- 018_stream_subxact_abort.pl: streamed transactions with rollbacks to savepoints (in and out of
-- order), a whole streamed transaction rolled back, and a table without a key with an aborted
-- transaction and an aborted subtransaction. Run twice as in the original (streaming 'on' and
-- 'parallel' are subscriber-side modes); the serialization to files is subscriber-side.
--! publication tap_pub
--! streaming immediate
--@ setup
CREATE TABLE test_tab (a int primary key, b bytea);
INSERT INTO test_tab VALUES (1, 'foo'), (2, 'bar');
CREATE TABLE test_tab_2 (a int);
CREATE PUBLICATION tap_pub FOR TABLE test_tab, test_tab_2;
--@ workload
BEGIN;
INSERT INTO test_tab VALUES (3, sha256(3::text::bytea));
SAVEPOINT s1;
INSERT INTO test_tab VALUES (4, sha256(4::text::bytea));
SAVEPOINT s2;
INSERT INTO test_tab VALUES (5, sha256(5::text::bytea));
SAVEPOINT s3;
INSERT INTO test_tab VALUES (6, sha256(6::text::bytea));
ROLLBACK TO s2;
INSERT INTO test_tab VALUES (7, sha256(7::text::bytea));
ROLLBACK TO s1;
INSERT INTO test_tab VALUES (8, sha256(8::text::bytea));
SAVEPOINT s4;
INSERT INTO test_tab VALUES (9, sha256(9::text::bytea));
SAVEPOINT s5;
INSERT INTO test_tab VALUES (10, sha256(10::text::bytea));
COMMIT;
--@ expect SELECT count(*) FROM test_tab => 6
BEGIN;
INSERT INTO test_tab VALUES (11, sha256(11::text::bytea));
SAVEPOINT s1;
INSERT INTO test_tab VALUES (12, sha256(12::text::bytea));
SAVEPOINT s2;
INSERT INTO test_tab VALUES (13, sha256(13::text::bytea));
SAVEPOINT s3;
INSERT INTO test_tab VALUES (14, sha256(14::text::bytea));
RELEASE s2;
INSERT INTO test_tab VALUES (15, sha256(15::text::bytea));
ROLLBACK TO s1;
COMMIT;
--@ expect SELECT count(*) FROM test_tab => 7
BEGIN;
INSERT INTO test_tab VALUES (16, sha256(16::text::bytea));
SAVEPOINT s1;
INSERT INTO test_tab VALUES (17, sha256(17::text::bytea));
SAVEPOINT s2;
INSERT INTO test_tab VALUES (18, sha256(18::text::bytea));
ROLLBACK;
--@ expect SELECT count(*) FROM test_tab => 7
DELETE FROM test_tab WHERE (a > 2);
BEGIN;
INSERT INTO test_tab VALUES (3, sha256(3::text::bytea));
SAVEPOINT s1;
INSERT INTO test_tab VALUES (4, sha256(4::text::bytea));
SAVEPOINT s2;
INSERT INTO test_tab VALUES (5, sha256(5::text::bytea));
SAVEPOINT s3;
--@ kill
INSERT INTO test_tab VALUES (6, sha256(6::text::bytea));
ROLLBACK TO s2;
INSERT INTO test_tab VALUES (7, sha256(7::text::bytea));
ROLLBACK TO s1;
INSERT INTO test_tab VALUES (8, sha256(8::text::bytea));
SAVEPOINT s4;
INSERT INTO test_tab VALUES (9, sha256(9::text::bytea));
SAVEPOINT s5;
INSERT INTO test_tab VALUES (10, sha256(10::text::bytea));
COMMIT;
BEGIN;
INSERT INTO test_tab VALUES (16, sha256(16::text::bytea));
SAVEPOINT s1;
INSERT INTO test_tab VALUES (17, sha256(17::text::bytea));
ROLLBACK;
BEGIN;
INSERT INTO test_tab_2 values(1);
ROLLBACK;
BEGIN;
INSERT INTO test_tab_2 values(1);
SAVEPOINT sp;
INSERT INTO test_tab_2 values(1);
ROLLBACK TO sp;
COMMIT;
--@ expect SELECT (SELECT count(*) FROM test_tab), (SELECT count(*) FROM test_tab_2) => 6|1
