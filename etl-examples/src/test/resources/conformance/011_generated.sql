-- 011_generated.pl: a stored generated column is not published (PostgreSQL 17 and older, and 18
-- by default); the mirror holds the other columns. The subscriber computing its own generated
-- value (a * 22) is subscriber-side and left out.
--! publication pub1
--@ setup
CREATE TABLE tab1 (a int PRIMARY KEY, b int GENERATED ALWAYS AS (a * 2) STORED);
INSERT INTO tab1 (a) VALUES (1), (2), (3);
CREATE PUBLICATION pub1 FOR ALL TABLES;
--@ workload
--@ expect SELECT string_agg(a::text, ',' ORDER BY a) FROM tab1 => 1,2,3
INSERT INTO tab1 VALUES (4), (5);
--@ kill
UPDATE tab1 SET a = 6 WHERE a = 5;
--@ expect SELECT string_agg(a::text, ',' ORDER BY a) FROM tab1 => 1,2,3,4,6
