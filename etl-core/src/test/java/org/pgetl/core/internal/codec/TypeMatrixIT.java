package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;

/**
 * One table with a column per type (arrays, a domain, an enum, a composite, ranges, multiranges and
 * types pgetl keeps as text included), rows of edge values, read by every {@link Reader}: each
 * reader must decode every value to the documented Java type, to the same value as the other
 * readers, and to a value that {@link PgText#format} prints exactly as the server does.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TypeMatrixIT {
  /** A way to read the matrix table: the table's rows as decoded values, in id order. */
  @FunctionalInterface
  interface Reader {
    List<Object[]> read(Connection c, TypeRegistry registry, List<Column> columns) throws Exception;
  }

  /** The readers under test; the pgoutput text and binary readers join them later. */
  static final Map<String, Reader> READERS = new LinkedHashMap<>();

  static {
    READERS.put("COPY text", (c, registry, columns) -> copy(c, registry, columns, false));
    READERS.put("COPY binary", (c, registry, columns) -> copy(c, registry, columns, true));
  }

  record Column(String name, String type, Class<?> javaType, List<String> values) {}

  private static final List<Column> COLUMNS = new ArrayList<>();

  /**
   * Marks a value older servers cannot read (infinite intervals, and the most negative interval
   * PostgreSQL 14 refuses as input); NULL before PostgreSQL 17.
   */
  private static final String SINCE_17 = "/*17*/";

  /** Marks a value older servers print differently ("char" with the high bit); NULL before 15. */
  private static final String SINCE_15 = "/*15*/";

  private static void col(String type, Class<?> javaType, String... values) {
    String name = "c_" + type.replaceAll("[^a-z0-9]+", "_").replaceAll("_+$", "");
    if (type.endsWith("[]")) {
      name += "_arr";
    }
    COLUMNS.add(new Column(name, type, javaType, List.of(values)));
  }

  static {
    col("bool", Boolean.class, "true", "false");
    col("int2", Short.class, "-32768", "32767", "0");
    col("int4", Integer.class, "-2147483648", "2147483647");
    col("int8", Long.class, "-9223372036854775808", "9223372036854775807");
    col("oid", Long.class, "0", "4294967295");
    col("xid", Long.class, "'4294967295'", "'3'");
    col("cid", Long.class, "'4294967295'");
    col("xid8", Long.class, "'9223372036854775807'", "'0'");
    col(
        "float4",
        Float.class,
        "'NaN'",
        "'Infinity'",
        "'-Infinity'",
        "'-0'",
        "'1.17549435e-38'",
        "'3.4028235e38'",
        "'0.1'",
        "'1e-45'");
    col(
        "float8",
        Double.class,
        "'NaN'",
        "'Infinity'",
        "'-Infinity'",
        "'-0'",
        "'5e-324'",
        "'1.7976931348623157e308'",
        "'0.1'",
        "'1e23'",
        "'123456789012345678'");
    col(
        "numeric",
        PgNumeric.class,
        "'NaN'",
        "'Infinity'",
        "'-Infinity'",
        "repeat('9', 1000)::numeric",
        "('-0.' || repeat('0', 500) || '1000')::numeric",
        "'0'",
        "'1.50'",
        "'-12345678901234567890.123456789'");
    col("numeric(10,2)", PgNumeric.class, "'12345678.9'", "'-0.01'", "'0'");
    col(
        "text",
        String.class,
        "''",
        "E'tab\\there\\nnew line\\r\\\\ \\b\\f\\v'",
        "'quote\"back\\slash'",
        "'é日本🎉'",
        "'NULL'",
        "E'\\\\N'",
        "E'\\\\.'");
    col("varchar(10)", String.class, "'abc'", "''");
    col("char(5)", String.class, "'ab'", "'abcde'");
    col("name", String.class, "'pg_class'", "'Ünïcode'");
    col("\"char\"", String.class, "'a'", "''", SINCE_15 + "'é'", "'\\'");
    col("bytea", byte[].class, "'\\x'", "'\\x00ff5c0a09'", "decode(repeat('ab', 5000), 'hex')");
    col(
        "date",
        LocalDate.class,
        "'infinity'",
        "'-infinity'",
        "'0001-01-01 BC'",
        "'4714-11-24 BC'",
        "'10000-01-01'",
        "'5874897-12-31'",
        "'2000-02-29'");
    col("time", LocalTime.class, "'24:00:00'", "'00:00:00'", "'23:59:59.999999'");
    col("time(3)", LocalTime.class, "'12:00:00.1234'", "'24:00:00'");
    col(
        "timetz",
        OffsetTime.class,
        "'24:00:00+15:59:59'",
        "'00:00:00-15:59:59'",
        "'12:00:00.5+05:30:15'",
        "'13:00:00-03'");
    col(
        "timestamp",
        LocalDateTime.class,
        "'infinity'",
        "'-infinity'",
        "'0001-01-01 00:00:00 BC'",
        "'294276-12-31 23:59:59.999999'",
        "'10000-01-01 00:00:00'",
        "'4714-11-24 00:00:00 BC'",
        "'2000-01-01 00:00:00.000001'");
    col(
        "timestamptz",
        Instant.class,
        "'2020-06-01 12:00:00+05:30'",
        "'infinity'",
        "'-infinity'",
        "'0001-01-01 00:00:00+00 BC'",
        "'294276-12-31 23:59:59.999999+00'",
        "'12345-01-01 00:00:00+00'",
        "'1900-01-01 00:00:00+05:53:28'");
    col(
        "interval",
        PgInterval.class,
        SINCE_17 + "'infinity'",
        SINCE_17 + "'-infinity'",
        SINCE_17 + "'-178956970 years -8 mons -2147483647 days -2562047788:00:54.775807'",
        "'1 day -00:00:01'",
        "'-1 mons +1 day'",
        "'00:00:00.000001'",
        "'0'");
    col(
        "uuid",
        UUID.class,
        "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
        "'00000000-0000-0000-0000-000000000000'");
    col("json", String.class, "'{\"a\": [1, 2.50],  \"b\": \"\\u00e9\"}'", "'null'", "'\"x\"'");
    col("jsonb", String.class, "'{\"b\": [1, 2.50], \"a\": \"\\u00e9\\\"\"}'", "'[]'", "'1e3'");
    col("jsonpath", String.class, "'$.a[*] ? (@ > 1)'");
    col("inet", String.class, "'::ffff:1.2.3.4'", "'1.2.3.4/24'", "'2001:db8::1/64'", "'::'");
    col("cidr", String.class, "'10.0.0.0/8'", "'2001:db8::/32'");
    col("macaddr", String.class, "'08:00:2b:01:02:03'");
    col("macaddr8", String.class, "'08:00:2b:ff:fe:01:02:03'");
    col("money", String.class, "'-92233720368547758.08'", "'1234.5'", "'0'");
    col("bit(3)", String.class, "B'101'");
    col("varbit", String.class, "B''", "B'1010101010'");
    col("xml", String.class, "'<a x=\"1\">é &amp; b</a>'", "'text only'");
    col("pg_lsn", String.class, "'FFFFFFFF/FFFFFFFF'", "'0/0'");
    col("tsvector", String.class, "'a fat cat''s tail'", "''");
    col("regclass", String.class, "'pg_class'", "'matrix'");
    col("point", String.class, "'(0.1,1e300)'", "'(-0,NaN)'");
    col("box", String.class, "'(1,2),(3,4)'");
    col("path", String.class, "'[(1,2),(3,4)]'", "'((0,0),(1,1))'");
    col("polygon", String.class, "'((0,0),(1,1),(1,0))'");
    col("circle", String.class, "'<(1,2),0.5>'");
    col("line", String.class, "'{1,-1,0}'");
    col("lseg", String.class, "'[(1,2),(3,4)]'");
    col("tid", String.class, "'(4294967295,65535)'");
    col("int2vector", String.class, "'1 2 3'", "''");
    col("pg_snapshot", String.class, "'10:20:10,14,15'");
    col("mood", String.class, "'happy'", "'so \"so\"'", "'sad'");
    col(
        "complex",
        String.class,
        "'(1.5,-0.1,\"a b\",\"{x,\"\"y z\"\"}\",happy,\"2020-01-01 00:00:00+00\")'",
        "'(,,,,,)'",
        "'(NaN,Infinity,\"\",{},\"so \"\"so\"\"\",infinity)'",
        "row(1, 2, E'back\\\\slash\\ttab', '{NULL}', 'sad', now())::complex");
    col("posint", Integer.class, "1", "2147483647");
    col("intlist", PgArray.class, "'{1,2}'", "'{}'");
    col("int4range", String.class, "'empty'", "'[1,5)'", "'(,)'", "'(,3]'");
    col("numrange", String.class, "'[1.50,NaN]'", "'(,0)'");
    col("tstzrange", String.class, "'[2020-01-01 00:00:00+00,infinity)'");
    col("daterange", String.class, "'[2020-01-01,2020-02-01)'");
    col("floatrange", String.class, "'[0.1,1e300)'", "'(-Infinity,Infinity]'");
    col("textrange", String.class, "'[\"a b\",\"q\"\"x\")'", "'(,\"\")'");
    col("int4multirange", String.class, "'{}'", "'{[1,3),[5,7)}'");
    col("floatmultirange", String.class, "'{[0.5,1.5), [2,3]}'");
    col(
        "int4[]",
        PgArray.class,
        "'{}'",
        "'{1,NULL,3}'",
        "'[0:2]={1,2,3}'",
        "'{{1,2},{3,NULL}}'",
        "'[-1:0][5:6]={{1,2},{3,4}}'",
        "'{{{{{{7}}}}}}'");
    col(
        "text[]",
        PgArray.class,
        "array['a b', '', 'NULL', NULL, 'q\"x', 'b\\s', 'é', 'null', E'x\\ty', '{', ',', ' ']",
        "'{{a,b},{c,NULL}}'");
    col("numeric[]", PgArray.class, "'{NaN,1.50,-Infinity}'", "'[2:2]={0.0001}'");
    col("float4[]", PgArray.class, "'{NaN,-0,0.1}'");
    col("float8[]", PgArray.class, "'{NaN,-Infinity,0.1,1e300}'");
    col("date[]", PgArray.class, "'{infinity,\"0001-01-01 BC\",10000-01-01}'");
    col("time[]", PgArray.class, "'{24:00:00,12:00:00.5}'");
    col("timetz[]", PgArray.class, "'{24:00:00+01:02:03}'");
    col("timestamp[]", PgArray.class, "'{-infinity,\"2000-01-01 00:00:00\"}'");
    col("timestamptz[]", PgArray.class, "'{infinity,\"2020-01-01 00:00:00+00\"}'");
    col("interval[]", PgArray.class, "'{\"1 day\",-00:00:01}'", SINCE_17 + "'{infinity}'");
    col("bytea[]", PgArray.class, "'{\"\\\\x00\",\"\\\\x\",NULL}'");
    col("bool[]", PgArray.class, "'{t,f,NULL}'");
    col("int2[]", PgArray.class, "'{1,-1}'");
    col("int8[]", PgArray.class, "'{9223372036854775807}'");
    col("oid[]", PgArray.class, "'{4294967295}'");
    col("uuid[]", PgArray.class, "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'");
    col("jsonb[]", PgArray.class, "array['{\"a\": 1}'::jsonb, '[]', 'null']");
    col("json[]", PgArray.class, "array['{\"a\":  1}'::json]");
    col("varchar[]", PgArray.class, "'{\"\",x}'");
    col("char(2)[]", PgArray.class, "'{a,\"b \"}'");
    col("\"char\"[]", PgArray.class, "'{a,b}'");
    col("inet[]", PgArray.class, "'{1.2.3.4,::1/64}'");
    col("money[]", PgArray.class, "'{$1.00,-$2.00}'");
    col("box[]", PgArray.class, "'{(1,2),(3,4);(5,6),(7,8)}'");
    col("point[]", PgArray.class, "'{\"(1,2)\"}'");
    col("tsvector[]", PgArray.class, "array['a b'::tsvector]");
    col("regclass[]", PgArray.class, "'{pg_class}'");
    col("mood[]", PgArray.class, "'{happy,NULL,\"so \\\"so\\\"\"}'");
    col("complex[]", PgArray.class, "array['(1,2,x,{},happy,)'::complex, NULL]");
    col("posint[]", PgArray.class, "'{1,2}'");
    col("int4range[]", PgArray.class, "'{\"[1,3)\",empty}'");
    col("int4multirange[]", PgArray.class, "'{\"{[1,2)}\"}'");
    col("varbit[]", PgArray.class, "'{1010,\"\"}'");
    col("pg_lsn[]", PgArray.class, "'{0/1}'");
  }

  private Connection conn;
  private int rowCount;

  @BeforeAll
  void createMatrix() throws SQLException {
    conn = CodecTestDatabase.connect();
    try (Statement st = conn.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS codec_matrix CASCADE");
      st.execute("CREATE SCHEMA codec_matrix");
      st.execute("SET search_path = codec_matrix, pg_catalog");
      st.execute("CREATE TYPE mood AS ENUM ('happy', 'sad', 'so \"so\"')");
      st.execute(
          "CREATE TYPE complex AS (r float8, i float8, label text, tags text[], m mood,"
              + " at timestamptz)");
      st.execute("CREATE DOMAIN posint AS int4 CHECK (VALUE > 0)");
      st.execute("CREATE DOMAIN intlist AS int4[]");
      st.execute("CREATE TYPE floatrange AS RANGE (subtype = float8)");
      st.execute("CREATE TYPE textrange AS RANGE (subtype = text, collation = \"C\")");
      StringBuilder ddl = new StringBuilder("CREATE TABLE matrix (id int PRIMARY KEY");
      for (Column c : COLUMNS) {
        ddl.append(", ").append(c.name()).append(' ').append(c.type());
      }
      st.execute(ddl.append(")").toString());
      rowCount = 1; // the last row is all NULLs
      for (Column c : COLUMNS) {
        rowCount = Math.max(rowCount, c.values().size() + 1);
      }
      for (int r = 0; r < rowCount; r++) {
        StringBuilder insert = new StringBuilder("INSERT INTO matrix VALUES (").append(r);
        for (Column c : COLUMNS) {
          String v = r < c.values().size() ? c.values().get(r) : "NULL";
          int major = conn.getMetaData().getDatabaseMajorVersion();
          if (v.startsWith(SINCE_17) && major < 17 || v.startsWith(SINCE_15) && major < 15) {
            v = "NULL";
          }
          insert.append(", ").append(v);
        }
        st.execute(insert.append(")").toString());
      }
    }
  }

  @AfterAll
  void dropMatrix() throws SQLException {
    if (conn != null) {
      try (Statement st = conn.createStatement()) {
        st.execute("DROP SCHEMA codec_matrix CASCADE");
      } finally {
        conn.close();
      }
    }
  }

  private static List<Object[]> copy(
      Connection c, TypeRegistry registry, List<Column> columns, boolean binary)
      throws SQLException {
    int[] oids = columnTypeOids(c, columns);
    List<Integer> oidList = new ArrayList<>();
    for (int oid : oids) {
      oidList.add(oid);
    }
    registry.load(c, oidList);
    List<String> names = columns.stream().map(Column::name).toList();
    return CopyReaders.read(c, registry.codecs(oids), names, "FROM matrix ORDER BY id", binary);
  }

  private static int[] columnTypeOids(Connection c, List<Column> columns) throws SQLException {
    int[] oids = new int[columns.size()];
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT atttypid::int8 FROM pg_attribute WHERE attrelid = 'matrix'::regclass"
                    + " AND attnum > 1 AND NOT attisdropped ORDER BY attnum")) {
      for (int i = 0; i < oids.length; i++) {
        assertThat(rs.next()).isTrue();
        oids[i] = (int) rs.getLong(1);
      }
    }
    return oids;
  }

  /** What the server prints for every value, through plain JDBC in text mode. */
  private List<String[]> serverText() throws SQLException {
    List<String[]> rows = new ArrayList<>();
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT * FROM matrix ORDER BY id")) {
      while (rs.next()) {
        String[] row = new String[COLUMNS.size()];
        for (int i = 0; i < row.length; i++) {
          row[i] = rs.getString(i + 2);
        }
        rows.add(row);
      }
    }
    return rows;
  }

  @Test
  void everyReaderDecodesEveryValueToItsDocumentedTypeAndTheServersText() throws Exception {
    List<String[]> expected = serverText();
    assertThat(expected).hasSize(rowCount);
    Map<String, List<Object[]>> results = new LinkedHashMap<>();
    for (Map.Entry<String, Reader> reader : READERS.entrySet()) {
      List<Object[]> rows = reader.getValue().read(conn, new TypeRegistry(), COLUMNS);
      results.put(reader.getKey(), rows);
      assertThat(rows).as(reader.getKey()).hasSize(rowCount);
      for (int r = 0; r < rowCount; r++) {
        for (int i = 0; i < COLUMNS.size(); i++) {
          Column c = COLUMNS.get(i);
          Object v = rows.get(r)[i];
          String where = reader.getKey() + ", row " + r + ", " + c.type();
          if (expected.get(r)[i] == null) {
            assertThat(v).as(where).isNull();
            continue;
          }
          assertThat(v).as(where).isInstanceOf(c.javaType());
          assertThat(PgText.format(v)).as(where).isEqualTo(expected.get(r)[i]);
        }
      }
    }
    List<Object[]> first = results.values().iterator().next();
    for (Map.Entry<String, List<Object[]>> other : results.entrySet()) {
      for (int r = 0; r < rowCount; r++) {
        for (int i = 0; i < COLUMNS.size(); i++) {
          Object a = first.get(r)[i];
          Object b = other.getValue().get(r)[i];
          assertThat(Values.same(a, b))
              .as(
                  "%s vs %s, row %d, %s: %s vs %s",
                  READERS.keySet().iterator().next(),
                  other.getKey(),
                  r,
                  COLUMNS.get(i).type(),
                  Values.show(a),
                  Values.show(b))
              .isTrue();
        }
      }
    }
  }

  @Test
  void catalogTypesAreLoadedWithTheirShape() throws Exception {
    TypeRegistry registry = new TypeRegistry();
    int[] oids = columnTypeOids(conn, COLUMNS);
    List<Integer> oidList = new ArrayList<>();
    for (int oid : oids) {
      oidList.add(oid);
    }
    registry.load(conn, oidList);
    Map<String, TypeInfo> byColumn = new LinkedHashMap<>();
    for (int i = 0; i < COLUMNS.size(); i++) {
      byColumn.put(COLUMNS.get(i).type(), registry.typeInfo(oids[i]));
    }
    assertThat(byColumn.get("mood").kind()).isEqualTo(TypeKind.ENUM);
    assertThat(byColumn.get("mood").category()).isEqualTo('E');
    assertThat(byColumn.get("complex").category()).isEqualTo('C');
    assertThat(byColumn.get("numeric").category()).isEqualTo('N');
    assertThat(byColumn.get("mood").name()).isEqualTo("codec_matrix.mood");
    TypeInfo complex = byColumn.get("complex");
    assertThat(complex.kind()).isEqualTo(TypeKind.COMPOSITE);
    assertThat(complex.attributeTypeOids())
        .containsExactly(701, 701, 25, 1009, byColumn.get("mood").oid(), 1184);
    assertThat(byColumn.get("posint").kind()).isEqualTo(TypeKind.DOMAIN);
    assertThat(byColumn.get("posint").baseTypeOid()).isEqualTo(23);
    assertThat(byColumn.get("intlist").baseTypeOid()).isEqualTo(1007);
    assertThat(byColumn.get("floatrange").kind()).isEqualTo(TypeKind.RANGE);
    assertThat(byColumn.get("floatrange").rangeSubtypeOid()).isEqualTo(701);
    TypeInfo floatMulti = byColumn.get("floatmultirange");
    assertThat(floatMulti.kind()).isEqualTo(TypeKind.MULTIRANGE);
    assertThat(floatMulti.rangeOid()).isEqualTo(byColumn.get("floatrange").oid());
    assertThat(byColumn.get("mood[]").kind()).isEqualTo(TypeKind.ARRAY);
    assertThat(byColumn.get("mood[]").elementOid()).isEqualTo(byColumn.get("mood").oid());
    for (Column c : COLUMNS) {
      boolean textOnly = c.type().startsWith("tsvector") || c.type().startsWith("regclass");
      assertThat(registry.canDecodeBinary(byColumn.get(c.type()).oid()))
          .as(c.type())
          .isEqualTo(!textOnly);
    }
  }

  @Test
  void aBaseTypeWithoutBinaryOutputIsDecodedAsTextOnly() throws Exception {
    try (Statement st = conn.createStatement()) {
      // a base type the registry cannot know, built from text's I/O functions, without send
      st.execute("CREATE TYPE codec_matrix.opaque");
      st.execute(
          "CREATE FUNCTION codec_matrix.opaque_in(cstring) RETURNS codec_matrix.opaque"
              + " AS 'textin' LANGUAGE internal IMMUTABLE STRICT");
      st.execute(
          "CREATE FUNCTION codec_matrix.opaque_out(codec_matrix.opaque) RETURNS cstring"
              + " AS 'textout' LANGUAGE internal IMMUTABLE STRICT");
      st.execute(
          "CREATE TYPE codec_matrix.opaque (INPUT = codec_matrix.opaque_in,"
              + " OUTPUT = codec_matrix.opaque_out, LIKE = text)");
      st.execute(
          "CREATE TABLE codec_matrix.opaques (id int, o codec_matrix.opaque,"
              + " a codec_matrix.opaque[])");
      st.execute("INSERT INTO codec_matrix.opaques VALUES (1, 'x y', '{\"x y\",z}')");
    }
    TypeRegistry registry = new TypeRegistry();
    int opaque;
    int opaqueArray;
    try (Statement st = conn.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT 'codec_matrix.opaque'::regtype::oid::int8,"
                    + " 'codec_matrix.opaque[]'::regtype::oid::int8")) {
      rs.next();
      opaque = (int) rs.getLong(1);
      opaqueArray = (int) rs.getLong(2);
    }
    assertThat(registry.typeInfo(opaque).kind()).isEqualTo(TypeKind.UNKNOWN);
    assertThat(registry.canDecodeBinary(opaque)).isFalse();
    registry.load(conn, List.of(opaqueArray));
    assertThat(registry.typeInfo(opaque).kind()).isEqualTo(TypeKind.BASE);
    assertThat(registry.typeInfo(opaque).hasBinaryOutput()).isFalse();
    assertThat(registry.canDecodeBinary(opaque)).isFalse();
    assertThat(registry.canDecodeBinary(opaqueArray)).isFalse();
    List<ValueCodec> codecs = registry.codecs(23, opaque, opaqueArray);
    for (boolean binary : new boolean[] {false, true}) {
      List<Object[]> rows =
          CopyReaders.read(
              conn, codecs, List.of("id", "o", "a"), "FROM codec_matrix.opaques", binary);
      assertThat(rows).hasSize(1);
      assertThat(rows.get(0)[1]).isEqualTo("x y");
      assertThat(PgText.format(rows.get(0)[2])).isEqualTo("{\"x y\",z}");
    }
  }
}
