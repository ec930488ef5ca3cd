-- 024_add_drop_pub.pl: a subscription's publication list changes (ALTER SUBSCRIPTION ADD/DROP
-- PUBLICATION), which a pipeline reading one publication cannot do. What remains for it: the
-- pipeline starts on a publication that is still empty (tap_pub_2), a table is added to it with
-- rows already in it, and later a second one.
--! publication tap_pub_2
--@ setup
CREATE TABLE tab_1 (a int);
INSERT INTO tab_1 SELECT generate_series(1,10);
CREATE PUBLICATION tap_pub_1 FOR TABLE tab_1;
CREATE PUBLICATION tap_pub_2;
--@ workload
CREATE TABLE tab_2 (a int);
INSERT INTO tab_2 SELECT generate_series(1,10);
ALTER PUBLICATION tap_pub_2 ADD TABLE tab_2;
--@ expect SELECT count(*), min(a), max(a) FROM tab_2 => 10|1|10
--@ kill
INSERT INTO tab_2 VALUES (11);
ALTER PUBLICATION tap_pub_2 ADD TABLE tab_1;
INSERT INTO tab_1 VALUES (11);
--@ expect SELECT count(*), min(a), max(a) FROM tab_1 => 11|1|11
