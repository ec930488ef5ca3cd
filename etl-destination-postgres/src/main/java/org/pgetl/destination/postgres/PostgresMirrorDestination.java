package org.pgetl.destination.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.destination.internal.ErrorText;
import org.pgetl.destination.internal.SerialWriter;
import org.pgetl.destination.postgres.MirrorCatalog.Table;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.ReplicatedTableSchema;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A destination that mirrors every replicated table into another PostgreSQL database, exactly once
 * across restarts.
 *
 * <h2>Tables</h2>
 *
 * Each source table {@code s.t} becomes the table {@code "s"."t"} of the target database (the
 * schema is created when missing), with the same column names and types: each column gets the
 * source's formatted type ({@link org.pgetl.model.ColumnSchema#typeName()}, for example {@code
 * numeric(12,2)} or {@code text[]}) when the target database knows a type of that name, and {@code
 * text} holding PostgreSQL's text form otherwise — the case of enums, domains and composite types
 * that exist in the source only. The primary key is the source's replica identity columns, else its
 * primary key; a table with neither (REPLICA IDENTITY FULL, no primary key) gets no key, and its
 * updates and deletes change one row that equals the old row. Columns carry no defaults and no
 * {@code NOT NULL} besides the key; a source table without columns ({@code CREATE TABLE t ()})
 * becomes a target table without columns, with as many rows of no values. Schema changes (a {@code
 * Relation} event, or any event that carries a new schema) are applied in the transaction of the
 * rows that follow them: columns are matched by attnum, so dropped, renamed, retyped and added
 * columns are followed, and a changed key is rebuilt. A column added with a default ({@code ADD c
 * int NOT NULL DEFAULT 0}) has the default's value in the rows already there, as at the source,
 * where no change is written for them: the target evaluates the source's default expression once,
 * then drops the default. A volatile default, which gave each source row a value of its own, or one
 * the target cannot evaluate, leaves NULL in those rows until they change, with a warning.
 *
 * <p>Generated columns, which pgoutput does not publish, exist in the mirror when the destination
 * is given the source database ({@link #PostgresMirrorDestination(PgConnectionConfig, int,
 * PgConnectionConfig)}): it reads them from the source's catalog whenever it creates a table or
 * applies a new schema of it, and creates them with the source's type and expression, so the target
 * computes them from each row's replicated values, and recomputes them when the row changes. A
 * generated column whose expression the target cannot evaluate (a function that exists in the
 * source only) is left out with a warning. Bookkeeping lives in the schema {@code _pgetl} of the
 * target (see {@link MirrorCatalog}); user logical messages are kept in {@code
 * _pgetl.mirror_messages}. A table of the same name that pgetl did not create is never dropped:
 * creating the mirror table then fails with {@code DESTINATION_SCHEMA_ERROR}.
 *
 * <p>Target tables follow the source table's oid, never its name: a table renamed in the source
 * ({@code ALTER TABLE ... RENAME}, {@code SET SCHEMA}, {@code ALTER SCHEMA ... RENAME}) is renamed
 * in the target, with its rows, by the next event that carries its new name. A new table copied
 * under a name that another table of the pipeline still holds (renamed or dropped in the source)
 * parks that table as {@code _pgetl_parked_<oid>} in its schema instead of dropping it; the parked
 * table gets its name back with its next change, or when the table holding the name moves on.
 * Renaming onto a table that pgetl did not create fails with {@code DESTINATION_SCHEMA_ERROR}.
 *
 * <h2>Idempotency</h2>
 *
 * Delivery is at-least-once, so every write is safe to repeat: each call is one target transaction
 * that commits the rows together with the bookkeeping that says they are there.
 *
 * <ul>
 *   <li>Copy: {@code _pgetl.mirror_copy_attempts} holds each table's current copy attempt, written
 *       first in the transaction of the drop that names it. A batch's transaction reads it {@code
 *       FOR SHARE} (so a drop for a new attempt waits until the batch commits, and a batch that
 *       comes after the drop sees the new attempt) and skips a batch of another attempt — a late
 *       batch of an abandoned attempt — answering it {@code durable()}. {@code
 *       _pgetl.mirror_copy_batches} holds the id of every batch the current copy attempt stored;
 *       the transaction inserts the batch id ({@code ON CONFLICT DO NOTHING}) and skips the rows
 *       when the id was there. Rows go in with {@code COPY ... FROM STDIN}, in binary format when
 *       every column has a type that {@link MirrorBinaryCopy} encodes. The {@code Finish} of the
 *       current attempt checks that every batch it counts is stored and marks the attempt finished
 *       with its counts; a {@code Finish} of another attempt changes nothing. A write of a catch-up
 *       stream reads the attempt {@code FOR SHARE} too, and one of another attempt's stream is
 *       skipped and answered {@code durable()}.
 *   <li>Events: {@code _pgetl.mirror_tables} holds, per table, the greatest {@link
 *       EventSequenceKey} applied. The engine keeps each table's events in order, so an event at or
 *       below it was applied before a restart and is skipped. A {@code Relation} event shares the
 *       key of the change it precedes: it is applied when that change is new, and does not move the
 *       key itself. Inserts and full updates are upserts by key; a {@code Partial} update sets only
 *       the columns it carries, so the unchanged TOAST columns keep their current values. Many
 *       inserts to one table with no other change in the write are copied into the table without an
 *       upsert, under a savepoint: a key already there rolls the savepoint back and they are
 *       upserted after all, so the outcome is the same.
 *   <li>{@link #dropTableForCopy}: records the new attempt, drops the table and forgets its batch
 *       ids and applied key, so the new copy attempt starts clean.
 * </ul>
 *
 * <h2>Tables copied in chunks</h2>
 *
 * The mirror supports the chunked copy of large tables ({@link #supportsChunkedCopy()}): the
 * table's changes are applied while its chunks are copied. A table whose copy attempt is open
 * (named by a drop, its {@code Finish} not committed) and gets changes is such a table, and until
 * its {@code Finish} its changes and copied rows follow the chunked copy's rules: an insert or a
 * copied row of a key the table holds replaces that row; an update or delete of a key it does not
 * hold changes nothing (a later chunk or change brings the row), except that an update that moves a
 * row to another key and carries every value writes the row under its new key. A copy batch is
 * copied as always, under a savepoint; only when a key is already there (a change wrote it, or an
 * earlier read of the same chunk did) is the savepoint rolled back and the batch copied into a
 * staging table and upserted from it. Each {@code ChunkEnd} checks that the batches of its read are
 * stored and is recorded in {@code _pgetl.mirror_copy_chunks}; the {@code Finish} of an attempt
 * with chunks relies on those checks. The open attempt is kept in the target, so a restarted
 * pipeline continues it. After the {@code Finish}, changes are applied as the Events item above
 * says, as for any table.
 *
 * <h2>Fencing</h2>
 *
 * Two instances of a pipeline may overlap for a moment (a rolling deploy, a network cut that the
 * old instance has not noticed yet); the newer one holds a lease of a greater epoch ({@link
 * DestinationContext#epoch()}). Every write transaction first checks the write's epoch against
 * {@code _pgetl.mirror_epochs}, the greatest epoch that wrote to the mirror, and raises it when the
 * write's is greater (see {@link MirrorCatalog#fence}): once a newer instance wrote, a write of an
 * older epoch — a copy batch, a {@code Finish}, a drop, events — is rolled back before it changed
 * anything and answered {@code shutdown()}, so the older instance stops, and the mirror logs why.
 * Every later write of that epoch is refused at once, an empty durability barrier included.
 *
 * <h2>Threads, connections and answers</h2>
 *
 * The methods queue their work and return at once. Events go to one writer thread ({@code
 * pgetl-pgmirror-<pipeline>}), so each stream's writes commit in the order they came and an empty
 * {@code REQUIRE_DURABLE} barrier is answered after the writes queued before it. Copy batches,
 * {@code Finish} barriers and drops go to a pool of {@code copyConnections} threads ({@code
 * pgetl-pgmirror-copy-<pipeline>-<n>}) that run concurrently: two partitions of one table insert
 * disjoint rows, so they never wait for each other's row locks, and creating a table runs under a
 * transaction-scoped advisory lock, so the first batches of two partitions create it once. The
 * first batches of several tables of a new schema create the schema at once: the one that loses the
 * race waits for the winner's commit and goes on with the schema it created (see {@link
 * MirrorCatalog#createSchema}). Each write borrows a connection from a HikariCP pool of at most one
 * per writer thread ({@code copyConnections + 1}, named {@code pgetl-mirror-<pipeline>}, which is
 * also the sessions' {@code application_name}), opened when first needed and closed after ten idle
 * minutes. A connection that sat unused is validated before a write gets it; a broken one is closed
 * and replaced; a write whose connection was lost anyway (the target restarted, or the server
 * closed an idle connection) is rolled back and runs once more on a new connection before it is
 * answered, after the other idle connections were closed. A write that the server rolls back to end
 * a deadlock or a serialization failure runs again, three times at most, before it fails with
 * {@code DESTINATION_ATOMIC_BATCH_RETRYABLE}.
 *
 * <p>Every write is answered {@code durable()} after its transaction commits (a write is never left
 * merely "accepted", so nothing is kept per {@code StreamId}), or {@code fail(EtlException)} with a
 * {@code DESTINATION_*} kind chosen from the SQLSTATE, which the detail carries, after a rollback.
 * Error details never carry row values: quoted parts of the server's message are masked. {@link
 * #shutdown()} lets running writes commit, answers the writes still queued with {@code shutdown()}
 * (they are delivered again at the next start), then closes the connections.
 *
 * <h2>Throughput</h2>
 *
 * The copy writes rows with {@code COPY ... FROM STDIN}: on a two-core machine, with the target on
 * the source's server, it stored 100–170k rows/s from one thread and 190–230k rows/s from four,
 * about twice the rate of multi-row {@code INSERT ... ON CONFLICT} with text parameters (60–90k
 * rows/s). Events are folded into their net change per key and written as a few multi-row
 * statements per table (see {@link MirrorRows}): 25–40k row changes/s for a mix of inserts, full
 * and partial updates and deletes. A write with many changes to one table copies them into a
 * temporary staging table and merges them with one statement, which about doubled the rate of one
 * large source transaction; when all of a write's changes to a table are inserts, they are copied
 * straight into it. Each write waits for its commit ({@code synchronous_commit} of the target
 * applies), so larger batches ({@code PipelineConfig.batchMaxBytes}) raise the rate.
 */
public final class PostgresMirrorDestination implements Destination {
  private static final Logger log = LoggerFactory.getLogger(PostgresMirrorDestination.class);

  /** 4 copy threads: as many as the engine's default copy connections per table. */
  public static final int DEFAULT_COPY_CONNECTIONS = 4;

  /**
   * How many times a write runs again, each time in a new transaction, when the server rolls it
   * back to end a deadlock ({@code 40P01}) or a serialization failure ({@code 40001}) before it
   * fails with {@code DESTINATION_ATOMIC_BATCH_RETRYABLE}. The mirror's transactions take their
   * locks in one order (the epoch row, then a copy attempt's row, then the table's advisory lock,
   * then rows), but a deadlock can still happen by design: a transaction that found the table
   * changed under the shared advisory lock by another one that committed meanwhile must then take
   * it exclusively, and the unique index of a target table makes two writes of the same key wait
   * for each other in the order they reach it. The victim's transaction is rolled back whole, so
   * writing it again is safe; the other one commits meanwhile.
   */
  static final int CONFLICT_RETRIES = 3;

  /** How long {@link #shutdown()} waits for running writes to commit. */
  private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(60);

  /**
   * How long a connection stays in the pool unused before it is closed: the copy threads' ones are
   * needed while tables are copied, then only the event writer's is.
   */
  private static final Duration IDLE_TIMEOUT = Duration.ofMinutes(10);

  /**
   * How often an unused pooled connection is checked: a session that the server or a firewall
   * closed is replaced before a write needs it, and the check keeps {@code idle_session_timeout}
   * from closing it.
   */
  private static final Duration KEEPALIVE = Duration.ofMinutes(2);

  /**
   * The session settings under which {@link org.pgetl.model.PgText} prints values exactly as the
   * server does, so that a value bound as text and a value read back as text compare equal.
   */
  private static final String SESSION_SETUP =
      "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres';"
          + " SET extra_float_digits = 3; SET bytea_output = 'hex'; SET lc_monetary = 'C'";

  /** A write, run by the attempt that owns its connection and catalog changes. */
  private interface SqlWork {
    void run(MirrorTransaction tx) throws SQLException;
  }

  private final PgConnectionConfig target;
  private final int copyConnections;
  private final @Nullable PgConnectionConfig source; // null: generated columns are left out
  private HikariDataSource pool;
  private @Nullable MirrorSource sourceCatalog;
  private MirrorCatalog catalog;
  private volatile SerialWriter events;
  private volatile SerialWriter copies;
  private volatile DestinationContext context;
  // the greatest epoch found in the mirror that refused a write of this instance
  private final AtomicLong refusedBy = new AtomicLong(Long.MIN_VALUE);

  /**
   * Creates a destination that mirrors into a target database with {@value
   * #DEFAULT_COPY_CONNECTIONS} copy connections. Nothing is opened before {@link #startup}.
   *
   * @param target the target database; its user needs to create schemas and tables there
   */
  public PostgresMirrorDestination(PgConnectionConfig target) {
    this(target, DEFAULT_COPY_CONNECTIONS);
  }

  /**
   * Creates a destination that mirrors into a target database.
   *
   * @param target the target database; its user needs to create schemas and tables there
   * @param copyConnections how many copy batches are written at once, each on its own connection
   */
  public PostgresMirrorDestination(PgConnectionConfig target, int copyConnections) {
    this(target, copyConnections, null);
  }

  /**
   * Creates a destination that mirrors into a target database, and reads the generated columns of
   * the source tables from the source's catalog so that the mirror tables have them too.
   *
   * @param target the target database; its user needs to create schemas and tables there
   * @param copyConnections how many copy batches are written at once, each on its own connection
   * @param source the source database (usually the pipeline's {@code PipelineConfig.source()}); its
   *     user needs to read the catalog only. Null to leave generated columns out of the mirror
   */
  public PostgresMirrorDestination(
      PgConnectionConfig target, int copyConnections, @Nullable PgConnectionConfig source) {
    this.target = Objects.requireNonNull(target, "target");
    if (copyConnections < 1) {
      throw new IllegalArgumentException("copyConnections must be >= 1, was " + copyConnections);
    }
    this.copyConnections = copyConnections;
    this.source = source;
  }

  /**
   * Returns {@code postgres-mirror}.
   *
   * @return the name
   */
  @Override
  public String name() {
    return "postgres-mirror";
  }

  /**
   * Connects to the target, creates the bookkeeping tables if needed, reads what earlier runs
   * stored, records each existing table's {@link
   * org.pgetl.destination.DestinationTableMetadataStore.TableMetadata}, and starts the writer
   * threads.
   *
   * @param context the pipeline's context
   * @throws EtlException ({@code DESTINATION_CONNECTION_FAILED}, {@code
   *     DESTINATION_AUTHENTICATION_ERROR}, ...) when the target cannot be used
   */
  @Override
  public void startup(DestinationContext context) {
    this.context = context;
    String pipelineId = context.pipelineId();
    sourceCatalog =
        source == null ? null : new MirrorSource(source, "pgetl-mirror-source-" + pipelineId);
    catalog = new MirrorCatalog(pipelineId, context.tableMetadata(), sourceCatalog);
    try {
      pool = openPool("pgetl-mirror-" + pipelineId, copyConnections + 1);
    } catch (RuntimeException e) {
      closeSourceCatalog();
      throw e;
    }
    try (Connection c = pool.getConnection()) {
      catalog.createMetadataTables(c);
      c.commit();
      catalog.load(c);
      c.commit();
    } catch (SQLException e) {
      pool.close();
      closeSourceCatalog();
      throw error("startup", e);
    }
    for (Table t : catalog.tables()) {
      catalog.announce(t, true);
    }
    events = new SerialWriter("pgetl-pgmirror-" + pipelineId, this::unexpected);
    copies =
        new SerialWriter("pgetl-pgmirror-copy-" + pipelineId, copyConnections, this::unexpected);
  }

  /**
   * Records {@code attemptId} as the table's current copy attempt, and drops the table and its
   * bookkeeping (batch ids, applied sequence key), in one transaction.
   *
   * @param table the table to drop
   * @param attemptId the copy attempt that follows
   * @param result answered {@code durable()} after the commit
   */
  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    Objects.requireNonNull(attemptId, "attemptId");
    submit(
        copies,
        result,
        "drop table " + table.name() + " for a new copy",
        tx -> tx.dropForCopy(table.id(), attemptId));
  }

  /**
   * Stores a copy batch (skipped when its id was stored before, or when it belongs to an attempt
   * that a later drop abandoned), ends a chunk read at its {@code ChunkEnd} (checks that every
   * batch of the read is stored and records the chunk), or ends the current attempt at its {@code
   * Finish} barrier: creates the table if the copy had no rows, checks that every batch it counts
   * is stored (for a table copied in chunks, its {@code ChunkEnd}s checked them), and marks the
   * attempt finished.
   *
   * @param table the table's schema
   * @param write the batch or the barrier
   * @param result answered {@code durable()} after the commit
   */
  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    if (write instanceof TableCopyWrite.Batch batch) {
      submit(
          copies,
          result,
          "copy batch " + batch.id() + " of table " + table.name(),
          tx -> tx.copyBatch(table, batch));
    } else if (write instanceof TableCopyWrite.ChunkEnd end) {
      submit(
          copies,
          result,
          "end chunk " + end.chunk() + " of the copy of table " + table.name(),
          tx -> tx.chunkEnd(table, end));
    } else {
      TableCopyWrite.Finish finish = (TableCopyWrite.Finish) write;
      submit(
          copies,
          result,
          "finish the copy of table " + table.name(),
          tx -> tx.finish(table, finish));
    }
  }

  /**
   * Returns true: a large table may be copied in chunks while its changes are applied (see "Tables
   * copied in chunks" above).
   *
   * @return true
   */
  @Override
  public boolean supportsChunkedCopy() {
    return true;
  }

  /**
   * Applies a batch of events in one transaction, skipping those applied before.
   *
   * @param events the events, in stream order
   * @param durability ignored: every answer is {@code durable()}
   * @param result answered {@code durable()} after the commit
   */
  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    if (events.isEmpty()) {
      SerialWriter writer = requireStarted(this.events);
      long epoch = context.epoch();
      // answered after the writes queued before it
      writer.submit(result, () -> refuseIfFenced(epoch));
      return;
    }
    String what =
        "events "
            + events.get(0).sequenceKey()
            + " to "
            + events.get(events.size() - 1).sequenceKey();
    submit(this.events, result, what, tx -> tx.applyEvents(stream, events, what));
  }

  /**
   * Lets the running writes commit, answers queued writes {@code shutdown()}, and closes the
   * connections.
   */
  @Override
  public void shutdown() {
    if (events == null) {
      return; // never started
    }
    boolean ended = events.close(SHUTDOWN_WAIT);
    ended &= copies.close(SHUTDOWN_WAIT);
    if (!ended) {
      log.warn(
          "a write to {} did not finish in {}: closing its connection rolls it back",
          target.describe(),
          SHUTDOWN_WAIT);
    }
    pool.close();
    closeSourceCatalog();
  }

  private void closeSourceCatalog() {
    if (sourceCatalog != null) {
      sourceCatalog.close();
    }
  }

  // --- transactions and answers

  private void submit(SerialWriter writer, AsyncResult result, String what, SqlWork work) {
    requireStarted(writer);
    long epoch = context.epoch(); // the epoch of the instance that sends it, not of a later one
    writer.submit(result, () -> inTransaction(what, epoch, work));
  }

  private static SerialWriter requireStarted(SerialWriter writer) {
    if (writer == null) {
      throw new EtlException(
          ErrorKind.DESTINATION_CONTRACT_VIOLATION,
          "PostgresMirrorDestination used before startup()");
    }
    return writer;
  }

  private void inTransaction(String what, long epoch, SqlWork work) {
    refuseIfFenced(epoch);
    boolean reconnected = false;
    int conflicts = 0;
    while (true) {
      Again again = attempt(what, epoch, work, !reconnected, conflicts < CONFLICT_RETRIES);
      if (again == null) {
        return;
      }
      if (again == Again.RECONNECT) {
        reconnected = true;
      } else {
        conflicts++;
        pauseAfterConflict();
      }
    }
  }

  /** Why a rolled-back write runs again. */
  private enum Again {
    /** Its connection was lost: it runs once more, on a new connection. */
    RECONNECT,
    /** It was chosen to end a deadlock, or failed to serialize: see {@link #CONFLICT_RETRIES}. */
    CONFLICT
  }

  /** Refuses a write of an epoch that the mirror already refused: a newer instance wrote since. */
  private void refuseIfFenced(long epoch) {
    if (epoch < refusedBy.get()) {
      throw new SerialWriter.Abandoned("lease epoch " + epoch + " is fenced");
    }
  }

  /**
   * Refuses a write whose epoch is smaller than the one the mirror holds: another instance of the
   * pipeline took over and wrote, so this one lost its lease, whether it noticed yet or not. The
   * write is answered {@code shutdown()}, which stops this instance without a table error; every
   * later write of its epoch is refused at once.
   */
  private SerialWriter.Abandoned refuse(long epoch, long stored, String what) {
    long before = refusedBy.getAndAccumulate(stored, Math::max);
    if (before < stored) {
      log.error(
          "pipeline {}: the mirror in {} was written by lease epoch {}, newer than this instance's"
              + " epoch {}: another instance took over, so this one's writes are refused ({})"
              + " and it stops; if the pipeline's state store was recreated (its epochs start"
              + " again at 1), delete the pipeline's row in _pgetl.mirror_epochs",
          context.pipelineId(),
          target.describe(),
          stored,
          epoch,
          what);
    }
    return new SerialWriter.Abandoned(
        "lease epoch " + epoch + " is older than epoch " + stored + " of the mirror");
  }

  /**
   * Runs the work in one transaction and publishes its catalog changes after the commit; returns
   * null then. Returns why the work runs again, once the transaction is rolled back, when it may:
   * {@link Again#RECONNECT} when its connection was lost ({@code mayReconnect}): a pooled
   * connection that the server closed while it sat idle (a restart of the target, {@code
   * pg_terminate_backend}) fails the next statement; {@link Again#CONFLICT} when the server rolled
   * it back to end a deadlock or a serialization failure ({@code mayRetryConflict}). Writing again
   * is safe because every write is idempotent, and a rolled-back write left nothing in memory.
   */
  private @Nullable Again attempt(
      String what, long epoch, SqlWork work, boolean mayReconnect, boolean mayRetryConflict) {
    Connection conn;
    try {
      conn = pool.getConnection();
    } catch (SQLException e) {
      throw error(what, e);
    }
    MirrorTransaction tx = new MirrorTransaction(conn, catalog, target.describe());
    boolean broken = false;
    try {
      long stored = tx.fence(epoch); // first: it orders the writes of two instances
      if (stored > epoch) {
        throw refuse(epoch, stored, what);
      }
      work.run(tx);
      conn.commit();
    } catch (SQLException e) {
      broken = rollback(conn, e);
      if (broken && mayReconnect) {
        // lost with this one, most likely: close the idle ones, and the others when returned
        pool.getHikariPoolMXBean().softEvictConnections();
        log.info(
            "connection to {} lost ({}, SQLSTATE {}): writing again on a new connection ({})",
            target.describe(),
            masked(serverError(unwrap(e))),
            sqlState(unwrap(e)),
            what);
        return Again.RECONNECT;
      }
      String state = sqlState(unwrap(e));
      if (!broken && mayRetryConflict && isConflict(state)) {
        log.info(
            "write to {} rolled back by the server ({}, SQLSTATE {}): writing again ({})",
            target.describe(),
            masked(serverError(unwrap(e))),
            state,
            what);
        return Again.CONFLICT;
      }
      throw error(what, e);
    } catch (RuntimeException e) {
      broken = rollback(conn, null);
      if (e instanceof EtlException || e instanceof SerialWriter.Abandoned) {
        throw e;
      }
      throw new EtlException(
          ErrorKind.DESTINATION_ERROR,
          "PostgreSQL mirror write failed (" + what + ") in " + target.describe(),
          e.toString(),
          e);
    } finally {
      release(conn, broken);
    }
    tx.publish(); // only now: a rolled-back transaction leaves memory as it was
    return null;
  }

  /**
   * Whether a SQLSTATE says the server rolled a transaction back because of other transactions, and
   * running it again on its own is likely to succeed: a deadlock ({@code 40P01}) or a serialization
   * failure ({@code 40001}).
   */
  private static boolean isConflict(String state) {
    return state.equals("40P01") || state.equals("40001");
  }

  /**
   * Waits a moment of random length before a write runs again after a conflict, so that the
   * transaction it conflicted with commits first (an interrupt ends the wait, and is kept).
   */
  private static void pauseAfterConflict() {
    try {
      Thread.sleep(10 + ThreadLocalRandom.current().nextInt(40));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Opens the pool of connections to the target: at most one per writer thread, opened when a
   * thread first needs one, each set up with {@link #SESSION_SETUP} and auto-commit off (every
   * write is one transaction). A connection that sat unused for a moment is validated before a
   * writer gets it; an unused one is checked every {@link #KEEPALIVE} and closed after {@link
   * #IDLE_TIMEOUT}. Fails at once when the target refuses the first connection (a wrong password
   * fails the start, not the first write).
   */
  private HikariDataSource openPool(String name, int size) {
    HikariConfig hc = new HikariConfig();
    hc.setPoolName(name);
    hc.setJdbcUrl(target.jdbcUrl());
    hc.setUsername(target.user());
    if (target.password() != null) {
      hc.setPassword(target.password());
    }
    hc.addDataSourceProperty("ApplicationName", name);
    hc.setAutoCommit(false);
    hc.setConnectionInitSql(SESSION_SETUP);
    hc.setIsolateInternalQueries(true); // commits the session setup, rolls back validations
    hc.setMaximumPoolSize(size);
    hc.setMinimumIdle(0);
    hc.setIdleTimeout(IDLE_TIMEOUT.toMillis());
    hc.setKeepaliveTime(KEEPALIVE.toMillis());
    // a writer never waits for another writer's connection, only for a new one to open
    hc.setConnectionTimeout(Math.max(250, target.connectTimeout().toMillis()));
    try {
      return new HikariDataSource(hc);
    } catch (RuntimeException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof SQLException sql) {
          throw error("startup", sql);
        }
      }
      throw new EtlException(
          ErrorKind.DESTINATION_CONNECTION_FAILED,
          "could not connect to the PostgreSQL mirror in " + target.describe(),
          String.valueOf(e.getMessage()),
          null);
    }
  }

  /** Gives a connection back to the pool, or closes it for good when it is broken. */
  private void release(Connection conn, boolean broken) {
    if (broken) {
      pool.evictConnection(conn);
      return;
    }
    try {
      conn.close();
    } catch (SQLException e) {
      pool.evictConnection(conn);
    }
  }

  private static SQLException unwrap(SQLException e) {
    return e instanceof MirrorRows.TableWriteFailure f ? f.statementFailure() : e;
  }

  /** Rolls back; returns true when the connection is broken and must be replaced. */
  private static boolean rollback(Connection conn, @Nullable SQLException cause) {
    if (cause instanceof MirrorRows.TableWriteFailure f) {
      cause = f.statementFailure();
    }
    if (cause != null && isConnectionError(sqlState(cause))) {
      return true;
    }
    try {
      conn.rollback();
      return false;
    } catch (SQLException e) {
      return true;
    }
  }

  private EtlException error(String what, SQLException e) {
    if (e instanceof MirrorRows.TableWriteFailure f) {
      what += " of table " + f.table;
      e = f.statementFailure();
    }
    String state = sqlState(e);
    // no cause: the server's detail and the driver's message may hold row values
    return new EtlException(
        kindOf(state),
        "PostgreSQL mirror write failed (" + what + ") in " + target.describe(),
        masked(e) + " (SQLSTATE " + state + ")",
        null);
  }

  private EtlException unexpected(Exception e) {
    return new EtlException(
        ErrorKind.DESTINATION_ERROR,
        "PostgreSQL mirror write failed in " + target.describe(),
        String.valueOf(e),
        e);
  }

  /** The SQLSTATE of a failure. */
  private static String sqlState(SQLException e) {
    SQLException real = serverError(e);
    return real.getSQLState() == null ? "" : real.getSQLState();
  }

  /** The server's error: a failed JDBC batch carries it as the next exception. */
  private static SQLException serverError(SQLException e) {
    return e instanceof BatchUpdateException && e.getNextException() != null
        ? e.getNextException()
        : e;
  }

  /** Chooses the error kind, and so the engine's retry policy, from a SQLSTATE. */
  static ErrorKind kindOf(String state) {
    if (isConnectionError(state) || state.equals("3D000")) {
      return ErrorKind.DESTINATION_CONNECTION_FAILED;
    }
    if (state.startsWith("28") || state.equals("42501")) {
      return ErrorKind.DESTINATION_AUTHENTICATION_ERROR;
    }
    if (state.equals("40001") || state.equals("40P01")) {
      return ErrorKind.DESTINATION_ATOMIC_BATCH_RETRYABLE; // serialization failure, deadlock
    }
    if (state.equals("57014") || state.equals("55P03")) {
      return ErrorKind.DESTINATION_TIMEOUT; // statement timeout, lock not available
    }
    if (state.startsWith("22")) {
      return ErrorKind.UNSUPPORTED_VALUE_IN_DESTINATION; // data exception
    }
    if (state.startsWith("42")) {
      return ErrorKind.DESTINATION_SCHEMA_ERROR; // undefined or duplicate table or column, ...
    }
    return ErrorKind.DESTINATION_QUERY_FAILED;
  }

  private static boolean isConnectionError(String state) {
    return state.isEmpty() || state.startsWith("08") || state.startsWith("57P");
  }

  /**
   * The server's primary message (without detail, which may quote rows), with quoted parts masked:
   * PostgreSQL quotes the values it complains about ({@code invalid input syntax for type integer:
   * "x"}), and row values must not reach logs.
   */
  private static String masked(SQLException e) {
    SQLException real = serverError(e);
    String m = null;
    if (real instanceof PSQLException p) {
      ServerErrorMessage server = p.getServerErrorMessage();
      m = server == null ? null : server.getMessage();
    }
    return ErrorText.maskQuoted(m != null ? m : ErrorText.firstLine(real.getMessage()));
  }
}
