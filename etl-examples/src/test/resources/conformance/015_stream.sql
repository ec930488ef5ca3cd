-- 015_stream.pl: two interleaved transactions each larger than logical_decoding_work_mem (64kB),
-- streamed while in progress, one committed after the other started; then a large streamed
-- transaction and a small one after it. The killed pass kills the pipeline while the first large
-- transaction is open and already partly streamed. The subscriber's extra columns and binary
-- switch are subscriber-side and left out.
--! publication tap_pub
--! streaming 64kB
--@ setup
CREATE TABLE test_tab (a int primary key, b varchar);
INSERT INTO test_tab VALUES (1, 'foo'), (2, 'bar');
CREATE PUBLICATION tap_pub FOR TABLE test_tab;
--@ workload
--@ expect SELECT count(*) FROM test_tab => 2
--@ on 1
BEGIN;
INSERT INTO test_tab SELECT i, md5(i::text) FROM generate_series(3, 5000) s(i);
UPDATE test_tab SET b = md5(b) WHERE mod(a,2) = 0;
--@ kill
DELETE FROM test_tab WHERE mod(a,3) = 0;
--@ on 2
BEGIN;
INSERT INTO test_tab SELECT i, md5(i::text) FROM generate_series(5001, 9999) s(i);
DELETE FROM test_tab WHERE a > 5000;
COMMIT;
--@ on 1
COMMIT;
--@ expect SELECT count(*) FROM test_tab => 3334
BEGIN;
INSERT INTO test_tab SELECT i, md5(i::text) FROM generate_series(5001, 10000) s(i);
UPDATE test_tab SET b = md5(b) WHERE mod(a,2) = 0;
DELETE FROM test_tab WHERE mod(a,3) = 0;
COMMIT;
--@ expect SELECT count(*) FROM test_tab => 6667
UPDATE test_tab SET b = md5(a::text);
