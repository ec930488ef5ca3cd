-- 031_column_list.pl, as one publication: column lists on a plain table (a quoted upper-case
-- column), on columns with quotes in their names, on a partitioned table published through its
-- root, on a table with an enum column; updates of listed and unlisted columns; a table added to
-- the publication with a column list while replicating; a table whose primary key moves to other
-- columns of the list. Overlapping publications and subscriptions re-created per case are
-- subscriber-side; the later cases of the original that need publications of their own with
-- other options are left out. The comparison reads only the listed columns.
--! publication pub1
--@ setup
CREATE TABLE tab1 (a int PRIMARY KEY, "B" int, c int);
CREATE TABLE tab2 (a int PRIMARY KEY, b varchar, c int);
CREATE TABLE tab3 ("a'" int PRIMARY KEY, "B" varchar, "c'" int);
CREATE TABLE test_part (a int PRIMARY KEY, b text, c timestamptz) PARTITION BY LIST (a);
CREATE TABLE test_part_1_1 PARTITION OF test_part FOR VALUES IN (1,2,3,4,5,6);
CREATE TABLE test_part_2_1 PARTITION OF test_part FOR VALUES IN (7,8,9,10,11,12) PARTITION BY LIST (a);
CREATE TABLE test_part_2_2 PARTITION OF test_part_2_1 FOR VALUES IN (7,8,9,10);
CREATE TYPE test_typ AS ENUM ('blue', 'red');
CREATE TABLE tab4 (a INT PRIMARY KEY, b test_typ, c int, d text);
CREATE TABLE tab6 (a int PRIMARY KEY, b int, c int, d int);
CREATE PUBLICATION pub1 FOR TABLE tab1 (a, "B"), tab3 ("a'", "c'"), test_part (a, b), tab4 (a, b, d), tab6 (a, b) WITH (publish_via_partition_root = 'true');
INSERT INTO tab1 VALUES (1, 2, 3);
INSERT INTO tab1 VALUES (4, 5, 6);
INSERT INTO tab3 VALUES (1, 2, 3);
INSERT INTO tab3 VALUES (4, 5, 6);
INSERT INTO tab4 VALUES (1, 'red', 3, 'oh my');
INSERT INTO tab4 VALUES (2, 'blue', 4, 'hello');
INSERT INTO test_part VALUES (1, 'abc', '2021-07-04 12:00:00');
INSERT INTO test_part VALUES (2, 'bcd', '2021-07-03 11:12:13');
INSERT INTO test_part VALUES (7, 'abc', '2021-07-04 12:00:00');
INSERT INTO test_part VALUES (8, 'bcd', '2021-07-03 11:12:13');
INSERT INTO tab6 VALUES (1, 22, 333, 4444);
--@ workload
--@ expect SELECT * FROM tab1 ORDER BY a => 1|2;4|5
--@ expect SELECT * FROM test_part ORDER BY a => 1|abc;2|bcd;7|abc;8|bcd
INSERT INTO tab1 VALUES (2, 3, 4);
INSERT INTO tab1 VALUES (5, 6, 7);
INSERT INTO tab3 VALUES (2, 3, 4);
INSERT INTO tab3 VALUES (5, 6, 7);
INSERT INTO tab4 VALUES (3, 'red', 5, 'foo');
INSERT INTO tab4 VALUES (4, 'blue', 6, 'bar');
INSERT INTO test_part VALUES (3, 'xxx', '2022-02-01 10:00:00');
INSERT INTO test_part VALUES (4, 'yyy', '2022-03-02 15:12:13');
INSERT INTO test_part VALUES (9, 'zzz', '2022-04-03 21:00:00');
INSERT INTO test_part VALUES (10, 'qqq', '2022-05-04 22:12:13');
UPDATE tab1 SET "B" = 2 * "B" where a = 1;
UPDATE tab1 SET c = 2*c where a = 4;
UPDATE tab3 SET "B" = "B" || ' updated' where "a'" = 4;
UPDATE tab3 SET "c'" = 2 * "c'" where "a'" = 1;
--@ kill
UPDATE tab4 SET b = 'blue', c = c * 2, d = d || ' updated' where a = 1;
UPDATE tab4 SET b = 'red', c = c * 2, d = d || ' updated' where a = 2;
--@ expect SELECT * FROM tab3 ORDER BY "a'" => 1|6;2|4;4|6;5|7
--@ expect SELECT * FROM tab4 ORDER BY a => 1|blue|oh my updated;2|red|hello updated;3|red|foo;4|blue|bar
INSERT INTO tab2 VALUES (1, 'abc', 3);
ALTER PUBLICATION pub1 ADD TABLE tab2 (a, b);
INSERT INTO tab2 VALUES (2, 'def', 6);
--@ expect SELECT * FROM tab2 ORDER BY a => 1|abc;2|def
UPDATE tab2 SET c = 5 where a = 1;
UPDATE tab2 SET b = 'xyz' where a = 2;
INSERT INTO tab6 VALUES (2, 33, 444, 5555);
UPDATE tab6 SET b = b * 2, c = c * 3, d = d * 4;
ALTER TABLE tab6 DROP CONSTRAINT tab6_pkey;
ALTER TABLE tab6 ADD PRIMARY KEY (b);
INSERT INTO tab6 VALUES (3, 55, 666, 8888);
UPDATE tab6 SET b = b * 2, c = c * 3, d = d * 4;
--@ expect SELECT * FROM tab6 ORDER BY a => 1|88;2|132;3|110
