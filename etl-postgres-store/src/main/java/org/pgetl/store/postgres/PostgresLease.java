package org.pgetl.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;
import java.util.zip.CRC32;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.Lease;
import org.pgetl.store.PipelineStore.LeaseHolder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipeline's lease in PostgreSQL: a session advisory lock, keyed by (a hash of the store's
 * schema, the id of the pipeline's row in {@code pipeline_leases}), held on a connection of its
 * own. The server releases it when that session ends — a process killed with SIGKILL included — and
 * {@link #isHeld} checks it on that same connection with a socket timeout, so that a cut network is
 * noticed within the check's bound even when the server has not noticed yet.
 */
final class PostgresLease implements Lease {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresLease.class);

  private final DataSource dataSource;
  private final String schema;
  private final String pipelineId;
  private final String holder;
  private final int namespace;
  private @Nullable Connection connection;
  private int rowId;
  private long epoch;
  private boolean previousReleased = true;
  private volatile boolean closed;

  PostgresLease(DataSource dataSource, String schema, String pipelineId, String holder) {
    this.dataSource = dataSource;
    this.schema = schema;
    this.pipelineId = pipelineId;
    this.holder = holder;
    CRC32 crc = new CRC32();
    crc.update(("pgetl.lease." + schema).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    this.namespace = (int) crc.getValue();
  }

  private String table() {
    return TableName.quoteIdentifier(schema) + ".pipeline_leases";
  }

  @Override
  public synchronized Optional<Long> tryAcquire() {
    if (closed) {
      return Optional.empty();
    }
    try {
      if (connection != null && held()) {
        return Optional.of(epoch);
      }
      dropConnection();
      Connection c = dataSource.getConnection();
      connection = c;
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO " + table() + " (pipeline_id) VALUES (?) ON CONFLICT DO NOTHING")) {
        ps.setString(1, pipelineId);
        ps.executeUpdate();
      }
      try (PreparedStatement ps =
          c.prepareStatement("SELECT id FROM " + table() + " WHERE pipeline_id = ?")) {
        ps.setString(1, pipelineId);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          rowId = rs.getInt(1);
        }
      }
      boolean locked;
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?, ?)")) {
        ps.setInt(1, namespace);
        ps.setInt(2, rowId);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          locked = rs.getBoolean(1);
        }
      }
      if (!locked) {
        dropConnection();
        return Optional.empty();
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "WITH old AS (SELECT released FROM "
                  + table()
                  + " WHERE id = ?) UPDATE "
                  + table()
                  + " t SET epoch = t.epoch + 1, holder = ?, holder_pid = pg_backend_pid(),"
                  + " acquired_at = now(), released = false FROM old WHERE t.id = ?"
                  + " RETURNING t.epoch, old.released")) {
        ps.setInt(1, rowId);
        ps.setString(2, holder);
        ps.setInt(3, rowId);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          epoch = rs.getLong(1);
          previousReleased = rs.getBoolean(2);
        }
      }
      LOG.info("pipeline {}: lease acquired, epoch {}", pipelineId, epoch);
      return Optional.of(epoch);
    } catch (SQLException e) {
      dropConnection();
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "could not take the lease of pipeline " + pipelineId,
          Jdbc.describe(e),
          e);
    }
  }

  @Override
  public synchronized boolean previousHolderReleased() {
    return previousReleased;
  }

  @Override
  public boolean isHeld(Duration timeout) {
    Connection c;
    synchronized (this) {
      c = connection;
    }
    if (c == null || closed) {
      return false;
    }
    try {
      // pgjdbc uses the executor for nothing but a null check: the timeout is the socket's
      c.setNetworkTimeout(Runnable::run, (int) Math.max(1, timeout.toMillis()));
      synchronized (this) {
        if (connection != c) {
          return false;
        }
        return held();
      }
    } catch (SQLException | RuntimeException e) {
      LOG.warn("pipeline {}: lease check failed ({}); the lease is lost", pipelineId, e.toString());
      synchronized (this) {
        if (connection == c) {
          dropConnection();
        }
      }
      return false;
    }
  }

  /** Under this monitor: true when the lease's session holds the lock. */
  private boolean held() throws SQLException {
    Connection c =
        Objects.requireNonNull(connection, "held() runs with the lease's connection open");
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
                + " AND classid = ?::oid AND objid = ?::oid AND objsubid = 2 AND granted")) {
      ps.setLong(1, Integer.toUnsignedLong(namespace));
      ps.setLong(2, Integer.toUnsignedLong(rowId));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  @Override
  public Optional<LeaseHolder> holder() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT l.holder, l.epoch, l.acquired_at FROM "
                    + table()
                    + " l WHERE l.pipeline_id = ? AND EXISTS (SELECT 1 FROM pg_locks k WHERE"
                    + " k.locktype = 'advisory' AND k.classid = ?::oid AND k.objid = l.id AND"
                    + " k.objsubid = 2 AND k.granted)")) {
      ps.setString(1, pipelineId);
      ps.setLong(2, Integer.toUnsignedLong(namespace));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getString(1) == null) {
          return Optional.empty();
        }
        return Optional.of(
            new LeaseHolder(
                rs.getString(1), rs.getLong(2), rs.getObject(3, OffsetDateTime.class).toInstant()));
      }
    } catch (SQLException e) {
      throw new EtlException(
          ErrorKind.STATE_STORE_ERROR,
          "could not read the lease of pipeline " + pipelineId,
          Jdbc.describe(e),
          e);
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (connection != null) {
      try (PreparedStatement mark =
              connection.prepareStatement(
                  "UPDATE " + table() + " SET released = true WHERE id = ? AND epoch = ?");
          PreparedStatement ps = connection.prepareStatement("SELECT pg_advisory_unlock(?, ?)")) {
        if (held()) {
          mark.setInt(1, rowId);
          mark.setLong(2, epoch);
          mark.executeUpdate();
        }
        ps.setInt(1, namespace);
        ps.setInt(2, rowId);
        ps.execute();
      } catch (SQLException e) {
        LOG.debug("pipeline {}: lease release failed: {}", pipelineId, e.getMessage());
      }
      dropConnection();
    }
  }

  private void dropConnection() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        LOG.debug("pipeline {}: closing the lease connection failed", pipelineId);
      }
      connection = null;
    }
  }
}
