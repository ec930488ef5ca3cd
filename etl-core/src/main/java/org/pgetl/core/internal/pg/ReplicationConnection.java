package org.pgetl.core.internal.pg;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.postgresql.PGConnection;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.postgresql.replication.fluent.logical.ChainedLogicalStreamBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection in replication mode ({@code replication=database}): creates slots, holds the
 * snapshot transaction of a table copy, and starts a logical replication stream.
 *
 * <p>Its states: idle, inside a snapshot transaction (after {@link #createSlot(String,
 * SnapshotMode)} with {@link SnapshotMode#USE_SNAPSHOT}, until {@link #endSnapshotTransaction()}),
 * or streaming (after {@link #startStreaming(StreamOptions)}; the connection then runs no other
 * command until closed). Not thread-safe: one worker uses it; a stream started from it belongs to
 * the thread that reads it.
 */
public final class ReplicationConnection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicationConnection.class);

  /** The shortest status interval used, whatever {@code wal_sender_timeout} says. */
  static final Duration MIN_STATUS_INTERVAL = Duration.ofMillis(100);

  private final Connection connection;
  private final String applicationName;
  private final ServerVersion serverVersion;
  private boolean inSnapshotTransaction;
  private @Nullable ReplicationStream stream;
  private IdleBackoff idleBackoff = IdleBackoff.DEFAULT;
  private boolean waitOnSocket = true;

  ReplicationConnection(Connection connection, String applicationName) {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.applicationName = applicationName;
    this.serverVersion = new ServerVersion(Integer.parseInt(show("server_version_num")));
    if (!serverVersion.atLeast(ServerVersion.MIN_SUPPORTED_MAJOR)) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "PostgreSQL " + serverVersion + " is too old",
          "pgetl needs PostgreSQL " + ServerVersion.MIN_SUPPORTED_MAJOR + " or later");
    }
  }

  /**
   * Returns the server's version.
   *
   * @return the version
   */
  public ServerVersion serverVersion() {
    return serverVersion;
  }

  /**
   * Returns the {@code application_name} of this connection.
   *
   * @return the name, as sent to the server
   */
  public String applicationName() {
    return applicationName;
  }

  /**
   * Returns this session's {@code wal_sender_timeout}: how long the server waits for a status
   * update before it drops the connection. {@link Duration#ZERO} means never.
   *
   * @return the timeout
   * @throws EtlException when the setting cannot be read
   */
  public Duration walSenderTimeout() {
    checkNotStreaming();
    return GucDurations.parse("wal_sender_timeout", show("wal_sender_timeout"));
  }

  /**
   * Sets how the streams started from this connection wait when idle (tests and benchmarks).
   *
   * @param backoff the backoff
   */
  void idleBackoff(IdleBackoff backoff) {
    this.idleBackoff = Objects.requireNonNull(backoff, "backoff");
  }

  /**
   * Sets whether the streams started from this connection wait for data in a socket read (the
   * default) or poll with the idle backoff (tests and benchmarks compare the two).
   *
   * @param enabled whether to wait on the socket
   */
  void waitOnSocket(boolean enabled) {
    this.waitOnSocket = enabled;
  }

  /**
   * Creates a permanent logical slot with the {@code pgoutput} plugin: {@code
   * CREATE_REPLICATION_SLOT "<name>" LOGICAL pgoutput <mode>}.
   *
   * <p>With {@link SnapshotMode#USE_SNAPSHOT} this first opens a {@code REPEATABLE READ, READ ONLY}
   * transaction and leaves it open: queries through {@link #jdbc()} and {@link #exportSnapshot()}
   * then see the data as of the consistent point, until {@link #endSnapshotTransaction()}. With
   * {@link SnapshotMode#EXPORT_SNAPSHOT} the returned snapshot name is valid until the next command
   * on this connection.
   *
   * @param slotName the slot's name ({@link SlotNames#validate(String)})
   * @param mode what to do with the snapshot
   * @return the slot's consistent point, and the snapshot name for {@code EXPORT_SNAPSHOT}
   * @throws EtlException of kind {@link ErrorKind#REPLICATION_SLOT_ALREADY_EXISTS} when a slot of
   *     that name exists, {@link ErrorKind#SOURCE_CONFIGURATION_LIMIT_EXCEEDED} when every slot is
   *     in use, or the kind {@link PgErrors} decides
   */
  public CreatedSlot createSlot(String slotName, SnapshotMode mode) {
    return createSlot(slotName, mode, false);
  }

  /**
   * Creates a permanent logical slot with the {@code pgoutput} plugin, as {@link
   * #createSlot(String, SnapshotMode)} does, optionally as a failover slot (PostgreSQL 17+): a
   * physical standby that synchronises slots ({@code sync_replication_slots = on}) then keeps a
   * copy of it, usable once the standby is promoted.
   *
   * @param slotName the slot's name ({@link SlotNames#validate(String)})
   * @param mode what to do with the snapshot
   * @param failover whether the slot is a failover slot
   * @return the slot's consistent point, and the snapshot name for {@code EXPORT_SNAPSHOT}
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when {@code failover} is asked of a
   *     server before 17, or as {@link #createSlot(String, SnapshotMode)}
   */
  public CreatedSlot createSlot(String slotName, SnapshotMode mode, boolean failover) {
    return createSlot(slotName, mode, false, failover);
  }

  /**
   * Creates a logical slot with the {@code pgoutput} plugin, permanent or temporary ({@code
   * TEMPORARY}: the server drops it when this connection ends, and only this connection can use
   * it), optionally as a failover slot; otherwise as {@link #createSlot(String, SnapshotMode)}.
   *
   * @param slotName the slot's name ({@link SlotNames#validate(String)})
   * @param mode what to do with the snapshot
   * @param temporary whether the slot goes away with this connection
   * @param failover whether the slot is a failover slot (PostgreSQL 17+; not with {@code
   *     temporary}, which the server refuses)
   * @return the slot's consistent point, and the snapshot name for {@code EXPORT_SNAPSHOT}
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when {@code failover} is asked of a
   *     server before 17, or as {@link #createSlot(String, SnapshotMode)}
   */
  public CreatedSlot createSlot(
      String slotName, SnapshotMode mode, boolean temporary, boolean failover) {
    SlotNames.validate(slotName);
    Objects.requireNonNull(mode, "mode");
    checkNotStreaming();
    if (inSnapshotTransaction) {
      throw new EtlException(
          ErrorKind.INVALID_STATE,
          "cannot create slot " + slotName + ": a snapshot transaction is still open");
    }
    serverVersion.requireFailoverSlots(failover);
    String sql = createSlotCommand(slotName, mode, temporary, failover);
    try {
      if (mode == SnapshotMode.USE_SNAPSHOT) {
        connection.setAutoCommit(false);
        inSnapshotTransaction = true;
        try (Statement st = connection.createStatement()) {
          st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
        }
      }
      try (Statement st = connection.createStatement();
          ResultSet rs = st.executeQuery(sql)) {
        if (!rs.next()) {
          throw new EtlException(
              ErrorKind.REPLICATION_SLOT_NOT_CREATED,
              "CREATE_REPLICATION_SLOT returned no row for slot " + slotName);
        }
        Lsn consistentPoint = Lsn.parse(rs.getString("consistent_point"));
        String snapshot = rs.getString("snapshot_name");
        LOG.info(
            "created replication slot {} ({}{}) at consistent point {}",
            slotName,
            mode,
            failover ? ", failover" : "",
            consistentPoint);
        return new CreatedSlot(
            slotName,
            consistentPoint,
            mode == SnapshotMode.EXPORT_SNAPSHOT ? snapshot : null,
            mode);
      }
    } catch (SQLException e) {
      if (mode == SnapshotMode.USE_SNAPSHOT) {
        abortSnapshotTransaction();
      }
      throw PgErrors.map(e, "could not create replication slot " + slotName);
    } catch (RuntimeException e) {
      if (mode == SnapshotMode.USE_SNAPSHOT) {
        abortSnapshotTransaction();
      }
      throw e;
    }
  }

  /**
   * Returns the command that creates a logical {@code pgoutput} slot. Without failover it is the
   * old syntax, which every supported server reads ({@code CREATE_REPLICATION_SLOT "s" LOGICAL
   * pgoutput NOEXPORT_SNAPSHOT}); a failover slot needs the option list of PostgreSQL 15+ and the
   * {@code FAILOVER} option of 17+ ({@code CREATE_REPLICATION_SLOT "s" LOGICAL pgoutput (SNAPSHOT
   * 'nothing', FAILOVER)}).
   *
   * @param slotName a validated slot name
   * @param mode the snapshot mode
   * @param failover whether the slot is a failover slot
   * @return the replication command
   */
  static String createSlotCommand(String slotName, SnapshotMode mode, boolean failover) {
    return createSlotCommand(slotName, mode, false, failover);
  }

  /**
   * Returns the command that creates a logical {@code pgoutput} slot, as {@link
   * #createSlotCommand(String, SnapshotMode, boolean)} does, with {@code TEMPORARY} before {@code
   * LOGICAL} for a temporary slot (both syntaxes put it there).
   *
   * @param slotName a validated slot name
   * @param mode the snapshot mode
   * @param temporary whether the slot is temporary
   * @param failover whether the slot is a failover slot
   * @return the replication command
   */
  static String createSlotCommand(
      String slotName, SnapshotMode mode, boolean temporary, boolean failover) {
    String head =
        "CREATE_REPLICATION_SLOT \""
            + slotName
            + "\""
            + (temporary ? " TEMPORARY" : "")
            + " LOGICAL pgoutput ";
    if (!failover) {
      return head + mode.name();
    }
    String snapshot =
        switch (mode) {
          case NOEXPORT_SNAPSHOT -> "nothing";
          case EXPORT_SNAPSHOT -> "export";
          case USE_SNAPSHOT -> "use";
        };
    return head + "(SNAPSHOT '" + snapshot + "', FAILOVER)";
  }

  /**
   * Makes an existing slot a failover slot, or an ordinary one, to match the pipeline's setting:
   * {@code ALTER_REPLICATION_SLOT "s" (FAILOVER true)} on PostgreSQL 17+ when the slot differs.
   * Before 17 there is nothing to change unless a failover slot is asked for, which fails.
   *
   * @param slot the slot as {@code pg_replication_slots} shows it
   * @param failover whether it must be a failover slot
   * @return true when the slot was changed
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when {@code failover} is asked of a
   *     server before 17, or the kind {@link PgErrors} decides when the command fails
   */
  public boolean matchFailover(SlotInfo slot, boolean failover) {
    Objects.requireNonNull(slot, "slot");
    checkNotStreaming();
    serverVersion.requireFailoverSlots(failover);
    if (!serverVersion.supportsFailoverSlots() || slot.failover() == failover) {
      return false;
    }
    SlotNames.validate(slot.slotName());
    String sql = "ALTER_REPLICATION_SLOT \"" + slot.slotName() + "\" (FAILOVER " + failover + ")";
    try (Statement st = connection.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw PgErrors.map(
          e,
          "could not make replication slot "
              + slot.slotName()
              + (failover ? " a failover slot" : " an ordinary slot"));
    }
    LOG.info(
        "replication slot {} is {} now",
        slot.slotName(),
        failover ? "a failover slot" : "no failover slot");
    return true;
  }

  /**
   * Returns true between {@link #createSlot(String, SnapshotMode)} with {@link
   * SnapshotMode#USE_SNAPSHOT} and {@link #endSnapshotTransaction()}.
   *
   * @return whether the slot's snapshot transaction is open
   */
  public boolean inSnapshotTransaction() {
    return inSnapshotTransaction;
  }

  /**
   * Exports the open snapshot transaction's snapshot ({@code pg_export_snapshot()}), for copy
   * connections to import with {@link PgConnector#openSnapshotChild(String, String)}. The id stays
   * valid until {@link #endSnapshotTransaction()}.
   *
   * @return the snapshot id
   * @throws EtlException of kind {@link ErrorKind#INVALID_STATE} outside a snapshot transaction
   */
  public String exportSnapshot() {
    if (!inSnapshotTransaction) {
      throw new EtlException(
          ErrorKind.INVALID_STATE,
          "no snapshot to export: create the slot with USE_SNAPSHOT first");
    }
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_export_snapshot()")) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not export the snapshot of the slot transaction");
    }
  }

  /**
   * Returns the JDBC connection, for queries and {@code COPY} inside the snapshot transaction (the
   * simple query protocol only: pgjdbc inlines parameters). Do not change its auto-commit mode or
   * close it; use this object's methods.
   *
   * @return the connection
   */
  public Connection jdbc() {
    checkNotStreaming();
    return connection;
  }

  /**
   * Ends the snapshot transaction (commits; it only read) and returns to auto-commit mode. Child
   * connections that imported the snapshot keep their own transactions. No-op outside one.
   *
   * @throws EtlException when the commit fails
   */
  public void endSnapshotTransaction() {
    if (!inSnapshotTransaction) {
      return;
    }
    try {
      connection.commit();
      connection.setAutoCommit(true);
      inSnapshotTransaction = false;
    } catch (SQLException e) {
      abortSnapshotTransaction();
      throw PgErrors.map(e, "could not end the slot's snapshot transaction");
    }
  }

  private void abortSnapshotTransaction() {
    inSnapshotTransaction = false;
    try {
      connection.rollback();
      connection.setAutoCommit(true);
    } catch (SQLException e) {
      LOG.debug("rollback of the snapshot transaction failed: {}", e.getMessage());
    }
  }

  /**
   * Starts logical replication from a slot ({@code START_REPLICATION SLOT ... LOGICAL ...}) with
   * {@code pgoutput} options resolved for this server, and returns the stream. The status interval
   * is clamped to a third of {@code wal_sender_timeout}, so that updates come well inside it.
   *
   * @param options the slot, start LSN, publications and options
   * @return the stream; its reading thread owns it
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when an option needs a newer
   *     server, {@link ErrorKind#REPLICATION_SLOT_NOT_FOUND} when the slot is missing, {@link
   *     ErrorKind#REPLICATION_SLOT_INVALIDATED} when it was invalidated, or the kind {@link
   *     PgErrors} decides
   */
  public ReplicationStream startStreaming(StreamOptions options) {
    checkNotStreaming();
    if (inSnapshotTransaction) {
      throw new EtlException(
          ErrorKind.INVALID_STATE,
          "cannot stream slot "
              + options.slotName()
              + " while its snapshot transaction is open: call endSnapshotTransaction() first");
    }
    int proto = options.resolveProtoVersion(serverVersion);
    Duration interval = effectiveStatusInterval(options.statusInterval(), walSenderTimeout());
    try {
      ChainedLogicalStreamBuilder b =
          connection
              .unwrap(PGConnection.class)
              .getReplicationAPI()
              .replicationStream()
              .logical()
              .withSlotName(options.slotName())
              .withStartPosition(LogSequenceNumber.valueOf(options.startLsn().value()))
              .withStatusInterval((int) Math.max(1, interval.toMillis()), TimeUnit.MILLISECONDS)
              .withAutomaticFlush(false)
              .withSlotOption("proto_version", Integer.toString(proto))
              .withSlotOption("publication_names", literal(options.publicationNamesOption()));
      if (options.messages()) {
        b.withSlotOption("messages", "true");
      }
      if (options.binary()) {
        b.withSlotOption("binary", "true");
      }
      if (options.streaming() != StreamingMode.OFF) { // off is the server's default
        b.withSlotOption("streaming", options.streaming().optionValue());
      }
      PGReplicationStream pgStream = b.start();
      LOG.info(
          "started replication from slot {} at {} (proto_version {}, status every {} ms)",
          options.slotName(),
          options.startLsn(),
          proto,
          interval.toMillis());
      stream =
          ReplicationStream.create(
              pgStream,
              connection,
              options.slotName(),
              options.startLsn(),
              interval.toNanos(),
              options.feedbackDelay().toNanos(),
              (int) Math.min(Integer.MAX_VALUE, options.closeTimeout().toMillis()),
              idleBackoff,
              waitOnSocket ? SocketDataWait.of(connection) : null,
              options.ticker());
      return stream;
    } catch (SQLException e) {
      throw PgErrors.map(
          e,
          "could not start replication from slot "
              + options.slotName()
              + " at "
              + options.startLsn());
    }
  }

  /**
   * Returns the status interval to use: the configured one, at most a third of a non-zero {@code
   * wal_sender_timeout}, and at least {@link #MIN_STATUS_INTERVAL}.
   */
  static Duration effectiveStatusInterval(Duration configured, Duration walSenderTimeout) {
    Duration d = configured;
    if (!walSenderTimeout.isZero()) {
      Duration third = walSenderTimeout.dividedBy(3);
      if (third.compareTo(d) < 0) {
        d = third;
      }
    }
    return d.compareTo(MIN_STATUS_INTERVAL) < 0 ? MIN_STATUS_INTERVAL : d;
  }

  /** Quotes a value as a string literal of the replication grammar (pgjdbc adds the quotes). */
  private static String literal(String value) {
    return value.replace("'", "''");
  }

  private String show(String setting) {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read " + setting + " on a replication connection");
    }
  }

  private void checkNotStreaming() {
    if (stream != null) {
      throw new EtlException(
          ErrorKind.INVALID_STATE,
          "the replication connection is streaming slot "
              + stream.slotName()
              + " and runs no other command");
    }
  }

  /**
   * Closes the stream (with a final status update) if one is open, rolls back an open snapshot
   * transaction, and closes the connection. Never throws.
   */
  @Override
  public void close() {
    if (stream != null) {
      stream.close();
    }
    if (inSnapshotTransaction && stream == null) {
      abortSnapshotTransaction();
    }
    PgConnector.closeQuietly(connection);
  }
}
