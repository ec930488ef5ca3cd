-- 013_partition.pl, second half: publish_via_partition_root (pub_viaroot): a root and one of its
-- leaves in the publication (changes go out once, as the root's), a leaf whose parent is not
-- published (its own identity), a sub-partitioned table published from its middle level, updates
-- across leaves, truncates of leaves (not replicated through the root) and of roots, columns
-- dropped and added on the root, and a leaf attached while replicating, which belongs to the root.
--! publication pub_viaroot
--@ setup
CREATE TABLE tab2 (a int PRIMARY KEY, b text) PARTITION BY LIST (a);
CREATE TABLE tab2_1 (b text, a int NOT NULL);
ALTER TABLE tab2 ATTACH PARTITION tab2_1 FOR VALUES IN (0, 1, 2, 3);
CREATE TABLE tab2_2 PARTITION OF tab2 FOR VALUES IN (5, 6);
CREATE TABLE tab3 (a int PRIMARY KEY, b text) PARTITION BY LIST (a);
CREATE TABLE tab3_1 PARTITION OF tab3 FOR VALUES IN (0, 1, 2, 3, 5, 6);
CREATE TABLE tab4 (a int PRIMARY KEY) PARTITION BY LIST (a);
CREATE TABLE tab4_1 PARTITION OF tab4 FOR VALUES IN (-1, 0, 1) PARTITION BY LIST (a);
CREATE TABLE tab4_1_1 PARTITION OF tab4_1 FOR VALUES IN (-1, 0, 1);
CREATE PUBLICATION pub_viaroot FOR TABLE tab2, tab2_1, tab3_1, tab4_1 WITH (publish_via_partition_root = true);
INSERT INTO tab2 VALUES (1);
INSERT INTO tab4 VALUES (-1);
--@ absent public.tab2_1
--@ absent public.tab4_1_1
--@ workload
INSERT INTO tab2 VALUES (0), (3), (5);
INSERT INTO tab3 VALUES (1), (0), (3), (5);
INSERT INTO tab4 VALUES (0);
--@ expect SELECT (SELECT string_agg(a::text, ',' ORDER BY a) FROM tab2), (SELECT string_agg(a::text, ',' ORDER BY a) FROM tab3_1), (SELECT string_agg(a::text, ',' ORDER BY a) FROM tab4_1) => 0,1,3,5|0,1,3,5|-1,0
INSERT INTO tab4 VALUES (1);
UPDATE tab2 SET a = 6 WHERE a = 5;
UPDATE tab3 SET a = 6 WHERE a = 5;
UPDATE tab2 SET a = 2 WHERE a = 6;
UPDATE tab3 SET a = 2 WHERE a = 6;
--@ kill
DELETE FROM tab2;
DELETE FROM tab3;
INSERT INTO tab2 VALUES (1), (2), (5);
TRUNCATE tab2_1;
-- a truncate of a leaf is not sent through the root: the mirror keeps the leaf's rows
--@ expect SELECT string_agg(a::text, ',' ORDER BY a) FROM tab2 => 1,2,5
TRUNCATE tab2, tab3;
ALTER TABLE tab2 DROP b, ADD COLUMN c text DEFAULT 'pub_tab2', ADD b text;
INSERT INTO tab2 (a, b) VALUES (1, 'xxx'), (3, 'yyy'), (5, 'zzz');
INSERT INTO tab2 (a, b, c) VALUES (6, 'aaa', 'xxx_c');
UPDATE tab2 SET b = 'quux' WHERE a = 5;
DELETE FROM tab2 WHERE a = 1;
--@ expect SELECT c, a, b FROM tab2 ORDER BY a => pub_tab2|3|yyy;pub_tab2|5|quux;xxx_c|6|aaa
CREATE TABLE tab2_3 PARTITION OF tab2 FOR VALUES IN (7, 8);
INSERT INTO tab2 (a, b) VALUES (7, 'new leaf');
--@ expect SELECT a, b FROM tab2 WHERE a = 7 => 7|new leaf
--@ absent public.tab2_3
