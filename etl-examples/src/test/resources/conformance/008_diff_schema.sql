-- 008_diff_schema.pl: the publisher side only. The subscriber's extra columns with local defaults
-- do not apply to a mirror, which creates its tables from the source's schema; the table created
-- later (test_tab2) is picked up without a refresh.
--! publication tap_pub
--@ setup
CREATE TABLE test_tab (a int primary key, b varchar);
INSERT INTO test_tab VALUES (1, 'foo'), (2, 'bar');
CREATE PUBLICATION tap_pub FOR ALL TABLES;
--@ workload
UPDATE test_tab SET b = encode(sha256(b::bytea), 'hex');
UPDATE test_tab SET b = encode(sha256(a::text::bytea), 'hex');
--@ kill
INSERT INTO test_tab VALUES (3, 'baz');
CREATE TABLE test_tab2 (a int);
INSERT INTO test_tab2 VALUES (1);
--@ expect SELECT count(*), min(a), max(a) FROM test_tab2 => 1|1|1
