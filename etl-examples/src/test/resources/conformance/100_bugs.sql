-- 100_bugs.pl, the publisher-side cases, in one FOR ALL TABLES publication: an index whose
-- predicate calls a function (bug #15114); temporary and unlogged tables, which are not published
-- and must not block updates; a table added with rows while the copy of another runs (#16643);
-- the replica identity index changed to another index before an update and a delete; a schema
-- renamed and re-created inside one transaction; REPLICA IDENTITY FULL with a dropped column; a
-- column added with a default, absent from older rows, under REPLICA IDENTITY FULL. The cascaded
-- setup and the subscriber-side parts are left out.
--! publication pub1
--@ setup
CREATE TABLE tab1 (a int PRIMARY KEY, b int);
CREATE FUNCTION double(x int) RETURNS int IMMUTABLE LANGUAGE SQL AS 'select x * 2';
CREATE INDEX ON tab1 (b) WHERE a > double(1);
CREATE TABLE t (f int);
CREATE TABLE t2 (f int);
INSERT INTO t SELECT * FROM generate_series(1, 3000);
INSERT INTO t2 SELECT * FROM generate_series(1, 3000);
CREATE TABLE tab_replidentity_index(a int not null, b int not null);
CREATE UNIQUE INDEX idx_replidentity_index_a ON tab_replidentity_index(a);
CREATE UNIQUE INDEX idx_replidentity_index_b ON tab_replidentity_index(b);
ALTER TABLE tab_replidentity_index REPLICA IDENTITY USING INDEX idx_replidentity_index_a;
INSERT INTO tab_replidentity_index VALUES(1, 1),(2, 2);
CREATE SCHEMA sch1;
CREATE TABLE sch1.t1 (c1 int);
CREATE TABLE dropped_cols (a int, b_drop int, c int);
ALTER TABLE dropped_cols REPLICA IDENTITY FULL;
INSERT INTO dropped_cols VALUES (1, 1, 1);
CREATE TABLE tab_default (a int);
ALTER TABLE tab_default REPLICA IDENTITY FULL;
INSERT INTO tab_default VALUES (1), (2);
CREATE PUBLICATION pub1 FOR ALL TABLES;
--@ workload
INSERT INTO tab1 VALUES (1, 2);
CREATE TEMPORARY TABLE tt1 AS SELECT 1 AS a;
UPDATE tt1 SET a = 2;
CREATE UNLOGGED TABLE tu1 AS SELECT 1 AS a;
UPDATE tu1 SET a = 2;
INSERT INTO t SELECT * FROM generate_series(1, 3000);
INSERT INTO t2 SELECT * FROM generate_series(1, 3000);
--@ expect SELECT (SELECT count(f) FROM t), (SELECT count(f) FROM t2) => 6000|6000
ALTER TABLE tab_replidentity_index REPLICA IDENTITY USING INDEX idx_replidentity_index_b;
UPDATE tab_replidentity_index SET a = -a WHERE a = 1;
DELETE FROM tab_replidentity_index WHERE a = 2;
--@ expect SELECT * FROM tab_replidentity_index => -1|1
--@ kill
BEGIN;
insert into sch1.t1 values(1);
alter schema sch1 rename to sch2;
create schema sch1;
create table sch1.t1(c1 int);
insert into sch1.t1 values(2);
insert into sch2.t1 values(3);
COMMIT;
ALTER TABLE dropped_cols DROP COLUMN b_drop;
UPDATE dropped_cols SET a = 100;
--@ expect SELECT count(*) FROM dropped_cols WHERE a = 100 => 1
ALTER TABLE tab_default ADD COLUMN b bool DEFAULT false NOT NULL;
INSERT INTO tab_default VALUES (3, true);
UPDATE tab_default SET a = a + 10;
DELETE FROM tab_default WHERE a = 11;
--@ expect SELECT a, b FROM tab_default ORDER BY a => 12|f;13|t
--@ absent public.tt1
--@ absent public.tu1
