-- 006_rewrite.pl: ALTER TABLE ... ADD COLUMN ... NOT NULL DEFAULT, which rewrites the table,
-- while replicating. The rows that existed before hold the default in the source; the mirror must
-- hold it too.
--! publication mypub
--@ setup
CREATE TABLE test1 (a int, b text);
CREATE PUBLICATION mypub FOR ALL TABLES;
--@ workload
INSERT INTO test1 (a, b) VALUES (1, 'one'), (2, 'two');
--@ expect SELECT a, b FROM test1 ORDER BY a => 1|one;2|two
--@ kill
ALTER TABLE test1 ADD c int NOT NULL DEFAULT 0;
INSERT INTO test1 (a, b, c) VALUES (3, 'three', 33);
--@ expect SELECT a, b, c FROM test1 ORDER BY a => 1|one|0;2|two|0;3|three|33
