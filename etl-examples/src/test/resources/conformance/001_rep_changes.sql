-- 001_rep_changes.pl, publication tap_pub: inserts, updates, deletes of a keyed table, a table
-- whose columns the subscriber orders differently, REPLICA IDENTITY FULL tables with duplicate
-- rows and text values, a table left out of the publication.
--! publication tap_pub
--@ absent public.tab_notrep
--@ setup
CREATE TABLE tab_notrep AS SELECT generate_series(1,10) AS a;
CREATE TABLE tab_full AS SELECT generate_series(1,10) AS a;
CREATE TABLE tab_full2 (x text);
INSERT INTO tab_full2 VALUES ('a'), ('b'), ('b');
CREATE TABLE tab_rep (a int primary key);
CREATE TABLE tab_mixed (a int primary key, b text);
INSERT INTO tab_mixed (a, b) VALUES (1, 'foo');
CREATE PUBLICATION tap_pub;
ALTER PUBLICATION tap_pub ADD TABLE tab_rep, tab_full, tab_full2, tab_mixed;
--@ workload
INSERT INTO tab_rep SELECT generate_series(1,50);
DELETE FROM tab_rep WHERE a > 20;
UPDATE tab_rep SET a = -a;
INSERT INTO tab_mixed VALUES (2, 'bar');
--@ expect SELECT count(*), min(a), max(a) FROM tab_rep => 20|-20|-1
--@ kill
INSERT INTO tab_full SELECT generate_series(1,10);
ALTER TABLE tab_full REPLICA IDENTITY FULL;
ALTER TABLE tab_full2 REPLICA IDENTITY FULL;
UPDATE tab_full SET a = a * a;
UPDATE tab_full2 SET x = 'bb' WHERE x = 'b';
--@ expect SELECT count(*), min(a), max(a) FROM tab_full => 20|1|100
--@ expect SELECT string_agg(x, ',' ORDER BY x) FROM tab_full2 => a,bb,bb
DELETE FROM tab_rep;
INSERT INTO tab_full VALUES (0);
--@ expect SELECT count(*), min(a), max(a) FROM tab_full => 21|0|100
