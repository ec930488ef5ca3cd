-- 013_partition.pl, first half: a partitioned table published through its leaves (a FOR ALL
-- TABLES publication without publish_via_partition_root, as pub_all): inserts into the root and
-- into leaves, a leaf whose columns are in another order, updates within a leaf and across leaves
-- (sent as a delete and an insert), deletes, truncates of a leaf and of the root. The subscriber's
-- own partitioning, triggers and conflict logging are subscriber-side and left out; the conflict
-- cases of the original (rows deleted on the subscriber) become plain changes here.
--! publication pub_all
--@ setup
CREATE TABLE tab1 (a int PRIMARY KEY, b text) PARTITION BY LIST (a);
CREATE TABLE tab1_1 (b text, a int NOT NULL);
ALTER TABLE tab1 ATTACH PARTITION tab1_1 FOR VALUES IN (1, 2, 3);
CREATE TABLE tab1_2 PARTITION OF tab1 FOR VALUES IN (4, 5, 6);
CREATE TABLE tab1_def PARTITION OF tab1 DEFAULT;
CREATE PUBLICATION pub_all FOR ALL TABLES;
--@ workload
INSERT INTO tab1 VALUES (1);
INSERT INTO tab1_1 (a) VALUES (3);
INSERT INTO tab1_2 VALUES (5);
INSERT INTO tab1 VALUES (0);
--@ expect SELECT (SELECT string_agg(a::text, ',' ORDER BY a) FROM tab1_1), (SELECT string_agg(a::text, ',') FROM tab1_2), (SELECT string_agg(a::text, ',') FROM tab1_def) => 1,3|5|0
UPDATE tab1 SET a = 2 WHERE a = 1;
UPDATE tab1 SET a = 6 WHERE a = 5;
UPDATE tab1 SET a = 4 WHERE a = 6;
UPDATE tab1 SET a = 6 WHERE a = 4;
--@ kill
UPDATE tab1 SET a = 1 WHERE a = 0;
UPDATE tab1 SET a = 4 WHERE a = 1;
--@ expect SELECT (SELECT string_agg(a::text, ',' ORDER BY a) FROM tab1_1), (SELECT string_agg(a::text, ',' ORDER BY a) FROM tab1_2), (SELECT count(*) FROM tab1_def) => 2,3|4,6|0
DELETE FROM tab1 WHERE a IN (2, 3, 5);
DELETE FROM tab1_2;
INSERT INTO tab1 VALUES (1), (2), (5);
TRUNCATE tab1_2;
--@ expect SELECT (SELECT string_agg(a::text, ',' ORDER BY a) FROM tab1_1), (SELECT count(*) FROM tab1_2) => 1,2|0
TRUNCATE tab1;
INSERT INTO tab1 VALUES (1, 'foo'), (4, 'bar'), (10, 'baz');
UPDATE tab1 SET b = 'quux' WHERE a = 4;
DELETE FROM tab1 WHERE a = 1;
