package org.pgetl.core.internal.pg;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Looks up and drops replication slots over a plain connection ({@code pg_replication_slots},
 * {@code pg_drop_replication_slot}). Creation needs a replication connection: see {@link
 * ReplicationConnection#createSlot(String, SnapshotMode)}.
 *
 * <p>Not thread-safe (it uses one JDBC connection); the caller owns and closes the connection.
 */
public final class SlotAdmin {
  private static final Logger LOG = LoggerFactory.getLogger(SlotAdmin.class);

  /** The longest one termination wait, kept under the bounded session's statement timeout. */
  static final Duration MAX_TERMINATE_WAIT = Duration.ofSeconds(20);

  /**
   * How long pgetl waits for a slot's walsender to go away when it drops the slot: longer than a
   * walsender takes to notice its client left ({@code wal_sender_timeout} aside).
   */
  public static final Duration DROP_TIMEOUT = Duration.ofSeconds(30);

  private final Connection connection;
  private final ServerVersion version;
  private final Ticker ticker;

  /**
   * Creates an administrator over a plain connection.
   *
   * @param connection an open plain connection in auto-commit mode
   */
  public SlotAdmin(Connection connection) {
    this(connection, Ticker.system());
  }

  /**
   * Creates an administrator over a plain connection that measures its waits on {@code ticker}.
   *
   * @param connection an open plain connection in auto-commit mode
   * @param ticker where the deadline of a drop is measured
   */
  public SlotAdmin(Connection connection, Ticker ticker) {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.version = PgCatalog.serverVersion(connection);
  }

  /**
   * Returns the slot of that name, or empty when none exists.
   *
   * @param slotName the slot's name
   * @return the slot, or empty
   * @throws EtlException when the query fails
   */
  public Optional<SlotInfo> find(String slotName) {
    SlotNames.validate(slotName);
    List<SlotInfo> found = query("WHERE slot_name = ?", slotName);
    return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
  }

  /**
   * Returns every slot whose name starts with {@code prefix} (for example {@link
   * SlotNames#tableSyncPrefix(String)}), ordered by name.
   *
   * @param prefix the name prefix
   * @return the slots
   * @throws EtlException when the query fails
   */
  public List<SlotInfo> listByPrefix(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    String pattern = prefix.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%") + "%";
    return query("WHERE slot_name LIKE ? ORDER BY slot_name", pattern);
  }

  private List<SlotInfo> query(String where, String arg) {
    String sql =
        "SELECT slot_name, plugin, slot_type, database, temporary, active, active_pid,"
            + " restart_lsn::text, confirmed_flush_lsn::text, wal_status::text, "
            + (version.atLeast(17) ? "invalidation_reason::text" : "NULL::text")
            + ", "
            + (version.supportsFailoverSlots() ? "failover" : "false")
            + " FROM pg_replication_slots "
            + where;
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setString(1, arg);
      try (ResultSet rs = ps.executeQuery()) {
        List<SlotInfo> out = new ArrayList<>();
        while (rs.next()) {
          out.add(
              new SlotInfo(
                  rs.getString(1),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getBoolean(5),
                  rs.getBoolean(6),
                  rs.getInt(7),
                  lsnOrNull(rs.getString(8)),
                  lsnOrNull(rs.getString(9)),
                  rs.getString(10),
                  rs.getString(11),
                  rs.getBoolean(12)));
        }
        return out;
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read pg_replication_slots");
    }
  }

  private static @Nullable Lsn lsnOrNull(@Nullable String text) {
    return text == null ? null : Lsn.parse(text);
  }

  /**
   * Drops a slot if it exists. When a process holds the slot (a walsender, possibly of an earlier
   * run of this pipeline), terminates that process and waits for it to go away, then drops; all
   * within {@code timeout}.
   *
   * @param slotName the slot's name
   * @param timeout the longest the whole operation may take; {@link Duration#ZERO} drops only an
   *     inactive slot
   * @return true when this call dropped the slot, false when it did not exist (or vanished
   *     meanwhile)
   * @throws EtlException of kind {@link ErrorKind#REPLICATION_SLOT_DELETION_TIMEOUT} when the slot
   *     is still in use at the deadline, {@link ErrorKind#PERMISSION_DENIED} when the role may not
   *     terminate the holder, or the kind {@link PgErrors} decides
   */
  public boolean dropIfExists(String slotName, Duration timeout) {
    SlotNames.validate(slotName);
    long deadline = ticker.nanoTime() + Math.max(0, timeout.toNanos());
    long parkNanos = TimeUnit.MILLISECONDS.toNanos(1);
    while (true) {
      Optional<SlotInfo> slot = find(slotName);
      if (slot.isEmpty()) {
        return false;
      }
      long remaining = deadline - ticker.nanoTime();
      if (slot.get().active()) {
        if (remaining <= 0) {
          throw deletionTimeout(slotName, slot.get(), timeout);
        }
        if (slot.get().activePid() != 0) {
          terminate(slotName, slot.get().activePid(), remaining);
        }
        if (!version.atLeast(14) || slot.get().activePid() == 0) {
          // PostgreSQL 13 cannot wait for the termination server-side: back off before looking
          // again (bounded by the deadline; there is no notification to wait on).
          LockSupport.parkNanos(Math.min(parkNanos, Math.max(0, remaining)));
          parkNanos = Math.min(parkNanos * 2, TimeUnit.MILLISECONDS.toNanos(100));
        }
        continue;
      }
      try (PreparedStatement ps =
          connection.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
        ps.setString(1, slotName);
        ps.execute();
        LOG.info("dropped replication slot {}", slotName);
        return true;
      } catch (SQLException e) {
        String state = e.getSQLState();
        if ("42704".equals(state)) {
          return false;
        }
        if ("55006".equals(state) && deadline - ticker.nanoTime() > 0) {
          // A process acquired the slot between the look-up and the drop: terminate it again.
          continue;
        }
        if ("55006".equals(state)) {
          throw deletionTimeout(slotName, slot.get(), timeout);
        }
        throw PgErrors.map(e, "could not drop replication slot " + slotName);
      }
    }
  }

  private void terminate(String slotName, int pid, long remainingNanos) {
    String sql;
    if (version.atLeast(14)) {
      long waitMillis =
          Math.max(
              1,
              Math.min(
                  TimeUnit.NANOSECONDS.toMillis(remainingNanos), MAX_TERMINATE_WAIT.toMillis()));
      // Waits server-side until the process has exited (and released the slot), or the wait ends.
      sql = "SELECT pg_terminate_backend(" + pid + ", " + waitMillis + ")";
    } else {
      sql = "SELECT pg_terminate_backend(" + pid + ")";
    }
    LOG.info("terminating process {} that holds replication slot {}", pid, slotName);
    try (Statement st = connection.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw PgErrors.map(
          e, "could not terminate process " + pid + " that holds replication slot " + slotName);
    }
  }

  private static EtlException deletionTimeout(String slotName, SlotInfo slot, Duration timeout) {
    return new EtlException(
        ErrorKind.REPLICATION_SLOT_DELETION_TIMEOUT,
        "replication slot " + slotName + " is still in use after " + timeout,
        "held by process "
            + slot.activePid()
            + "; confirmed_flush_lsn "
            + slot.confirmedFlushLsn());
  }
}
