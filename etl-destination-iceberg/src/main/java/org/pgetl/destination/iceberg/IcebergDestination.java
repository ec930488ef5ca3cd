package org.pgetl.destination.iceberg;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.jspecify.annotations.Nullable;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A destination that keeps every replicated table as an Apache Iceberg table, exactly once across
 * restarts: after each commit, a plain read of the Iceberg table by any Iceberg reader equals the
 * source table as of a source transaction boundary.
 *
 * <h2>Tables and modes</h2>
 *
 * The source table {@code s.t} becomes the Iceberg table {@code t} in the namespace {@code s} (or
 * in the configured namespace, as {@code s_t}), format version 2, unpartitioned, Parquet. In {@link
 * Mode#UPSERT} (the default) its key columns (the primary key, or the columns of a REPLICA IDENTITY
 * USING INDEX) are the table's identifier fields; an UPDATE or DELETE becomes an equality delete of
 * the key plus, for an update, the new row. In {@link Mode#CHANGELOG} every change is appended with
 * its operation ({@code _pgetl_op}), commit LSN and ordinal in the transaction; the columns an
 * UPDATE left unchanged (TOASTed values PostgreSQL did not send) are named in {@code
 * _pgetl_unchanged}. Column types follow {@code IcebergTypes}; schema changes follow {@code
 * TableLayout}.
 *
 * <h2>Durability and exactly-once</h2>
 *
 * Writes are buffered per table and answered {@code accepted()}; a commit writes each table's
 * buffered rows as Parquet data and equality-delete files and commits them, with the table's
 * bookkeeping in its properties (see {@code IcebergTable}), as one Iceberg transaction per table.
 * Writes become durable when every table they touched committed: the write during which a commit
 * runs and every empty {@code REQUIRE_DURABLE} barrier waiting for it are answered {@code
 * durable()}. A commit runs when the {@linkplain Builder#commitInterval commit interval} passed
 * since the last one and a write or barrier waits for it, when the buffered rows exceed {@linkplain
 * Builder#maxBufferedBytes the buffer limit} (or an eighth of it when the stream goes quiet: after
 * a large transaction), and at once for a copy's drop and {@code Finish}. After a restart the
 * bookkeeping is read back, and copy batches and events the table already holds are skipped: a
 * crash between an Iceberg commit and the pipeline's own progress write neither loses nor repeats a
 * change.
 *
 * <h2>Two instances</h2>
 *
 * Every commit stores the instance's lease epoch ({@code DestinationContext.epoch()}) in the
 * table's properties; a commit finds the stored epoch greater than its own — a newer instance took
 * the lease and committed — and is refused: its writes are answered {@code shutdown()} and the
 * pipeline is asked to stop. Tables are created with {@code commit.retry.num-retries=0}, so no
 * commit is re-applied on a base it did not check.
 *
 * <h2>Threads</h2>
 *
 * One writer thread ({@code pgetl-iceberg-<pipeline>}) owns the catalog, the buffers and the
 * commits; the methods queue work and return at once.
 */
public final class IcebergDestination implements Destination {
  private static final Logger log = LoggerFactory.getLogger(IcebergDestination.class);

  /** How Iceberg tables hold the source's rows. */
  public enum Mode {
    /** The Iceberg table equals the source table: updates and deletes by key (the default). */
    UPSERT,
    /** Every change is appended with its operation and position: the table is the history. */
    CHANGELOG
  }

  /** The default catalog name: see {@link Builder#catalogName}. */
  public static final String DEFAULT_CATALOG_NAME = "pgetl";

  /** The table property that names the table's mode: {@code upsert} or {@code changelog}. */
  static final String MODE_PROPERTY = "pgetl.mode";

  /** The default commit interval: see {@link Builder#commitInterval}. */
  public static final Duration DEFAULT_COMMIT_INTERVAL = Duration.ofSeconds(10);

  /** The default data file size: see {@link Builder#targetFileBytes}. */
  public static final long DEFAULT_TARGET_FILE_BYTES = 128L << 20;

  /** The default buffer limit: see {@link Builder#maxBufferedBytes}. */
  public static final long DEFAULT_MAX_BUFFERED_BYTES = 64L << 20;

  private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(60);

  private static int defaultCopyWriters() {
    return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
  }

  private final Map<String, String> catalogProperties;
  private final String catalogName;
  private final @Nullable String namespace;
  private final Mode mode;
  private final Duration commitInterval;
  private final long targetFileBytes;
  private final long maxBufferedBytes;
  private final int copyWriters;

  // writer thread only
  private @Nullable Catalog catalog;
  private final Map<TableId, IcebergTable> tables = new HashMap<>();
  private final List<AsyncResult> waiting = new ArrayList<>();
  private long lastCommitNanos;
  private boolean fenced;
  private @Nullable DestinationContext context;
  private @Nullable DestinationTableMetadataStore metadata;

  private volatile @Nullable ScheduledExecutorService thread;
  private volatile @Nullable ExecutorService copyPool;
  private volatile java.util.concurrent.@Nullable ScheduledFuture<?> ticker;

  private IcebergDestination(Builder b) {
    this.catalogProperties = Map.copyOf(b.catalog);
    this.catalogName = b.catalogName;
    this.namespace = b.namespace;
    this.mode = b.mode;
    this.commitInterval = b.commitInterval;
    this.targetFileBytes = b.targetFileBytes;
    this.maxBufferedBytes = b.maxBufferedBytes;
    this.copyWriters = b.copyWriters;
  }

  /**
   * Returns a builder over an Iceberg catalog's properties, as Iceberg's {@code CatalogUtil} reads
   * them: {@code type} ({@code hadoop}, {@code jdbc}, {@code rest}), {@code warehouse}, {@code
   * uri}, {@code io-impl} and the catalog's own keys.
   *
   * @param catalogProperties the catalog's properties
   * @return the builder
   */
  public static Builder builder(Map<String, String> catalogProperties) {
    return new Builder(catalogProperties);
  }

  /**
   * Returns a builder for a filesystem (Hadoop) catalog: tables live under {@code warehouse}, and
   * the catalog is the directory tree itself.
   *
   * @param warehouse the warehouse directory
   * @return the builder
   */
  public static Builder hadoop(Path warehouse) {
    return new Builder(
        Map.of("type", "hadoop", "warehouse", warehouse.toAbsolutePath().toUri().toString()));
  }

  /**
   * Returns a builder for a JDBC catalog: the catalog's table pointers live in a database (such as
   * the pipeline's PostgreSQL store database), the files under {@code warehouse}.
   *
   * @param jdbcUrl the catalog database, {@code jdbc:postgresql://...}
   * @param user the database user
   * @param password the password
   * @param warehouse the warehouse location (a directory, or any URI the {@code FileIO} reads)
   * @return the builder
   */
  public static Builder jdbc(String jdbcUrl, String user, String password, String warehouse) {
    Map<String, String> p = new HashMap<>();
    p.put("type", "jdbc");
    p.put("uri", jdbcUrl);
    p.put("jdbc.user", user);
    p.put("jdbc.password", password);
    p.put("warehouse", warehouse);
    p.put("jdbc.schema-version", "V1");
    return new Builder(p);
  }

  /** Settings of an {@link IcebergDestination}. */
  public static final class Builder {
    private final Map<String, String> catalog;
    private String catalogName = DEFAULT_CATALOG_NAME;
    private @Nullable String namespace;
    private Mode mode = Mode.UPSERT;
    private Duration commitInterval = DEFAULT_COMMIT_INTERVAL;
    private long targetFileBytes = DEFAULT_TARGET_FILE_BYTES;
    private long maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES;
    private int copyWriters = defaultCopyWriters();

    private Builder(Map<String, String> catalog) {
      Objects.requireNonNull(catalog, "catalogProperties");
      if (!catalog.containsKey("type") && !catalog.containsKey("catalog-impl")) {
        throw new IllegalArgumentException(
            "the Iceberg catalog properties need a type (hadoop, jdbc, rest) or a catalog-impl");
      }
      this.catalog = new HashMap<>(catalog);
    }

    /**
     * Sets the catalog's name (default {@code pgetl}). A JDBC catalog keeps its tables under this
     * name ({@code iceberg_tables.catalog_name}): a reader must open the catalog with the same name
     * to see them.
     *
     * @param name the catalog name
     * @return this builder
     */
    public Builder catalogName(String name) {
      if (name.isBlank()) {
        throw new IllegalArgumentException("catalogName must not be blank");
      }
      this.catalogName = name;
      return this;
    }

    /**
     * Puts every table into one namespace, named {@code <schema>_<table>}, instead of a namespace
     * per source schema.
     *
     * @param namespace the namespace
     * @return this builder
     */
    public Builder namespace(String namespace) {
      if (namespace.isBlank()) {
        throw new IllegalArgumentException("namespace must not be blank");
      }
      this.namespace = namespace;
      return this;
    }

    /**
     * Chooses upsert (the default) or changelog tables.
     *
     * @param mode the mode
     * @return this builder
     */
    public Builder mode(Mode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * Sets the shortest time between two commits of the buffered changes (default 10 s). Each
     * commit adds a snapshot and at least one data file per changed table: 10 s keeps a steadily
     * written table at 360 snapshots an hour, few enough for daily compaction, while a change is
     * readable in Iceberg about 10 s after its source commit. The initial copy commits at its end
     * and whenever the buffer limit is reached, not on this interval.
     *
     * @param interval the interval, at least 1 ms
     * @return this builder
     */
    public Builder commitInterval(Duration interval) {
      if (interval.toMillis() < 1) {
        throw new IllegalArgumentException("commitInterval must be at least 1 ms, was " + interval);
      }
      this.commitInterval = interval;
      return this;
    }

    /**
     * Sets the size at which a copy's data file is closed and another begun (default 128 MiB, a
     * common Parquet file size for analytical readers).
     *
     * @param bytes the size, at least 1 MiB
     * @return this builder
     */
    public Builder targetFileBytes(long bytes) {
      if (bytes < (1L << 20)) {
        throw new IllegalArgumentException("targetFileBytes must be at least 1 MiB, was " + bytes);
      }
      this.targetFileBytes = bytes;
      return this;
    }

    /**
     * Sets how much buffered change data (estimated from the source rows) forces a commit before
     * the interval (default 64 MiB): the changes of one commit are held in memory until it runs.
     *
     * @param bytes the limit, at least 1 KiB
     * @return this builder
     */
    public Builder maxBufferedBytes(long bytes) {
      if (bytes < 1024) {
        throw new IllegalArgumentException("maxBufferedBytes must be at least 1 KiB, was " + bytes);
      }
      this.maxBufferedBytes = bytes;
      return this;
    }

    /**
     * Sets how many threads write a copy's rows into data files at once (default: the number of
     * processors, at most 4). Each keeps one data file of the table open and buffers one 32 MiB
     * Parquet row group.
     *
     * @param threads the number, 1 to 64
     * @return this builder
     */
    public Builder copyWriters(int threads) {
      if (threads < 1 || threads > 64) {
        throw new IllegalArgumentException("copyWriters must be 1 to 64, was " + threads);
      }
      this.copyWriters = threads;
      return this;
    }

    /**
     * Creates the destination; nothing is opened before {@link #startup}.
     *
     * @return the destination
     */
    public IcebergDestination build() {
      return new IcebergDestination(this);
    }
  }

  /**
   * Returns {@code iceberg}.
   *
   * @return the name
   */
  @Override
  public String name() {
    return "iceberg";
  }

  /**
   * Refuses, before the pipeline creates anything, the tables this mode cannot hold: in upsert mode
   * a key column of a floating-point type (Iceberg's identifier fields cannot be float or double);
   * in changelog mode a column named as one of the changelog's own columns ({@code _pgetl_op},
   * {@code _pgetl_commit_lsn}, {@code _pgetl_tx_ordinal}, {@code _pgetl_unchanged}). Every other
   * PostgreSQL type has an Iceberg form (see {@code docs/iceberg.md}).
   *
   * @param tables the published tables
   * @throws EtlException ({@code DESTINATION_SCHEMA_ERROR}) naming every table that cannot be held
   */
  @Override
  public void checkTables(List<ReplicatedTableSchema> tables) {
    List<EtlException> refused = new ArrayList<>();
    for (ReplicatedTableSchema t : tables) {
      try {
        TableLayout.create(t, mode == Mode.CHANGELOG);
      } catch (EtlException e) {
        refused.add(e);
      }
    }
    if (refused.isEmpty()) {
      return;
    }
    if (refused.size() == 1) {
      throw refused.get(0);
    }
    StringBuilder what = new StringBuilder();
    for (EtlException e : refused) {
      what.append(what.length() == 0 ? "" : "; ").append(e.description());
    }
    EtlException all =
        new EtlException(
            ErrorKind.DESTINATION_SCHEMA_ERROR,
            refused.size() + " tables cannot be held in " + modeName() + " mode: " + what,
            refused.get(0).detail(),
            refused.get(0));
    refused.subList(1, refused.size()).forEach(all::addSuppressed);
    throw all;
  }

  private String modeName() {
    return mode == Mode.CHANGELOG ? "changelog" : "upsert";
  }

  /**
   * Opens the catalog and starts the writer thread.
   *
   * @param context the pipeline's context
   * @throws EtlException ({@code DESTINATION_CONNECTION_FAILED}) when the catalog cannot be opened
   */
  @Override
  public void startup(DestinationContext context) {
    this.context = context;
    this.metadata = context.tableMetadata();
    try {
      catalog =
          CatalogUtil.buildIcebergCatalog(catalogName, catalogProperties, new Configuration());
    } catch (RuntimeException e) {
      throw new EtlException(
          ErrorKind.DESTINATION_CONNECTION_FAILED,
          "cannot open the Iceberg catalog (type " + catalogProperties.get("type") + ")",
          String.valueOf(e.getMessage()),
          e);
    }
    ScheduledExecutorService t =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread th = new Thread(r, "pgetl-iceberg-" + context.pipelineId());
              th.setDaemon(true);
              return th;
            });
    java.util.concurrent.atomic.AtomicInteger copyThreads =
        new java.util.concurrent.atomic.AtomicInteger();
    copyPool =
        Executors.newFixedThreadPool(
            copyWriters,
            r -> {
              Thread th =
                  new Thread(
                      r,
                      "pgetl-iceberg-copy-"
                          + context.pipelineId()
                          + "-"
                          + copyThreads.incrementAndGet());
              th.setDaemon(true);
              return th;
            });
    lastCommitNanos = System.nanoTime();
    long tick = Math.max(1, Math.min(commitInterval.toMillis() / 4, 1000));
    ticker = t.scheduleWithFixedDelay(this::tick, tick, tick, TimeUnit.MILLISECONDS);
    thread = t;
  }

  /**
   * Deletes every row of the table (a snapshot: the table's history stays) and records the new
   * attempt, committed at once; a table whose columns no longer fit is dropped and re-created.
   */
  @Override
  public void dropTableForCopy(ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
    Objects.requireNonNull(attemptId, "attemptId");
    submit(
        result,
        () -> {
          IcebergTable t = open(table, true);
          t.startAttempt(attemptId);
          commitTable(t);
          result.durable();
        });
  }

  /** Buffers a copy batch into the table's data files, or ends the copy at its {@code Finish}. */
  @Override
  public void writeTableRows(
      ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
    if (write instanceof TableCopyWrite.Batch batch) {
      submit(result, () -> copyBatch(table, batch, result));
    } else if (write instanceof TableCopyWrite.Finish finish) {
      submit(result, () -> finish(table, finish, result));
    } else {
      result.fail(
          new EtlException(
              ErrorKind.DESTINATION_CONTRACT_VIOLATION,
              "the Iceberg destination does not take tables copied in chunks",
              "supportsChunkedCopy() is false: the engine must copy " + table.name() + " whole",
              null));
    }
  }

  /** Buffers the events per table; answered as the class comment says. */
  @Override
  public void writeEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
    submit(result, () -> applyEvents(stream, events, durability, result));
  }

  /**
   * Lets the running work finish, answers the writes still waiting with {@code shutdown()} (they
   * are delivered again at the next start), and closes the catalog.
   */
  @Override
  public void shutdown() {
    ScheduledExecutorService t = thread;
    if (t == null) {
      return;
    }
    try {
      t.submit(this::abandonWaiting).get(SHUTDOWN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      log.warn("iceberg destination: the writer thread did not stop in {}", SHUTDOWN_WAIT);
    }
    java.util.concurrent.ScheduledFuture<?> k = ticker;
    if (k != null) {
      k.cancel(false);
    }
    t.shutdownNow();
    ExecutorService pool = copyPool;
    if (pool != null) {
      pool.shutdownNow();
    }
    closeCatalog();
  }

  // --- the work, on the writer thread

  private interface Work {
    void run();
  }

  private void submit(AsyncResult result, Work work) {
    ExecutorService t = thread;
    if (t == null) {
      throw new EtlException(
          ErrorKind.DESTINATION_CONTRACT_VIOLATION, "IcebergDestination used before startup()");
    }
    try {
      t.execute(() -> run(result, work));
    } catch (RejectedExecutionException e) {
      result.shutdown();
    }
  }

  private void run(AsyncResult result, Work work) {
    if (fenced) {
      result.shutdown();
      return;
    }
    try {
      work.run();
    } catch (IcebergTable.Fenced e) {
      fence(e, result);
    } catch (EtlException e) {
      failAll(e, result);
    } catch (CommitFailedException | IcebergTable.ChangedElsewhere e) {
      failAll(
          new EtlException(
              ErrorKind.DESTINATION_QUERY_FAILED,
              "an Iceberg commit failed: another writer committed to the table first",
              String.valueOf(e.getMessage()),
              e),
          result);
    } catch (RuntimeException e) {
      failAll(
          new EtlException(
              ErrorKind.DESTINATION_ERROR,
              "an Iceberg write failed",
              String.valueOf(e.getMessage()),
              e),
          result);
    }
  }

  private void copyBatch(ReplicatedTableSchema schema, TableCopyWrite.Batch batch, AsyncResult r) {
    IcebergTable t = open(schema, false);
    if (t.attempt != null && !t.attempt.equals(batch.id().attemptId())) {
      log.debug(
          "copy batch {} of {} belongs to an abandoned attempt: skipped", batch.id(), t.ident);
      r.durable();
      return;
    }
    if (t.hasBatch(batch.id().sequence())) {
      if (t.isCommitted(batch.id().sequence())) {
        r.durable();
      } else {
        waiting.add(r); // answered with the commit that stores its first delivery
      }
      return;
    }
    follow(t, schema);
    ExecutorService pool = Objects.requireNonNull(copyPool, "copyPool");
    long seq = batch.id().sequence();
    t.copyStarted(seq);
    try {
      pool.execute(() -> copyOnPool(t, batch, r));
    } catch (RejectedExecutionException e) {
      r.shutdown();
    }
  }

  /** Writes a copy batch on a copy thread and answers it; the copy commits at its Finish. */
  private void copyOnPool(IcebergTable t, TableCopyWrite.Batch batch, AsyncResult r) {
    try {
      if (!t.copyRows(batch.id().attemptId(), batch.id().sequence(), batch.rows())) {
        r.durable(); // its attempt was abandoned meanwhile: dropped
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      r.shutdown();
      return;
    } catch (EtlException e) {
      r.fail(e);
      return;
    } catch (RuntimeException e) {
      r.fail(
          new EtlException(
              ErrorKind.DESTINATION_ERROR,
              "writing a copy batch of Iceberg table " + t.ident + " failed",
              String.valueOf(e.getMessage()),
              e));
      return;
    }
    r.accepted();
  }

  private void finish(ReplicatedTableSchema schema, TableCopyWrite.Finish finish, AsyncResult r) {
    IcebergTable t = open(schema, false);
    if (t.attempt != null && !t.attempt.equals(finish.attemptId())) {
      r.durable(); // the Finish of an abandoned attempt changes nothing
      return;
    }
    follow(t, schema);
    waiting.add(r);
    commitAll();
    long stored = t.storedBatches();
    if (t.attempt != null && stored != finish.batches()) {
      throw new EtlException(
          ErrorKind.DESTINATION_ERROR,
          "the copy of table "
              + schema.name()
              + " ended with "
              + finish.batches()
              + " batches, but Iceberg table "
              + t.ident
              + " holds "
              + stored,
          "a batch answered accepted was lost before its commit; the table is copied again",
          null);
    }
  }

  private void applyEvents(
      StreamId stream, List<Event> events, WriteDurability durability, AsyncResult r) {
    if (!events.isEmpty() && !isStale(stream)) {
      for (Event e : events) {
        apply(e);
      }
      if (log.isDebugEnabled()) {
        log.debug(
            "{}: {} events, {} .. {}{}",
            stream,
            events.size(),
            events.get(0).sequenceKey(),
            events.get(events.size() - 1).sequenceKey(),
            durability == WriteDurability.REQUIRE_DURABLE ? " (durable)" : "");
      }
    }
    waiting.add(r);
    boolean barrier = durability == WriteDurability.REQUIRE_DURABLE;
    long buffered = bufferedBytes();
    if (buffered >= maxBufferedBytes
        || (commitDue() && (barrier || !events.isEmpty()))
        // a quiet stream after a large transaction: its rows make a snapshot worth having now
        || (barrier && buffered >= maxBufferedBytes / 8)) {
      commitAll();
    } else if (!barrier) {
      waiting.remove(waiting.size() - 1);
      r.accepted();
    } // a barrier waits in the list for the next commit (tick)
  }

  private void apply(Event e) {
    switch (e.kind()) {
      case BEGIN, COMMIT, MESSAGE -> {}
      case RELATION -> {
        IcebergTable t = claim(((Event.Relation) e).table(), e, false);
        if (t != null) {
          follow(t, ((Event.Relation) e).table());
        }
      }
      case TRUNCATE -> {
        for (ReplicatedTableSchema s : ((Event.Truncate) e).tables()) {
          IcebergTable t = claim(s, e, true);
          if (t != null) {
            if (mode == Mode.CHANGELOG) {
              t.truncateChangelog(e.sequenceKey());
            } else {
              t.truncate();
            }
          }
        }
      }
      case INSERT -> {
        Event.Insert i = (Event.Insert) e;
        IcebergTable t = claim(i.table(), e, true);
        if (t != null) {
          t.insert(e.sequenceKey(), i.row());
        }
      }
      case UPDATE -> {
        Event.Update u = (Event.Update) e;
        IcebergTable t = claim(u.table(), e, true);
        if (t != null) {
          t.update(e.sequenceKey(), u.row(), u.oldRow());
        }
      }
      case DELETE -> {
        Event.Delete d = (Event.Delete) e;
        IcebergTable t = claim(d.table(), e, true);
        if (t != null) {
          t.delete(e.sequenceKey(), d.oldRow());
        }
      }
    }
  }

  /**
   * Returns the table an event applies to, its schema followed, or null when the table holds the
   * event already (its sequence key is not above the table's applied-through key).
   */
  private @Nullable IcebergTable claim(ReplicatedTableSchema schema, Event e, boolean advances) {
    IcebergTable t = open(schema, false);
    if (t.through != null && e.sequenceKey().compareTo(t.through) <= 0) {
      return null;
    }
    follow(t, schema);
    if (advances) {
      t.through = e.sequenceKey();
    }
    return t;
  }

  /** Brings the Iceberg table to the source schema; buffered rows of the old schema go first. */
  // the identity test first skips a deep comparison of the columns on every event
  @SuppressWarnings("ReferenceEquality")
  private void follow(IcebergTable t, ReplicatedTableSchema schema) {
    if (t.schema == schema) {
      return; // the usual case, once per event: the engine hands out one instance per version
    }
    if (t.schema.equals(schema) || TableLayout.matches(t.table, schema, isChangelog())) {
      if (!t.schema.equals(schema)) {
        t.bind(schema);
      }
      return;
    }
    if (t.hasPending()) {
      commitTable(t);
    }
    TableLayout.evolve(t.table, schema, isChangelog());
    t.rebindAfterCommit(schema);
    announce(t);
  }

  private boolean isChangelog() {
    return mode == Mode.CHANGELOG;
  }

  /** Whether a write comes from the catch-up stream of an attempt a later drop abandoned. */
  private boolean isStale(StreamId stream) {
    if (stream.kind() != StreamId.Kind.TABLE_SYNC) {
      return false;
    }
    IcebergTable t = tables.get(Objects.requireNonNull(stream.table(), "a table-sync stream"));
    return t != null && t.attempt != null && !t.attempt.equals(stream.copyAttempt());
  }

  // --- tables

  private TableIdentifier identifier(ReplicatedTableSchema schema) {
    String ns = namespace;
    if (ns == null) {
      return TableIdentifier.of(Namespace.of(schema.name().schema()), schema.name().name());
    }
    return TableIdentifier.of(
        Namespace.of(ns), schema.name().schema() + "_" + schema.name().name());
  }

  /**
   * Returns the table's state, loading (or creating) its Iceberg table on first use.
   *
   * @param forCopy whether a new copy follows: a table whose columns cannot follow the new schema
   *     is then dropped and re-created instead of failing
   */
  private IcebergTable open(ReplicatedTableSchema schema, boolean forCopy) {
    IcebergTable known = tables.get(schema.id());
    if (known != null) {
      if (forCopy && !known.schema.equals(schema)) {
        return recreateIfNeeded(known, schema);
      }
      return known;
    }
    Catalog c = Objects.requireNonNull(catalog, "catalog");
    TableIdentifier ident = identifier(schema);
    Table table;
    if (c.tableExists(ident)) {
      table = c.loadTable(ident);
    } else {
      table = create(c, ident, schema);
    }
    IcebergTable t;
    try {
      t =
          new IcebergTable(
              ident,
              table,
              currentSchemaOf(table, schema),
              isChangelog(),
              targetFileBytes,
              copyWriters);
    } catch (RuntimeException e) {
      if (!forCopy) {
        throw e;
      }
      t = recreate(c, ident, schema);
    }
    tables.put(schema.id(), t);
    if (forCopy && !t.schema.equals(schema)) {
      return recreateIfNeeded(t, schema);
    }
    announce(t);
    return t;
  }

  /**
   * The source schema to bind a loaded table with: the given one when the table follows it, else
   * the given one anyway once the table was evolved to it (a restart after a schema change).
   */
  private ReplicatedTableSchema currentSchemaOf(Table table, ReplicatedTableSchema schema) {
    if (!TableLayout.matches(table, schema, isChangelog())) {
      TableLayout.evolve(table, schema, isChangelog());
    }
    return schema;
  }

  private IcebergTable recreateIfNeeded(IcebergTable t, ReplicatedTableSchema schema) {
    try {
      follow(t, schema);
      return t;
    } catch (EtlException e) {
      log.info("iceberg table {} is re-created for its new copy: {}", t.ident, e.getMessage());
      IcebergTable fresh = recreate(Objects.requireNonNull(catalog, "catalog"), t.ident, schema);
      tables.put(schema.id(), fresh);
      return fresh;
    }
  }

  private IcebergTable recreate(Catalog c, TableIdentifier ident, ReplicatedTableSchema schema) {
    c.dropTable(ident, true);
    Table table = create(c, ident, schema);
    IcebergTable t =
        new IcebergTable(ident, table, schema, isChangelog(), targetFileBytes, copyWriters);
    announce(t);
    return t;
  }

  private Table create(Catalog c, TableIdentifier ident, ReplicatedTableSchema schema) {
    if (c instanceof SupportsNamespaces ns && !ns.namespaceExists(ident.namespace())) {
      try {
        ns.createNamespace(ident.namespace());
      } catch (AlreadyExistsException e) {
        // created meanwhile
      }
    }
    Schema created = TableLayout.create(schema, isChangelog());
    Map<String, String> props = new LinkedHashMap<>();
    props.put(TableProperties.FORMAT_VERSION, "2");
    props.put(TableProperties.DEFAULT_FILE_FORMAT, "parquet");
    props.put(TableProperties.COMMIT_NUM_RETRIES, "0");
    props.put("pgetl.source-table", schema.name().toString());
    props.put(MODE_PROPERTY, mode.name().toLowerCase(java.util.Locale.ROOT));
    Table table;
    try {
      table =
          c.buildTable(ident, created)
              .withPartitionSpec(PartitionSpec.unpartitioned())
              .withProperties(props)
              .create();
    } catch (AlreadyExistsException e) {
      return c.loadTable(ident);
    }
    // Iceberg assigned the field ids: the attnum map is made from the created fields, by name
    table
        .updateProperties()
        .set(TableLayout.ATTNUMS, TableLayout.encode(TableLayout.attnums(table, schema)))
        .commit();
    table.refresh();
    return table;
  }

  private void announce(IcebergTable t) {
    DestinationTableMetadataStore m = metadata;
    if (m != null) {
      m.put(
          t.id,
          new DestinationTableMetadataStore.TableMetadata(
              t.ident.toString(), t.schema.tableSchema().snapshotLsn(), true));
    }
  }

  // --- commits

  private long bufferedBytes() {
    long n = 0;
    for (IcebergTable t : tables.values()) {
      n += t.pendingBytes();
    }
    return n;
  }

  private boolean commitDue() {
    return System.nanoTime() - lastCommitNanos >= commitInterval.toNanos();
  }

  private void tick() {
    if (fenced || waiting.isEmpty() || !commitDue()) {
      return;
    }
    AsyncResult none = AsyncResult.create();
    run(none, this::commitAll);
  }

  /** Commits every table with buffered work, then answers every waiting write durable. */
  private void commitAll() {
    for (IcebergTable t : tables.values()) {
      if (t.hasPending()) {
        commitTable(t);
      }
    }
    lastCommitNanos = System.nanoTime();
    List<AsyncResult> done = new ArrayList<>(waiting);
    waiting.clear();
    for (AsyncResult r : done) {
      r.durable();
    }
  }

  private void commitTable(IcebergTable t) {
    t.commit(epoch());
  }

  private long epoch() {
    DestinationContext c = context;
    return c == null ? 0 : c.epoch();
  }

  /** A commit or write failed: everything buffered is dropped and read again from the tables. */
  private void failAll(EtlException e, AsyncResult current) {
    for (IcebergTable t : tables.values()) {
      t.discardPending();
    }
    tables.clear(); // their bookkeeping is read again from the committed tables
    List<AsyncResult> done = new ArrayList<>(waiting);
    waiting.clear();
    for (AsyncResult r : done) {
      r.fail(e);
    }
    current.fail(e);
  }

  private void fence(IcebergTable.Fenced e, AsyncResult current) {
    log.warn("{}: this instance stops writing", e.getMessage());
    fenced = true;
    DestinationContext c = context;
    if (c != null) {
      c.requestShutdown(); // before the answers: whoever sees them sees the request too
    }
    for (IcebergTable t : tables.values()) {
      t.discardPending();
    }
    List<AsyncResult> done = new ArrayList<>(waiting);
    waiting.clear();
    for (AsyncResult r : done) {
      r.shutdown();
    }
    current.shutdown();
  }

  private void abandonWaiting() {
    for (IcebergTable t : tables.values()) {
      t.discardPending();
    }
    List<AsyncResult> done = new ArrayList<>(waiting);
    waiting.clear();
    for (AsyncResult r : done) {
      r.shutdown();
    }
  }

  private void closeCatalog() {
    Catalog c = catalog;
    if (c instanceof java.io.Closeable closeable) {
      try {
        closeable.close();
      } catch (java.io.IOException e) {
        log.debug("closing the Iceberg catalog: {}", e.getMessage());
      }
    }
  }
}
