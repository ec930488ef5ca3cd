package org.pgetl.examples.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;

/**
 * What a PostgreSQL state store knows, read with plain SQL before any store is opened (opening one
 * creates its schema): which pipelines have rows in it, and which destinations each one has. The
 * commands that act on a pipeline refuse a pipeline id or destination name the store does not know,
 * so that a typo does not write a lifecycle row nobody reads.
 *
 * <p>A pipeline is known when it has table states, a lease row or a lifecycle row. A destination is
 * known when it has a lifecycle row, or when an instance that wrote to it held the pipeline's
 * lease: the engine describes a lease holder as {@code host pid N (destination name)}.
 */
final class StoreDirectory {
  private static final Pattern HOLDER_DESTINATION = Pattern.compile("\\(([^()]+)\\)\\s*$");

  private final PgConnectionConfig store;
  private final String schema;

  StoreDirectory(PgConnectionConfig store, String schema) {
    this.store = store;
    this.schema = schema;
  }

  /**
   * Returns the ids of the pipelines that have rows in the store, sorted.
   *
   * @return the ids; empty when the schema holds no store
   */
  List<String> pipelines() {
    TreeSet<String> ids = new TreeSet<>();
    try (Connection c = Connections.open(store, "read the state store")) {
      for (String table :
          List.of("replication_state", "pipeline_leases", "destination_lifecycle")) {
        ids.addAll(column(c, table, "pipeline_id", null));
      }
    } catch (SQLException e) {
      throw failed(e);
    }
    return new ArrayList<>(ids);
  }

  /**
   * Returns the destination names known for a pipeline, sorted.
   *
   * @param pipelineId the pipeline
   * @return the names
   */
  List<String> destinations(String pipelineId) {
    TreeSet<String> names = new TreeSet<>();
    try (Connection c = Connections.open(store, "read the state store")) {
      names.addAll(column(c, "destination_lifecycle", "destination_name", pipelineId));
      for (String holder : column(c, "pipeline_leases", "holder", pipelineId)) {
        destinationOf(holder).ifPresent(names::add);
      }
    } catch (SQLException e) {
      throw failed(e);
    }
    return new ArrayList<>(names);
  }

  /**
   * Returns the destination named in a lease holder's description, {@code host pid N (name)}.
   *
   * @param holder the description
   * @return the name, or empty when the description has none
   */
  static Optional<String> destinationOf(String holder) {
    Matcher m = HOLDER_DESTINATION.matcher(holder == null ? "" : holder);
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /**
   * Fails unless the store knows the pipeline.
   *
   * @param pipelineId the pipeline
   * @throws CliException naming the pipelines the store knows
   */
  void requirePipeline(String pipelineId) {
    List<String> known = pipelines();
    if (!known.contains(pipelineId)) {
      throw new CliException(
          "pipeline "
              + pipelineId
              + " is not known in the state store (schema "
              + schema
              + " of "
              + store.describe()
              + ")"
              + (known.isEmpty()
                  ? ": it holds no pipeline; a pipeline is known once it has started"
                  : "; its pipelines: " + String.join(", ", known)));
    }
  }

  /**
   * Fails unless the store knows the pipeline and, when it knows any destination of it, this one.
   *
   * @param pipelineId the pipeline
   * @param destinationName the destination's name
   * @throws CliException naming what the store knows
   */
  void requireDestination(String pipelineId, String destinationName) {
    requirePipeline(pipelineId);
    List<String> known = destinations(pipelineId);
    if (!known.isEmpty() && !known.contains(destinationName)) {
      throw new CliException(
          "destination "
              + destinationName
              + " is not known in pipeline "
              + pipelineId
              + "; its destinations: "
              + String.join(", ", known));
    }
  }

  /** The distinct values of a column (of one pipeline's rows), or none when the table is absent. */
  private List<String> column(
      Connection c, String table, String column, @Nullable String pipelineId) throws SQLException {
    List<String> out = new ArrayList<>();
    if (!exists(c, table)) {
      return out;
    }
    String sql =
        "SELECT DISTINCT "
            + column
            + " FROM "
            + TableName.quoteIdentifier(schema)
            + "."
            + table
            + (pipelineId == null ? "" : " WHERE pipeline_id = ?");
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      if (pipelineId != null) {
        ps.setString(1, pipelineId);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (rs.getString(1) != null) {
            out.add(rs.getString(1));
          }
        }
      }
    }
    return out;
  }

  private EtlException failed(SQLException e) {
    return new EtlException(
        ErrorKind.STATE_STORE_ERROR,
        "cannot read the state store in schema " + schema + " of " + store.describe(),
        ErrorReport.singleLine(e.getMessage()) + ", SQLSTATE " + e.getSQLState(),
        e);
  }

  private boolean exists(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, TableName.quoteIdentifier(schema) + "." + TableName.quoteIdentifier(table));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}
