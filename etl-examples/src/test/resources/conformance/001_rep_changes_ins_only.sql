-- 001_rep_changes.pl, publication tap_pub_ins_only: a publication of inserts only, later of inserts
-- and deletes, and a table added to it while replicating.
--! publication tap_pub_ins_only
-- Updates and deletes of tab_ins are not published while the publication publishes inserts only,
-- so the mirror keeps rows the source removed, as the native subscriber does.
--@ differs tab_ins not every change is published
--@ setup
CREATE TABLE tab_ins AS SELECT generate_series(1,1002) AS a;
CREATE TABLE tab_full AS SELECT generate_series(1,10) AS a;
CREATE PUBLICATION tap_pub_ins_only WITH (publish = insert);
ALTER PUBLICATION tap_pub_ins_only ADD TABLE tab_ins;
--@ workload
INSERT INTO tab_ins SELECT generate_series(1,50);
DELETE FROM tab_ins WHERE a > 20;
UPDATE tab_ins SET a = -a;
--@ expect SELECT count(*), min(a), max(a) FROM tab_ins => 1052|1|1002
ALTER TABLE tab_ins REPLICA IDENTITY FULL;
ALTER TABLE tab_full REPLICA IDENTITY FULL;
--@ kill
INSERT INTO tab_ins SELECT generate_series(1001,1100);
--@ expect SELECT count(*), min(a), max(a) FROM tab_ins => 1152|1|1100
ALTER PUBLICATION tap_pub_ins_only SET (publish = 'insert, delete');
ALTER PUBLICATION tap_pub_ins_only ADD TABLE tab_full;
DELETE FROM tab_ins WHERE a > 0;
INSERT INTO tab_full VALUES (0);
--@ expect SELECT count(*), min(a), max(a) FROM tab_ins => 1052|1|1002
--@ expect SELECT count(*), min(a), max(a) FROM tab_full => 11|0|10
