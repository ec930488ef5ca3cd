package org.pgetl.destination.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.destination.internal.ErrorText;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableId;

/**
 * What {@link PostgresMirrorDestination} reads from the source database's catalog: the generated
 * columns of a table, which pgoutput does not publish (before PostgreSQL 18, and by default since)
 * and the engine's schemas therefore leave out.
 *
 * <p>The catalog read is today's, which may be ahead of the changes being applied (a pipeline that
 * lags behind DDL). That is harmless for generated columns: their values are a function of the row
 * they are in, so a generated column that the mirror adds early (or drops early) holds, for every
 * row, what the source would compute from the same values.
 *
 * <p>Thread-safe: a small HikariCP pool of read-only connections, opened when first needed.
 */
final class MirrorSource implements AutoCloseable {
  /** Two connections: catalog reads are short, and only table creations and schema changes read. */
  private static final int POOL_SIZE = 2;

  /** Unused connections close after a minute: schema changes come rarely. */
  private static final Duration IDLE_TIMEOUT = Duration.ofMinutes(1);

  /**
   * A generated column of a source table.
   *
   * @param attnum its attnum in the source
   * @param name its name
   * @param type its type, as {@code format_type} prints it
   * @param expression its generation expression, as {@code pg_get_expr} prints it
   * @param virtual true for a {@code VIRTUAL} column (PostgreSQL 18), false for a {@code STORED}
   *     one
   */
  record GeneratedColumn(int attnum, String name, String type, String expression, boolean virtual) {
    /** Returns true when {@code o} computes the same value of the same type under the same name. */
    boolean same(@Nullable GeneratedColumn o) {
      return o != null
          && name.equals(o.name)
          && type.equals(o.type)
          && expression.equals(o.expression)
          && virtual == o.virtual;
    }
  }

  private final PgConnectionConfig source;
  private final HikariDataSource pool;

  /**
   * Creates the pool; nothing is opened yet.
   *
   * @param source the source database
   * @param name the pool's name and the sessions' {@code application_name}
   */
  MirrorSource(PgConnectionConfig source, String name) {
    this.source = source;
    HikariConfig hc = new HikariConfig();
    hc.setPoolName(name);
    hc.setJdbcUrl(source.jdbcUrl());
    hc.setUsername(source.user());
    if (source.password() != null) {
      hc.setPassword(source.password());
    }
    hc.addDataSourceProperty("ApplicationName", name);
    hc.setReadOnly(true);
    hc.setMaximumPoolSize(POOL_SIZE);
    hc.setMinimumIdle(0);
    hc.setIdleTimeout(IDLE_TIMEOUT.toMillis());
    hc.setConnectionTimeout(Math.max(250, source.connectTimeout().toMillis()));
    hc.setInitializationFailTimeout(-1); // the first read connects, and reports a failure
    this.pool = new HikariDataSource(hc);
  }

  /**
   * Reads the generated columns of a source table, in attnum order.
   *
   * @param table the source table
   * @return its generated columns; empty when it has none or no longer exists
   * @throws EtlException ({@code SOURCE_CONNECTION_FAILED}, {@code SOURCE_QUERY_FAILED}) when the
   *     catalog cannot be read
   */
  List<GeneratedColumn> generatedColumns(TableId table) {
    try (Connection c = pool.getConnection()) {
      return read(c, "?::bigint::oid", Long.toString(table.oid()));
    } catch (SQLException e) {
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      boolean connection = state.isEmpty() || state.startsWith("08") || state.startsWith("57P");
      throw new EtlException(
          connection ? ErrorKind.SOURCE_CONNECTION_FAILED : ErrorKind.SOURCE_QUERY_FAILED,
          "could not read the generated columns of source table "
              + table
              + " in "
              + source.describe()
              + " for the PostgreSQL mirror",
          ErrorText.maskQuoted(ErrorText.firstLine(e.getMessage())) + " (SQLSTATE " + state + ")",
          null);
    }
  }

  /**
   * Reads the generated columns of a table of the database {@code c} is connected to, in attnum
   * order: the source's, or a mirror table's.
   *
   * @param c the connection
   * @param relation how the parameter names the table: {@code ?::bigint::oid} or {@code
   *     ?::regclass}
   * @param table the table's oid or its quoted, qualified name
   * @return its generated columns; empty when it has none or does not exist
   * @throws SQLException when the query fails
   */
  static List<GeneratedColumn> read(Connection c, String relation, String table)
      throws SQLException {
    List<GeneratedColumn> out = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),"
                + " pg_get_expr(d.adbin, d.adrelid), a.attgenerated = 'v' FROM pg_attribute a"
                + " JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
                + " WHERE a.attrelid = "
                + relation
                + " AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated <> ''"
                + " ORDER BY a.attnum")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new GeneratedColumn(
                  rs.getInt(1),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getBoolean(5)));
        }
      }
    }
    return out;
  }

  /** Closes the pool. */
  @Override
  public void close() {
    pool.close();
  }
}
