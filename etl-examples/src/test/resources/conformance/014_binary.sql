-- 014_binary.pl: pgoutput in binary mode: numerics, floats, arrays, NULLs, updates of array
-- elements, and a type without binary send/receive functions (sent as text) that gets them later.
-- Switching a subscription between text and binary and the subscriber's mismatching column types
-- are subscriber-side and left out.
--! publication tpub
--! binary
--@ setup
CREATE TABLE public.test_numerical (a INTEGER PRIMARY KEY, b NUMERIC, c FLOAT, d BIGINT);
CREATE TABLE public.test_arrays (a INTEGER[] PRIMARY KEY, b NUMERIC[], c TEXT[]);
CREATE PUBLICATION tpub FOR ALL TABLES;
INSERT INTO public.test_numerical (a, b, c, d) VALUES (1, 1.2, 1.3, 10), (2, 2.2, 2.3, 20);
INSERT INTO public.test_arrays (a, b, c) VALUES ('{1,2,3}', '{1.1, 1.2, 1.3}', '{"one", "two", "three"}'), ('{3,1,2}', '{1.3, 1.1, 1.2}', '{"three", "one", "two"}');
--@ workload
INSERT INTO public.test_arrays (a, b, c) VALUES ('{2,1,3}', '{1.2, 1.1, 1.3}', '{"two", "one", "three"}'), ('{1,3,2}', '{1.1, 1.3, 1.2}', '{"one", "three", "two"}');
INSERT INTO public.test_numerical (a, b, c, d) VALUES (3, 3.2, 3.3, 30), (4, 4.2, 4.3, 40);
--@ expect SELECT a, b, c, d FROM test_numerical ORDER BY a => 1|1.2|1.3|10;2|2.2|2.3|20;3|3.2|3.3|30;4|4.2|4.3|40
UPDATE public.test_arrays SET b[1] = 42, c = NULL;
UPDATE public.test_numerical SET b = 42, c = NULL;
--@ kill
INSERT INTO public.test_numerical (a, b, c, d) VALUES (5, 5.2, 5.3, 50);
INSERT INTO public.test_arrays (a, b, c) VALUES ('{2,3,1}', '{1.2, 1.3, 1.1}', '{"two", "three", "one"}');
CREATE TYPE myvarchar;
CREATE FUNCTION myvarcharin(cstring, oid, integer) RETURNS myvarchar LANGUAGE internal IMMUTABLE PARALLEL SAFE STRICT AS 'varcharin';
CREATE FUNCTION myvarcharout(myvarchar) RETURNS cstring LANGUAGE internal IMMUTABLE PARALLEL SAFE STRICT AS 'varcharout';
CREATE TYPE myvarchar (input = myvarcharin, output = myvarcharout);
CREATE TABLE public.test_myvarchar (a myvarchar);
INSERT INTO public.test_myvarchar (a) VALUES ('a');
--@ expect SELECT a::text FROM test_myvarchar => a
CREATE FUNCTION myvarcharsend(myvarchar) RETURNS bytea LANGUAGE internal STABLE PARALLEL SAFE STRICT AS 'varcharsend';
CREATE FUNCTION myvarcharrecv(internal, oid, integer) RETURNS myvarchar LANGUAGE internal STABLE PARALLEL SAFE STRICT AS 'varcharrecv';
ALTER TYPE myvarchar SET (send = myvarcharsend, receive = myvarcharrecv);
INSERT INTO public.test_myvarchar (a) VALUES ('b');
--@ expect SELECT string_agg(a::text, ',' ORDER BY a::text) FROM test_myvarchar => a,b
