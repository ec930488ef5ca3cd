package org.pgetl.core.internal.codec;

/**
 * The built-in types of PostgreSQL 14 to 18 (the rows of {@code pg_type.dat} below oid 10000,
 * without the catalogs' row types), as {@code oid name kind element [delimiter]}, where element is
 * the element type of an array, the subtype of a range and the range type of a multirange; kind
 * {@code b} base, {@code A} array, {@code r} range, {@code m} multirange, {@code p} pseudo type.
 * The delimiter is a comma unless given. Built-in oids are fixed across servers and versions.
 */
final class BuiltinTypes {
  private BuiltinTypes() {}

  // from: select oid, typname, case when typcategory = 'A' and typelem <> 0 then 'A' else typtype
  // end, typelem, typcategory, typdelim from pg_type where oid < 10000 and typtype <> 'c' order by
  // oid (plus
  // pg_range's rngsubtype and rngmultitypid for the ranges and multiranges)
  static final String TABLE =
      """
      16 bool b 0 B
      17 bytea b 0 U
      18 char b 0 Z
      19 name b 18 S
      20 int8 b 0 N
      21 int2 b 0 N
      22 int2vector A 21 A
      23 int4 b 0 N
      24 regproc b 0 N
      25 text b 0 S
      26 oid b 0 N
      27 tid b 0 U
      28 xid b 0 U
      29 cid b 0 U
      30 oidvector A 26 A
      32 pg_ddl_command p 0 P
      114 json b 0 U
      142 xml b 0 U
      143 _xml A 142 A
      194 pg_node_tree b 0 Z
      199 _json A 114 A
      269 table_am_handler p 0 P
      271 _xid8 A 5069 A
      325 index_am_handler p 0 P
      600 point b 701 G
      601 lseg b 600 G
      602 path b 0 G
      603 box b 600 G ;
      604 polygon b 0 G
      628 line b 701 G
      629 _line A 628 A
      650 cidr b 0 I
      651 _cidr A 650 A
      700 float4 b 0 N
      701 float8 b 0 N
      705 unknown p 0 X
      718 circle b 0 G
      719 _circle A 718 A
      774 macaddr8 b 0 U
      775 _macaddr8 A 774 A
      790 money b 0 N
      791 _money A 790 A
      829 macaddr b 0 U
      869 inet b 0 I
      1000 _bool A 16 A
      1001 _bytea A 17 A
      1002 _char A 18 A
      1003 _name A 19 A
      1005 _int2 A 21 A
      1006 _int2vector A 22 A
      1007 _int4 A 23 A
      1008 _regproc A 24 A
      1009 _text A 25 A
      1010 _tid A 27 A
      1011 _xid A 28 A
      1012 _cid A 29 A
      1013 _oidvector A 30 A
      1014 _bpchar A 1042 A
      1015 _varchar A 1043 A
      1016 _int8 A 20 A
      1017 _point A 600 A
      1018 _lseg A 601 A
      1019 _path A 602 A
      1020 _box A 603 A ;
      1021 _float4 A 700 A
      1022 _float8 A 701 A
      1027 _polygon A 604 A
      1028 _oid A 26 A
      1033 aclitem b 0 U
      1034 _aclitem A 1033 A
      1040 _macaddr A 829 A
      1041 _inet A 869 A
      1042 bpchar b 0 S
      1043 varchar b 0 S
      1082 date b 0 D
      1083 time b 0 D
      1114 timestamp b 0 D
      1115 _timestamp A 1114 A
      1182 _date A 1082 A
      1183 _time A 1083 A
      1184 timestamptz b 0 D
      1185 _timestamptz A 1184 A
      1186 interval b 0 T
      1187 _interval A 1186 A
      1231 _numeric A 1700 A
      1263 _cstring A 2275 A
      1266 timetz b 0 D
      1270 _timetz A 1266 A
      1560 bit b 0 V
      1561 _bit A 1560 A
      1562 varbit b 0 V
      1563 _varbit A 1562 A
      1700 numeric b 0 N
      1790 refcursor b 0 U
      2201 _refcursor A 1790 A
      2202 regprocedure b 0 N
      2203 regoper b 0 N
      2204 regoperator b 0 N
      2205 regclass b 0 N
      2206 regtype b 0 N
      2207 _regprocedure A 2202 A
      2208 _regoper A 2203 A
      2209 _regoperator A 2204 A
      2210 _regclass A 2205 A
      2211 _regtype A 2206 A
      2249 record p 0 P
      2275 cstring p 0 P
      2276 any p 0 P
      2277 anyarray p 0 P
      2278 void p 0 P
      2279 trigger p 0 P
      2280 language_handler p 0 P
      2281 internal p 0 P
      2283 anyelement p 0 P
      2287 _record p 2249 P
      2776 anynonarray p 0 P
      2949 _txid_snapshot A 2970 A
      2950 uuid b 0 U
      2951 _uuid A 2950 A
      2970 txid_snapshot b 0 U
      3115 fdw_handler p 0 P
      3220 pg_lsn b 0 U
      3221 _pg_lsn A 3220 A
      3310 tsm_handler p 0 P
      3361 pg_ndistinct b 0 Z
      3402 pg_dependencies b 0 Z
      3500 anyenum p 0 P
      3614 tsvector b 0 U
      3615 tsquery b 0 U
      3642 gtsvector b 0 U
      3643 _tsvector A 3614 A
      3644 _gtsvector A 3642 A
      3645 _tsquery A 3615 A
      3734 regconfig b 0 N
      3735 _regconfig A 3734 A
      3769 regdictionary b 0 N
      3770 _regdictionary A 3769 A
      3802 jsonb b 0 U
      3807 _jsonb A 3802 A
      3831 anyrange p 0 P
      3838 event_trigger p 0 P
      3904 int4range r 23 R
      3905 _int4range A 3904 A
      3906 numrange r 1700 R
      3907 _numrange A 3906 A
      3908 tsrange r 1114 R
      3909 _tsrange A 3908 A
      3910 tstzrange r 1184 R
      3911 _tstzrange A 3910 A
      3912 daterange r 1082 R
      3913 _daterange A 3912 A
      3926 int8range r 20 R
      3927 _int8range A 3926 A
      4072 jsonpath b 0 U
      4073 _jsonpath A 4072 A
      4089 regnamespace b 0 N
      4090 _regnamespace A 4089 A
      4096 regrole b 0 N
      4097 _regrole A 4096 A
      4191 regcollation b 0 N
      4192 _regcollation A 4191 A
      4451 int4multirange m 3904 R
      4532 nummultirange m 3906 R
      4533 tsmultirange m 3908 R
      4534 tstzmultirange m 3910 R
      4535 datemultirange m 3912 R
      4536 int8multirange m 3926 R
      4537 anymultirange p 0 P
      4538 anycompatiblemultirange p 0 P
      4600 pg_brin_bloom_summary b 0 Z
      4601 pg_brin_minmax_multi_summary b 0 Z
      5017 pg_mcv_list b 0 Z
      5038 pg_snapshot b 0 U
      5039 _pg_snapshot A 5038 A
      5069 xid8 b 0 U
      5077 anycompatible p 0 P
      5078 anycompatiblearray p 0 P
      5079 anycompatiblenonarray p 0 P
      5080 anycompatiblerange p 0 P
      6150 _int4multirange A 4451 A
      6151 _nummultirange A 4532 A
      6152 _tsmultirange A 4533 A
      6153 _tstzmultirange A 4534 A
      6155 _datemultirange A 4535 A
      6157 _int8multirange A 4536 A
      """;
}
