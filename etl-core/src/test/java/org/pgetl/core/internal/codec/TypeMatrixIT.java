package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.core.internal.apply.InsertRows;
import org.pgetl.core.internal.apply.SchemaResolver;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.core.internal.decode.TupleData;
import org.pgetl.core.internal.engine.EngineStreamParts;
import org.pgetl.core.internal.pg.CreatedSlot;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.ReplicationConnection;
import org.pgetl.core.internal.pg.ReplicationStream;
import org.pgetl.core.internal.pg.SlotAdmin;
import org.pgetl.core.internal.pg.SnapshotMode;
import org.pgetl.core.internal.pg.StreamOptions;
import org.pgetl.model.Lsn;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgInterval;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.PgText;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * One table with a column per type (arrays, a domain, an enum, a composite, ranges, multiranges and
 * types pgetl keeps as text included), rows of edge values, read four ways: COPY text, COPY binary,
 * and the rows' INSERTs from a pgoutput stream in text and in binary ({@code binary 'true'}),
 * decoded and converted as the engine does. It needs PostgreSQL 14+ (multiranges, binary pgoutput).
 * Every way must decode every value to the documented Java type, to the same value as the other
 * ways, and to a value that {@link PgText#format} prints exactly as plain JDBC's {@code getString}
 * reads it.
 *
 * <p>The binary pgoutput way leaves out the columns whose type has no binary decoding ({@code
 * tsvector}, {@code reg*} and arrays of them): the server sends them in binary, which the engine
 * cannot read, so the engine streams such a publication in text ({@code ApplyWorker.decide});
 * {@link #theEngineStreamsTheMatrixInTextAndEveryOtherTypeInBinary()} checks that decision.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TypeMatrixIT {
  /** A way to read the matrix table: its rows in id order, one value per matrix column. */
  @FunctionalInterface
  interface Reader {
    List<Object[]> read() throws Exception;
  }

  /** A value a way does not read (see the class comment); never compared. */
  static final Object LEFT_OUT =
      new Object() {
        @Override
        public String toString() {
          return "<left out>";
        }
      };

  private static final String PUBLICATION = "codec_matrix_pub";
  private static final String BINARY_ONLY_PUBLICATION = "codec_matrix_binary_only_pub";
  private static final String TEXT_SLOT = "pgetl_codec_matrix_text";
  private static final String BINARY_SLOT = "pgetl_codec_matrix_binary";
  private static final String APPLICATION = "pgetl:test:matrix";
  private static final long STREAM_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

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
  private int major;
  private int rowCount;
  private PgConnectionConfig source;
  private final Map<String, CreatedSlot> slots = new LinkedHashMap<>();

  @BeforeAll
  void createMatrix() throws SQLException {
    conn = CodecTestDatabase.connect();
    major = conn.getMetaData().getDatabaseMajorVersion();
    source = CodecTestDatabase.config();
    try (Statement st = conn.createStatement()) {
      st.execute("DROP PUBLICATION IF EXISTS " + PUBLICATION);
      st.execute("DROP PUBLICATION IF EXISTS " + BINARY_ONLY_PUBLICATION);
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
      st.execute("CREATE PUBLICATION " + PUBLICATION + " FOR TABLE matrix");
      // the matrix without the types that have no binary decoding (dropped columns are not sent)
      st.execute("CREATE TABLE binary_only (LIKE matrix)");
      for (Column c : COLUMNS) {
        if (textOnly(c)) {
          st.execute("ALTER TABLE binary_only DROP COLUMN " + c.name());
        }
      }
      st.execute("CREATE PUBLICATION " + BINARY_ONLY_PUBLICATION + " FOR TABLE binary_only");
    }
    // the slots exist before the rows: their INSERTs come through the streams
    createSlot(TEXT_SLOT);
    createSlot(BINARY_SLOT);
    try (Statement st = conn.createStatement()) {
      rowCount = 1; // the last row is all NULLs
      for (Column c : COLUMNS) {
        rowCount = Math.max(rowCount, c.values().size() + 1);
      }
      for (int r = 0; r < rowCount; r++) {
        StringBuilder insert = new StringBuilder("INSERT INTO matrix VALUES (").append(r);
        for (Column c : COLUMNS) {
          String v = r < c.values().size() ? c.values().get(r) : "NULL";
          if (v.startsWith(SINCE_17) && major < 17 || v.startsWith(SINCE_15) && major < 15) {
            v = "NULL";
          }
          insert.append(", ").append(v);
        }
        st.execute(insert.append(")").toString());
      }
    }
  }

  private void createSlot(String name) {
    new SlotAdmin(conn).dropIfExists(name, Duration.ofSeconds(10));
    try (ReplicationConnection repl = new PgConnector(source).openReplication(APPLICATION)) {
      slots.put(name, repl.createSlot(name, SnapshotMode.NOEXPORT_SNAPSHOT));
    }
  }

  @AfterAll
  void dropMatrix() throws SQLException {
    if (conn != null) {
      try (Statement st = conn.createStatement()) {
        SlotAdmin admin = new SlotAdmin(conn);
        for (String slot : slots.keySet()) {
          admin.dropIfExists(slot, Duration.ofSeconds(10));
        }
        st.execute("DROP PUBLICATION IF EXISTS " + PUBLICATION);
        st.execute("DROP PUBLICATION IF EXISTS " + BINARY_ONLY_PUBLICATION);
        st.execute("DROP SCHEMA codec_matrix CASCADE");
      } finally {
        conn.close();
      }
    }
  }

  private static boolean textOnly(Column c) {
    return c.type().startsWith("tsvector") || c.type().startsWith("regclass");
  }

  /** The ways under test, by name; the first is the one the others are compared with. */
  private Map<String, Reader> readers() {
    Map<String, Reader> readers = new LinkedHashMap<>();
    readers.put("COPY text", () -> copy(false));
    readers.put("COPY binary", () -> copy(true));
    readers.put("pgoutput text", () -> pgoutput(false));
    readers.put("pgoutput binary", () -> pgoutput(true));
    return readers;
  }

  /** Reads the table through {@code COPY TO STDOUT} and the codecs' COPY parsers. */
  private List<Object[]> copy(boolean binary) throws SQLException {
    TypeRegistry registry = new TypeRegistry();
    int[] oids = columnTypeOids(conn, COLUMNS);
    List<Integer> oidList = new ArrayList<>();
    for (int oid : oids) {
      oidList.add(oid);
    }
    registry.load(conn, oidList);
    List<String> names = COLUMNS.stream().map(Column::name).toList();
    return CopyReaders.read(conn, registry.codecs(oids), names, "FROM matrix ORDER BY id", binary);
  }

  /**
   * Reads the rows' INSERTs from the slot made for this way, as the engine does: the stream's
   * messages through {@link PgOutputDecoder}, RELATION through the engine's catalog resolver
   * (non-built-in types loaded from the catalog), tuples through the apply loop's conversion.
   */
  private List<Object[]> pgoutput(boolean binary) {
    String slot = binary ? BINARY_SLOT : TEXT_SLOT;
    PgConnector connector = new PgConnector(source);
    SchemaResolver engine = EngineStreamParts.catalogResolver(connector, APPLICATION);
    Map<Integer, Object[]> byId = new TreeMap<>();
    try (SchemaResolver resolver = binary ? leavingOutTextOnly(engine) : engine;
        ReplicationConnection repl = connector.openReplication(APPLICATION)) {
      try (Statement st = repl.jdbc().createStatement()) {
        // regclass prints relative to the search_path: the walsender uses the JDBC reader's
        st.execute("SET search_path = codec_matrix, pg_catalog");
      } catch (SQLException e) {
        throw new IllegalStateException("cannot set the walsender's search_path", e);
      }
      ReplicationStream stream =
          repl.startStreaming(
              StreamOptions.of(slot, slots.get(slot).consistentPoint(), List.of(PUBLICATION))
                  .withProtoVersion(1)
                  .withBinary(binary));
      PgOutputDecoder decoder = new PgOutputDecoder(1, StreamingMode.OFF);
      InsertRows inserts = new InsertRows(resolver);
      TupleData.Kind sent = binary ? TupleData.Kind.BINARY : TupleData.Kind.TEXT;
      Lsn commitLsn = Lsn.ZERO;
      long deadline = System.nanoTime() + STREAM_WAIT_NANOS;
      while (byId.size() < rowCount) {
        assertThat(System.nanoTime() - deadline)
            .as("%s: %d of %d rows arrived in time", slot, byId.size(), rowCount)
            .isNegative();
        ByteBuffer payload = stream.readNext(TimeUnit.MILLISECONDS.toNanos(100));
        if (payload == null) {
          continue;
        }
        PgOutputMessage m = decoder.decode(payload, stream.lastMessageLsn());
        if (m instanceof PgOutputMessage.Begin begin) {
          commitLsn = begin.finalLsn();
        } else if (m instanceof PgOutputMessage.Relation relation) {
          inserts.relation(relation, commitLsn);
        } else if (m instanceof PgOutputMessage.Insert insert) {
          assertThat(inserts.tableName(insert.relationId())).isEqualTo("codec_matrix.matrix");
          TupleData tuple = insert.newTuple();
          for (int i = 0; i < tuple.columnCount(); i++) {
            if (!tuple.isNull(i)) {
              assertThat(tuple.kind(i)).as("%s, column %d", slot, i).isEqualTo(sent);
            }
          }
          Object[] values = inserts.values(insert);
          byId.put((Integer) values[0], Arrays.copyOfRange(values, 1, values.length));
        }
      }
    }
    return new ArrayList<>(byId.values());
  }

  /**
   * The engine's resolver, with the codecs that cannot decode binary replaced by {@link LeftOut}:
   * the binary way leaves those columns out.
   */
  private static SchemaResolver leavingOutTextOnly(SchemaResolver engine) {
    return new SchemaResolver() {
      @Override
      public ReplicatedTableSchema resolve(
          PgOutputMessage.Relation relation, Lsn snapshotLsn, ReplicatedTableSchema previous) {
        return engine.resolve(relation, snapshotLsn, previous);
      }

      @Override
      public List<ValueCodec> codecs(int[] typeOids) {
        return engine.codecs(typeOids).stream()
            .map(c -> c.canDecodeBinary() ? c : new LeftOut(c))
            .toList();
      }

      @Override
      public void close() {
        engine.close();
      }
    };
  }

  /** Stands in for a codec without binary decoding: its binary values are {@link #LEFT_OUT}. */
  private static final class LeftOut extends ValueCodec {
    private final ValueCodec codec;

    LeftOut(ValueCodec codec) {
      super(codec.typeLabel());
      this.codec = codec;
    }

    @Override
    public boolean canDecodeBinary() {
      return false;
    }

    @Override
    Object text(byte[] b, int off, int len) {
      return codec.decodeText(b, off, len);
    }

    @Override
    Object binary(byte[] b, int off, int len) {
      return LEFT_OUT;
    }
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

  /** What plain JDBC reads for every value, in text mode: exactly the server's output. */
  private List<String[]> jdbcText() throws SQLException {
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

  private static String where(int row, int column) {
    Column c = COLUMNS.get(column);
    return "row " + row + ", column " + c.name() + " (" + c.type() + ")";
  }

  /** The disagreements of one way with JDBC's text: wrong nullness, Java type or printed text. */
  private static List<String> againstJdbc(String way, List<Object[]> rows, List<String[]> jdbc) {
    List<String> problems = new ArrayList<>();
    for (int r = 0; r < jdbc.size(); r++) {
      for (int i = 0; i < COLUMNS.size(); i++) {
        Object v = rows.get(r)[i];
        String expected = jdbc.get(r)[i];
        if (v == LEFT_OUT) {
          continue;
        }
        String printed = v == null ? null : PgText.format(v);
        if (expected == null ? v != null : !expected.equals(printed)) {
          problems.add(
              String.format(
                  "%s: JDBC getString reads %s but %s reads %s, printed %s",
                  where(r, i), quote(expected), way, Values.show(v), quote(printed)));
        } else if (v != null && !COLUMNS.get(i).javaType().isInstance(v)) {
          problems.add(
              String.format(
                  "%s: %s reads a %s, documented as %s",
                  where(r, i),
                  way,
                  v.getClass().getSimpleName(),
                  COLUMNS.get(i).javaType().getSimpleName()));
        }
      }
    }
    return problems;
  }

  /** The values two ways read differently. */
  private static List<String> between(
      String wayA, List<Object[]> a, String wayB, List<Object[]> b) {
    List<String> problems = new ArrayList<>();
    for (int r = 0; r < a.size(); r++) {
      for (int i = 0; i < COLUMNS.size(); i++) {
        Object x = a.get(r)[i];
        Object y = b.get(r)[i];
        if (x != LEFT_OUT && y != LEFT_OUT && !Values.same(x, y)) {
          problems.add(
              String.format(
                  "%s: %s reads %s but %s reads %s",
                  where(r, i), wayA, Values.show(x), wayB, Values.show(y)));
        }
      }
    }
    return problems;
  }

  private static String quote(String s) {
    return s == null ? "NULL" : "'" + s + "'";
  }

  @Test
  void everyWayDecodesEveryValueToItsDocumentedTypeAndToWhatJdbcReads() throws Exception {
    List<String[]> jdbc = jdbcText();
    assertThat(jdbc).hasSize(rowCount);
    Map<String, List<Object[]>> results = new LinkedHashMap<>();
    for (Map.Entry<String, Reader> reader : readers().entrySet()) {
      List<Object[]> rows = reader.getValue().read();
      assertThat(rows).as(reader.getKey()).hasSize(rowCount);
      for (Object[] row : rows) {
        assertThat(row).as(reader.getKey()).hasSize(COLUMNS.size());
      }
      results.put(reader.getKey(), rows);
    }
    List<String> problems = new ArrayList<>();
    String firstWay = results.keySet().iterator().next();
    for (Map.Entry<String, List<Object[]>> way : results.entrySet()) {
      problems.addAll(againstJdbc(way.getKey(), way.getValue(), jdbc));
      if (!way.getKey().equals(firstWay)) {
        problems.addAll(between(firstWay, results.get(firstWay), way.getKey(), way.getValue()));
      }
    }
    assertThat(problems).as("values read differently").isEmpty();
    // the binary way leaves out exactly the values of the types without binary decoding
    List<Object[]> binary = results.get("pgoutput binary");
    for (int r = 0; r < rowCount; r++) {
      for (int i = 0; i < COLUMNS.size(); i++) {
        boolean leftOut = textOnly(COLUMNS.get(i)) && jdbc.get(r)[i] != null;
        assertThat(binary.get(r)[i] == LEFT_OUT)
            .as("pgoutput binary leaves out %s", where(r, i))
            .isEqualTo(leftOut);
      }
    }
  }

  @Test
  void theEngineStreamsTheMatrixInTextAndEveryOtherTypeInBinary() {
    assertThat(EngineStreamParts.streamsBinary(source, PUBLICATION)).isFalse();
    assertThat(EngineStreamParts.streamsBinary(source, BINARY_ONLY_PUBLICATION)).isTrue();
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
      assertThat(registry.canDecodeBinary(byColumn.get(c.type()).oid()))
          .as(c.type())
          .isEqualTo(!textOnly(c));
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
