-- 003_constraints.pl: a foreign key, a value stored out of line (TOAST) that later updates leave
-- unchanged, the referenced table dropped while replicating. The subscriber's replica triggers of
-- the original test are subscriber-side and left out: the mirror holds every published change.
--! publication tap_pub
--@ setup
CREATE TABLE tab_fk (bid int PRIMARY KEY);
CREATE TABLE tab_fk_ref (id int PRIMARY KEY, junk text, bid int REFERENCES tab_fk (bid));
CREATE PUBLICATION tap_pub FOR ALL TABLES;
--@ workload
INSERT INTO tab_fk (bid) VALUES (1);
INSERT INTO tab_fk_ref (id, bid, junk) VALUES (1, 1, repeat(pi()::text,20000));
--@ expect SELECT count(*), min(bid), max(bid), sum(length(junk)) FROM tab_fk_ref => 1|1|1|340000
DROP TABLE tab_fk CASCADE;
INSERT INTO tab_fk_ref (id, bid) VALUES (2, 2);
--@ kill
INSERT INTO tab_fk_ref (id, bid) VALUES (10, 10);
UPDATE tab_fk_ref SET bid = 2 WHERE bid = 1;
UPDATE tab_fk_ref SET id = 6 WHERE id = 1;
--@ expect SELECT id, bid, length(junk) FROM tab_fk_ref ORDER BY id => 2|2|;6|2|340000;10|10|
