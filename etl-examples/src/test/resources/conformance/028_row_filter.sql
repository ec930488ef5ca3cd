-- 028_row_filter.pl, the FOR TABLE part, as one publication: row filters on a REPLICA IDENTITY
-- FULL table (inserts, updates into and out of the filter, deletes), on a keyed table, a table
-- without filter, partitions with and without filters published through their leaves, a filter
-- on a TOASTed column (an update that leaves it unchanged brings the row into the filter), and a
-- filter on a table with an inheritance child. Filters OR'ed across several publications of the
-- original become one filter each here; the part that switches publish_via_partition_root is its
-- own publication in the original and needs a second pipeline, so it is left out, as is the
-- TABLES IN SCHEMA part. The comparison applies the filters of pg_publication_tables.
--! publication tap_pub_1
--@ setup
CREATE TABLE tab_rowfilter_1 (a int primary key, b text);
ALTER TABLE tab_rowfilter_1 REPLICA IDENTITY FULL;
CREATE TABLE tab_rowfilter_2 (c int primary key);
CREATE TABLE tab_rowfilter_3 (a int primary key, b boolean);
CREATE TABLE tab_rowfilter_4 (c int primary key);
CREATE TABLE tab_rowfilter_partitioned (a int primary key, b integer) PARTITION BY RANGE(a);
CREATE TABLE tab_rowfilter_less_10k (LIKE tab_rowfilter_partitioned);
ALTER TABLE tab_rowfilter_partitioned ATTACH PARTITION tab_rowfilter_less_10k FOR VALUES FROM (MINVALUE) TO (10000);
CREATE TABLE tab_rowfilter_greater_10k (LIKE tab_rowfilter_partitioned);
ALTER TABLE tab_rowfilter_partitioned ATTACH PARTITION tab_rowfilter_greater_10k FOR VALUES FROM (10000) TO (MAXVALUE);
CREATE TABLE tab_rowfilter_toast (a text NOT NULL, b text NOT NULL);
ALTER TABLE tab_rowfilter_toast ALTER COLUMN a SET STORAGE EXTERNAL;
CREATE UNIQUE INDEX tab_rowfilter_toast_ri_index on tab_rowfilter_toast (a, b);
ALTER TABLE tab_rowfilter_toast REPLICA IDENTITY USING INDEX tab_rowfilter_toast_ri_index;
CREATE TABLE tab_rowfilter_inherited (a int);
CREATE TABLE tab_rowfilter_child (b text) INHERITS (tab_rowfilter_inherited);
CREATE PUBLICATION tap_pub_1 FOR TABLE tab_rowfilter_1 WHERE (a > 1000 AND b <> 'filtered');
ALTER PUBLICATION tap_pub_1 ADD TABLE tab_rowfilter_2 WHERE (c % 7 = 0);
ALTER PUBLICATION tap_pub_1 SET TABLE tab_rowfilter_1 WHERE (a > 1000 AND b <> 'filtered'), tab_rowfilter_2 WHERE (c % 2 = 0 OR c % 3 = 0), tab_rowfilter_3, tab_rowfilter_4, tab_rowfilter_partitioned, tab_rowfilter_less_10k WHERE (a < 6000), tab_rowfilter_toast WHERE (a = repeat('1234567890', 200) AND b < '10'), tab_rowfilter_inherited WHERE (a > 15);
INSERT INTO tab_rowfilter_1 (a, b) VALUES (1, 'not replicated');
INSERT INTO tab_rowfilter_1 (a, b) VALUES (1500, 'filtered');
INSERT INTO tab_rowfilter_1 (a, b) VALUES (1980, 'not filtered');
INSERT INTO tab_rowfilter_1 (a, b) SELECT x, 'test ' || x FROM generate_series(990,1002) x;
INSERT INTO tab_rowfilter_2 (c) SELECT generate_series(1, 20);
INSERT INTO tab_rowfilter_3 (a, b) SELECT x, (x % 3 = 0) FROM generate_series(1, 10) x;
INSERT INTO tab_rowfilter_4 (c) SELECT generate_series(1, 10);
INSERT INTO tab_rowfilter_partitioned (a, b) VALUES(1, 100),(7000, 101),(15000, 102),(5500, 300);
INSERT INTO tab_rowfilter_less_10k (a, b) VALUES(2, 200),(6005, 201);
INSERT INTO tab_rowfilter_greater_10k (a, b) VALUES(16000, 103);
INSERT INTO tab_rowfilter_toast(a, b) VALUES(repeat('1234567890', 200), '1234567890');
INSERT INTO tab_rowfilter_inherited(a) VALUES(10),(20);
INSERT INTO tab_rowfilter_child(a, b) VALUES(0,'0'),(30,'30'),(40,'40');
--@ workload
--@ expect SELECT a, b FROM tab_rowfilter_1 ORDER BY 1, 2 => 1001|test 1001;1002|test 1002;1980|not filtered
--@ expect SELECT count(c), min(c), max(c) FROM tab_rowfilter_2 => 13|2|20
--@ expect SELECT a, b FROM tab_rowfilter_less_10k ORDER BY 1, 2 => 1|100;2|200;5500|300
--@ expect SELECT count(*) FROM tab_rowfilter_toast => 0
--@ expect SELECT string_agg(a::text, ',' ORDER BY a) FROM tab_rowfilter_inherited => 20
--@ expect SELECT string_agg(a::text, ',' ORDER BY a) FROM tab_rowfilter_child => 30,40
INSERT INTO tab_rowfilter_1 (a, b) VALUES (800, 'test 800');
INSERT INTO tab_rowfilter_1 (a, b) VALUES (1600, 'test 1600');
INSERT INTO tab_rowfilter_1 (a, b) VALUES (1601, 'test 1601');
INSERT INTO tab_rowfilter_1 (a, b) VALUES (1602, 'filtered');
INSERT INTO tab_rowfilter_1 (a, b) VALUES (1700, 'test 1700');
--@ kill
UPDATE tab_rowfilter_1 SET b = NULL WHERE a = 1600;
UPDATE tab_rowfilter_1 SET b = 'test 1601 updated' WHERE a = 1601;
UPDATE tab_rowfilter_1 SET b = 'test 1602 updated' WHERE a = 1602;
DELETE FROM tab_rowfilter_1 WHERE a = 1700;
INSERT INTO tab_rowfilter_2 (c) VALUES (21), (22), (23), (24), (25);
INSERT INTO tab_rowfilter_4 (c) VALUES (0), (11), (12);
INSERT INTO tab_rowfilter_inherited (a) VALUES (14), (16);
INSERT INTO tab_rowfilter_child (a, b) VALUES (13, '13'), (17, '17');
--@ expect SELECT a, b FROM tab_rowfilter_1 ORDER BY 1, 2 => 1001|test 1001;1002|test 1002;1601|test 1601 updated;1602|test 1602 updated;1980|not filtered
--@ expect SELECT count(c), min(c), max(c) FROM tab_rowfilter_2 => 16|2|24
--@ expect SELECT count(c), min(c), max(c) FROM tab_rowfilter_4 => 13|0|12
INSERT INTO tab_rowfilter_less_10k (a, b) VALUES(4500, 450);
INSERT INTO tab_rowfilter_less_10k (a, b) VALUES(5600, 123);
INSERT INTO tab_rowfilter_greater_10k (a, b) VALUES(14000, 1950);
UPDATE tab_rowfilter_less_10k SET b = 30 WHERE a = 4500;
UPDATE tab_rowfilter_toast SET b = '1';
--@ expect SELECT a = repeat('1234567890', 200), b FROM tab_rowfilter_toast => t|1
