-- 004_sync.pl: the initial copy, rows added before a (re)start, and a table created with rows while
-- replicating (a FOR ALL TABLES publication). The subscriber-side parts (a copy stuck on a unique
-- violation in the subscriber's table, two subscriptions, DROP SUBSCRIPTION during an error) are
-- left out; the killed pass restarts the pipeline instead.
--! publication tap_pub
--@ setup
CREATE TABLE tab_rep (a int primary key);
INSERT INTO tab_rep SELECT generate_series(1,10);
CREATE PUBLICATION tap_pub FOR ALL TABLES;
--@ workload
--@ expect SELECT count(*) FROM tab_rep => 10
INSERT INTO tab_rep SELECT generate_series(11,20);
--@ kill
CREATE TABLE tab_rep_next (a) AS SELECT generate_series(1,10);
--@ expect SELECT count(*) FROM tab_rep_next => 10
INSERT INTO tab_rep_next SELECT generate_series(1,10);
--@ expect SELECT count(*) FROM tab_rep_next => 20
