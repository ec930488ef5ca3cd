-- 010_truncate.pl, publication pub2: a publication without truncate, then with it. The original
-- inserts its rows on the subscriber; here they are inserted on the publisher.
--! publication pub2
--@ setup
CREATE TABLE tab2 (a int PRIMARY KEY);
CREATE PUBLICATION pub2 FOR TABLE tab2 WITH (publish = insert);
--@ workload
INSERT INTO tab2 VALUES (1), (2), (3);
TRUNCATE tab2;
--@ expect SELECT count(*), min(a), max(a) FROM tab2 => 3|1|3
--@ kill
ALTER PUBLICATION pub2 SET (publish = 'insert, truncate');
INSERT INTO tab2 VALUES (4);
TRUNCATE tab2;
--@ expect SELECT count(*), min(a), max(a) FROM tab2 => 0||
INSERT INTO tab2 VALUES (5);
