-- 025_rep_changes_for_schema.pl: a FOR TABLES IN SCHEMA publication: tables of the schema, a
-- partitioned table of the schema whose partitions live in another schema, a table created in the
-- schema while replicating (picked up without a refresh), a table moved out of the schema, a table
-- dropped, and the schema dropped from the publication (what comes after is not replicated). The
-- pg_subscription_rel counts are subscriber-side.
--! publication tap_pub_schema
--@ setup
CREATE SCHEMA sch1;
CREATE TABLE sch1.tab1 AS SELECT generate_series(1,10) AS a;
CREATE TABLE sch1.tab2 AS SELECT generate_series(1,10) AS a;
CREATE TABLE sch1.tab1_parent (a int PRIMARY KEY, b text) PARTITION BY LIST (a);
CREATE TABLE public.tab1_child1 PARTITION OF sch1.tab1_parent FOR VALUES IN (1, 2, 3);
CREATE TABLE public.tab1_child2 PARTITION OF sch1.tab1_parent FOR VALUES IN (4, 5, 6);
INSERT INTO sch1.tab1_parent values (1),(4);
CREATE PUBLICATION tap_pub_schema FOR TABLES IN SCHEMA sch1;
--@ workload
INSERT INTO sch1.tab1 VALUES(generate_series(11,20));
INSERT INTO sch1.tab1_parent values (2),(5);
--@ expect SELECT count(*), min(a), max(a) FROM sch1.tab1 => 20|1|20
CREATE TABLE sch1.tab3 AS SELECT generate_series(1,10) AS a;
INSERT INTO sch1.tab3 VALUES(11);
--@ expect SELECT count(*), min(a), max(a) FROM sch1.tab3 => 11|1|11
--@ kill
ALTER TABLE sch1.tab3 SET SCHEMA public;
INSERT INTO public.tab3 VALUES(12);
DROP TABLE sch1.tab2;
INSERT INTO sch1.tab1 VALUES(21);
--@ expect SELECT count(*), min(a), max(a) FROM sch1.tab1 => 21|1|21
ALTER PUBLICATION tap_pub_schema DROP TABLES IN SCHEMA sch1;
INSERT INTO sch1.tab1 values(22);
--@ expect SELECT count(*), min(a), max(a) FROM sch1.tab1 => 21|1|21
--@ expect SELECT count(*), min(a), max(a) FROM sch1.tab3 => 11|1|11
--@ absent public.tab3
