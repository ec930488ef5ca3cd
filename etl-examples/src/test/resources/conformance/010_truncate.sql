-- 010_truncate.pl: TRUNCATE of a published table, with RESTART IDENTITY, of tables linked by a
-- foreign key, and of a published and an unpublished table together. The original's three
-- publications become one (pub3 with tab1 added); the insert-only publication is its own scenario;
-- synchronous replication and two subscriptions of one table are subscriber-side and left out.
--! publication pub3
--@ absent public.tab2
--@ setup
CREATE TABLE tab1 (a int PRIMARY KEY);
CREATE TABLE tab2 (a int PRIMARY KEY);
CREATE TABLE tab3 (a int PRIMARY KEY);
CREATE TABLE tab4 (x int PRIMARY KEY, y int REFERENCES tab3);
CREATE PUBLICATION pub3 FOR TABLE tab1, tab3, tab4;
--@ workload
INSERT INTO tab1 VALUES (1), (2), (3);
--@ expect SELECT count(*), min(a), max(a) FROM tab1 => 3|1|3
TRUNCATE tab1;
--@ expect SELECT count(*), min(a), max(a) FROM tab1 => 0||
INSERT INTO tab1 VALUES (4);
TRUNCATE tab1 RESTART IDENTITY;
INSERT INTO tab3 VALUES (1), (2), (3);
INSERT INTO tab4 VALUES (11, 1), (111, 1), (22, 2);
--@ kill
TRUNCATE tab3, tab4;
--@ expect SELECT (SELECT count(*) FROM tab3), (SELECT count(*) FROM tab4) => 0|0
INSERT INTO tab1 VALUES (1), (2), (3);
INSERT INTO tab2 VALUES (1), (2), (3);
TRUNCATE tab1, tab2;
--@ expect SELECT count(*), min(a), max(a) FROM tab1 => 0||
INSERT INTO tab1 VALUES (5);
INSERT INTO tab3 VALUES (7);
