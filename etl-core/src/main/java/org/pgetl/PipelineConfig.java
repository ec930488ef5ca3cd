package org.pgetl;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * Everything a {@link Pipeline} needs to know, immutable and validated at {@link Builder#build()}.
 *
 * <p>Build one with {@link #builder()}; change one with {@link #toBuilder()}. Every setting has a
 * default except the pipeline id, the publication and the source connection. An invalid value fails
 * with {@link EtlException} of kind {@link ErrorKind#CONFIG_ERROR} whose message names the field
 * and the constraint, such as {@code batch.maxBytes must be > 0, was 0}. The source password never
 * appears in {@link #toString()}.
 *
 * @param pipelineId the pipeline's id: 1–40 characters of {@code [a-z0-9_]}; it names the
 *     replication slots ({@code pgetl_apply_<id>}) and scopes every stored row
 * @param publication the publication to replicate; it must exist on the source
 * @param source how to reach the source database
 * @param batchMaxBytes the most bytes (estimated) a batch of events holds; the connections of one
 *     table's copy share it as the heap of their decoded rows, each batch of rows holding at most
 *     {@code batchMaxBytes / copyConnectionsPerTable}
 * @param batchMaxFill the longest a partly filled batch waits for more data while data keeps coming
 *     (a batch is sent at once when the stream has nothing more to read)
 * @param maxInFlightWrites how many {@code writeEvents} calls of one stream may wait for their
 *     answer at once; intake pauses when the limit is reached
 * @param maxTableSyncWorkers how many tables are copied (and caught up) at once
 * @param copyConnectionsPerTable how many connections copy one table in parallel (ctid ranges)
 * @param retryDelay the delay before the first timed retry of a failed table or worker
 * @param retryMaxDelay the longest delay between timed retries
 * @param retryBackoffMultiplier the factor by which the delay grows after each attempt
 * @param retryMaxAttempts how many timed retries are made before a failure needs an operator
 * @param tableCopy which tables get an initial copy
 * @param invalidatedSlotBehavior what to do when the apply slot was invalidated by the server
 * @param pgoutputBinary ask pgoutput for binary values (PostgreSQL 14+; falls back to text for
 *     types without a binary decoder)
 * @param pgoutputStreaming ask pgoutput to stream large in-progress transactions while they run
 *     (PostgreSQL 14+); their changes wait in spool files until their commit
 * @param spoolDirectory where streamed in-progress transactions wait for their commit: the pipeline
 *     uses its own folder {@code <spoolDirectory>/<pipelineId>}, emptied at every start
 * @param spoolMaxBytes the most disk the pipeline's spool files may take together
 * @param statusInterval the longest time between two status updates to the server (also bounded by
 *     a third of the server's {@code wal_sender_timeout})
 * @param shutdownTimeout how long a shutdown waits for unanswered destination results before it
 *     abandons them (they are delivered again by the next start)
 * @param lifecyclePollInterval how often the destination's lifecycle row (and operators' table
 *     requests) are read
 * @param publicationRefreshInterval how often the publication's tables are read again, so that a
 *     table added to (or removed from) it is copied (or cleaned up) while the pipeline runs; a
 *     table's first change in the stream is noticed at once anyway
 * @param instanceMode what this instance does when another instance of the same pipeline id holds
 *     the pipeline's lease: wait as a standby and take over when it frees, or fail at start
 * @param leaseCheckInterval how often the active instance confirms that it still holds the lease
 *     (each check gives up after this long), and how often a standby tries to take it
 * @param takeoverDelay how long an instance that took the lease from one that did not release it
 *     waits before its first slot, state or destination action; longer than two check intervals, so
 *     that the instance that lost the lease has stopped by then
 * @param temporarySlots create the replication slots as temporary slots, which the server drops
 *     when their connection ends: a process that ends, even killed, leaves no slot that retains
 *     WAL. A lost connection then loses the apply slot too, which the next connection handles as a
 *     missing slot ({@code invalidatedSlotBehavior}); meant for a state that does not outlive the
 *     process either ({@code MemoryStore}), where every start copies every table again anyway
 * @param failoverSlots whether the apply slot is a failover slot (PostgreSQL 17+), which a physical
 *     standby with {@code sync_replication_slots = on} keeps, so that the pipeline resumes from it
 *     after the standby's promotion: {@link FailoverSlots#AUTO} (the default) makes it one on 17+
 *     and not before, {@link FailoverSlots#ON} fails {@code start()} on an older server
 * @param requireReplicaIdentity whether a table without a replica identity, in a publication that
 *     publishes UPDATE or DELETE, goes to its error state instead of being replicated: by default
 *     such a table is copied and its INSERTs and TRUNCATEs replicated, as PostgreSQL's own
 *     subscriber does (PostgreSQL refuses UPDATE and DELETE on it at the source); never fails the
 *     whole pipeline
 * @param copyMinBytesPerConnection the least size of a table per copy connection: a table is copied
 *     over one connection per this many bytes ({@code pg_table_size}: heap and TOAST), at least one
 *     and at most {@code copyConnectionsPerTable}, so that a small table does not pay for
 *     connections that would each copy little; 0 always uses {@code copyConnectionsPerTable}
 * @param chunkedCopyMinBytes the least size of a table ({@code pg_table_size}) that is copied in
 *     chunks while its changes stream, when the destination supports it, the source is PostgreSQL
 *     14+ and the first column of the table's key is an integer or a uuid: each chunk is read under
 *     its own short snapshot and is done once durable, so no snapshot is held for the whole copy
 *     and a restart copies only the chunks not done; 0 copies every such table in chunks, {@link
 *     Long#MAX_VALUE} none
 * @param copyChunkBytes about how many bytes of a table one chunk holds (the table's size divided
 *     into chunks of this size); a snapshot lives about as long as one chunk takes to read
 */
public record PipelineConfig(
    String pipelineId,
    String publication,
    PgConnectionConfig source,
    long batchMaxBytes,
    Duration batchMaxFill,
    int maxInFlightWrites,
    int maxTableSyncWorkers,
    int copyConnectionsPerTable,
    Duration retryDelay,
    Duration retryMaxDelay,
    double retryBackoffMultiplier,
    int retryMaxAttempts,
    TableCopySelection tableCopy,
    InvalidatedSlotBehavior invalidatedSlotBehavior,
    boolean pgoutputBinary,
    boolean pgoutputStreaming,
    Path spoolDirectory,
    long spoolMaxBytes,
    Duration statusInterval,
    Duration shutdownTimeout,
    Duration lifecyclePollInterval,
    Duration publicationRefreshInterval,
    InstanceMode instanceMode,
    Duration leaseCheckInterval,
    Duration takeoverDelay,
    boolean temporarySlots,
    FailoverSlots failoverSlots,
    boolean requireReplicaIdentity,
    long copyMinBytesPerConnection,
    long chunkedCopyMinBytes,
    long copyChunkBytes) {

  /** 8 MiB: large enough for throughput, small enough to bound memory per stream. */
  public static final long DEFAULT_BATCH_MAX_BYTES = 8L * 1024 * 1024;

  /** 1 s: bounds the latency of a busy stream; an idle stream sends at once. */
  public static final Duration DEFAULT_BATCH_MAX_FILL = Duration.ofSeconds(1);

  /** 4: keeps a remote destination busy while the next batch fills. */
  public static final int DEFAULT_MAX_IN_FLIGHT_WRITES = 4;

  /** 4: tables copied at once; each holds a replication slot and a connection while it syncs. */
  public static final int DEFAULT_MAX_TABLE_SYNC_WORKERS = 4;

  /** 4: copy connections per table; more rarely helps on a small server. */
  public static final int DEFAULT_COPY_CONNECTIONS_PER_TABLE = 4;

  /**
   * 8 MiB: a table smaller than that is copied over one connection, a larger one over one more
   * connection per 8 MiB up to {@code copyConnectionsPerTable}. One connection copies 8 MiB in
   * about a tenth of a second; another connection costs a login and a snapshot import first.
   */
  public static final long DEFAULT_COPY_MIN_BYTES_PER_CONNECTION = 8L * 1024 * 1024;

  /** Default {@code chunkedCopyMinBytes}: tables of 1 GiB and more are copied in chunks. */
  public static final long DEFAULT_CHUNKED_COPY_MIN_BYTES = 1024L * 1024 * 1024;

  /**
   * Default {@code copyChunkBytes}: 16 MiB, well under a second of one connection's COPY (a chunk's
   * snapshot, and a change held while its chunk is written, last that long; see docs/benchmarks.md
   * for 16 against 64 MiB).
   */
  public static final long DEFAULT_COPY_CHUNK_BYTES = 16L * 1024 * 1024;

  /** 2 s before the first timed retry. */
  public static final Duration DEFAULT_RETRY_DELAY = Duration.ofSeconds(2);

  /** 5 min: the longest wait between two timed retries. */
  public static final Duration DEFAULT_RETRY_MAX_DELAY = Duration.ofMinutes(5);

  /** Doubling delays. */
  public static final double DEFAULT_RETRY_BACKOFF_MULTIPLIER = 2.0;

  /** 5 timed retries, then an operator is needed. */
  public static final int DEFAULT_RETRY_MAX_ATTEMPTS = 5;

  /**
   * On: the server sends a large transaction while it runs (into the spool) instead of keeping it
   * in its own spill files until the commit, so it reaches the destination sooner after its commit.
   */
  public static final boolean DEFAULT_PGOUTPUT_STREAMING = true;

  /**
   * 10 GiB of spool files per pipeline: a transaction of some hundred million narrow rows, well
   * below the free space of a typical server disk.
   */
  public static final long DEFAULT_SPOOL_MAX_BYTES = 10L * 1024 * 1024 * 1024;

  /** 10 s, and never more than a third of the server's {@code wal_sender_timeout}. */
  public static final Duration DEFAULT_STATUS_INTERVAL = Duration.ofSeconds(10);

  /** 30 s for unanswered destination results at shutdown. */
  public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

  /** 1 s: an operator's lifecycle change takes effect within about a second. */
  public static final Duration DEFAULT_LIFECYCLE_POLL_INTERVAL = Duration.ofSeconds(1);

  /** 5 s: a table added to the publication starts its copy within seconds, for one small query. */
  public static final Duration DEFAULT_PUBLICATION_REFRESH_INTERVAL = Duration.ofSeconds(5);

  /** 1 s: a lost lease stops the instance within about two seconds, for one tiny query a second. */
  public static final Duration DEFAULT_LEASE_CHECK_INTERVAL = Duration.ofSeconds(1);

  /** 3 s: two check intervals and a margin for the old instance's stop. */
  public static final Duration DEFAULT_TAKEOVER_DELAY = Duration.ofSeconds(3);

  /** What an instance does when another instance of its pipeline holds the lease. */
  public enum InstanceMode {
    /**
     * Wait as a standby: {@code start()} returns, and the instance takes over when the lease frees.
     */
    STANDBY,
    /** Fail at {@code start()}, naming the instance that holds the lease. */
    FAIL_FAST
  }

  /**
   * Whether the apply slot is a failover slot, one that a physical standby with {@code
   * sync_replication_slots = on} keeps a copy of, so that the pipeline resumes from it after the
   * standby's promotion (PostgreSQL 17+).
   */
  public enum FailoverSlots {
    /**
     * A failover slot on PostgreSQL 17 and later, an ordinary slot before (logged once at start);
     * an ordinary slot with {@code temporarySlots}, which the server cannot make a failover slot.
     */
    AUTO,
    /** Always a failover slot: {@code start()} fails on a server before 17. */
    ON,
    /** Never a failover slot: a promoted standby has no copy of it. */
    OFF;

    /**
     * Returns the value of a boolean setting, as {@link Builder#failoverSlots(boolean)} takes it.
     *
     * @param on whether failover slots are asked for
     * @return {@link #ON} or {@link #OFF}
     */
    public static FailoverSlots of(boolean on) {
      return on ? ON : OFF;
    }
  }

  private static final Pattern PIPELINE_ID = Pattern.compile("[a-z0-9_]{1,40}");

  /** What to do when the server invalidated the apply slot ({@code wal_status = 'lost'}). */
  public enum InvalidatedSlotBehavior {
    /** Fail with {@code REPLICATION_SLOT_INVALIDATED}; an operator decides. */
    FAIL,
    /** Drop and recreate the slot, then copy every table again. */
    RECREATE
  }

  /** Validates every field. */
  public PipelineConfig {
    requireText(pipelineId, "pipelineId");
    if (!PIPELINE_ID.matcher(pipelineId).matches()) {
      throw invalid(
          "pipelineId must be 1-40 characters of [a-z0-9_] (it names replication slots), was '"
              + pipelineId
              + "'");
    }
    requireText(publication, "publication");
    if (publication.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 63) {
      throw invalid("publication must be at most 63 bytes, was '" + publication + "'");
    }
    if (source == null) {
      throw invalid("source must be set (PgConnectionConfig of the source database)");
    }
    positive(batchMaxBytes, "batch.maxBytes");
    positive(batchMaxFill, "batch.maxFill");
    positive(maxInFlightWrites, "maxInFlightWrites");
    positive(maxTableSyncWorkers, "maxTableSyncWorkers");
    positive(copyConnectionsPerTable, "copyConnectionsPerTable");
    if (copyConnectionsPerTable > 64) {
      throw invalid("copyConnectionsPerTable must be <= 64, was " + copyConnectionsPerTable);
    }
    if (copyMinBytesPerConnection < 0) {
      throw invalid("copyMinBytesPerConnection must be >= 0, was " + copyMinBytesPerConnection);
    }
    if (chunkedCopyMinBytes < 0) {
      throw invalid("chunkedCopyMinBytes must be >= 0, was " + chunkedCopyMinBytes);
    }
    positive(copyChunkBytes, "copyChunkBytes");
    positive(retryDelay, "retry.delay");
    positive(retryMaxDelay, "retry.maxDelay");
    if (retryMaxDelay.compareTo(retryDelay) < 0) {
      throw invalid(
          "retry.maxDelay must be >= retry.delay (" + retryDelay + "), was " + retryMaxDelay);
    }
    if (!(retryBackoffMultiplier >= 1.0) || Double.isInfinite(retryBackoffMultiplier)) {
      throw invalid("retry.backoffMultiplier must be >= 1.0, was " + retryBackoffMultiplier);
    }
    if (retryMaxAttempts < 0) {
      throw invalid("retry.maxAttempts must be >= 0, was " + retryMaxAttempts);
    }
    Objects.requireNonNull(tableCopy, "tableCopy");
    Objects.requireNonNull(invalidatedSlotBehavior, "invalidatedSlotBehavior");
    if (spoolDirectory == null) {
      throw invalid("spoolDirectory must be set");
    }
    positive(spoolMaxBytes, "spoolMaxBytes");
    positive(statusInterval, "statusInterval");
    positive(shutdownTimeout, "shutdownTimeout");
    positive(lifecyclePollInterval, "lifecyclePollInterval");
    positive(publicationRefreshInterval, "publicationRefreshInterval");
    Objects.requireNonNull(instanceMode, "instanceMode");
    positive(leaseCheckInterval, "leaseCheckInterval");
    positive(takeoverDelay, "takeoverDelay");
    if (takeoverDelay.compareTo(leaseCheckInterval.multipliedBy(2)) <= 0) {
      throw invalid(
          "takeoverDelay must be > 2 x leaseCheckInterval ("
              + leaseCheckInterval.multipliedBy(2)
              + "), was "
              + takeoverDelay);
    }
    Objects.requireNonNull(failoverSlots, "failoverSlots");
    if (temporarySlots && failoverSlots == FailoverSlots.ON) {
      // a failover slot outlives its connection by design; the server refuses a temporary one
      throw invalid(
          "temporarySlots and failoverSlots exclude each other: a temporary slot cannot"
              + " be a failover slot");
    }
  }

  /**
   * Creates a configuration with {@link #DEFAULT_CHUNKED_COPY_MIN_BYTES} and {@link
   * #DEFAULT_COPY_CHUNK_BYTES}, as before those settings existed; prefer {@link #builder()}.
   *
   * @throws EtlException of kind {@code CONFIG_ERROR} as the canonical constructor
   */
  @SuppressWarnings("InlineMeSuggester") // kept for source and binary compatibility
  public PipelineConfig(
      String pipelineId,
      String publication,
      PgConnectionConfig source,
      long batchMaxBytes,
      Duration batchMaxFill,
      int maxInFlightWrites,
      int maxTableSyncWorkers,
      int copyConnectionsPerTable,
      Duration retryDelay,
      Duration retryMaxDelay,
      double retryBackoffMultiplier,
      int retryMaxAttempts,
      TableCopySelection tableCopy,
      InvalidatedSlotBehavior invalidatedSlotBehavior,
      boolean pgoutputBinary,
      boolean pgoutputStreaming,
      Path spoolDirectory,
      long spoolMaxBytes,
      Duration statusInterval,
      Duration shutdownTimeout,
      Duration lifecyclePollInterval,
      Duration publicationRefreshInterval,
      InstanceMode instanceMode,
      Duration leaseCheckInterval,
      Duration takeoverDelay,
      boolean temporarySlots,
      FailoverSlots failoverSlots,
      boolean requireReplicaIdentity,
      long copyMinBytesPerConnection) {
    this(
        pipelineId,
        publication,
        source,
        batchMaxBytes,
        batchMaxFill,
        maxInFlightWrites,
        maxTableSyncWorkers,
        copyConnectionsPerTable,
        retryDelay,
        retryMaxDelay,
        retryBackoffMultiplier,
        retryMaxAttempts,
        tableCopy,
        invalidatedSlotBehavior,
        pgoutputBinary,
        pgoutputStreaming,
        spoolDirectory,
        spoolMaxBytes,
        statusInterval,
        shutdownTimeout,
        lifecyclePollInterval,
        publicationRefreshInterval,
        instanceMode,
        leaseCheckInterval,
        takeoverDelay,
        temporarySlots,
        failoverSlots,
        requireReplicaIdentity,
        copyMinBytesPerConnection,
        DEFAULT_CHUNKED_COPY_MIN_BYTES,
        DEFAULT_COPY_CHUNK_BYTES);
  }

  /**
   * Creates a configuration with {@link #DEFAULT_COPY_MIN_BYTES_PER_CONNECTION}, as before that
   * setting existed; prefer {@link #builder()}.
   *
   * @throws EtlException of kind {@code CONFIG_ERROR} as the canonical constructor
   */
  @SuppressWarnings("InlineMeSuggester") // kept for source and binary compatibility
  public PipelineConfig(
      String pipelineId,
      String publication,
      PgConnectionConfig source,
      long batchMaxBytes,
      Duration batchMaxFill,
      int maxInFlightWrites,
      int maxTableSyncWorkers,
      int copyConnectionsPerTable,
      Duration retryDelay,
      Duration retryMaxDelay,
      double retryBackoffMultiplier,
      int retryMaxAttempts,
      TableCopySelection tableCopy,
      InvalidatedSlotBehavior invalidatedSlotBehavior,
      boolean pgoutputBinary,
      boolean pgoutputStreaming,
      Path spoolDirectory,
      long spoolMaxBytes,
      Duration statusInterval,
      Duration shutdownTimeout,
      Duration lifecyclePollInterval,
      Duration publicationRefreshInterval,
      InstanceMode instanceMode,
      Duration leaseCheckInterval,
      Duration takeoverDelay,
      boolean temporarySlots,
      FailoverSlots failoverSlots,
      boolean requireReplicaIdentity) {
    this(
        pipelineId,
        publication,
        source,
        batchMaxBytes,
        batchMaxFill,
        maxInFlightWrites,
        maxTableSyncWorkers,
        copyConnectionsPerTable,
        retryDelay,
        retryMaxDelay,
        retryBackoffMultiplier,
        retryMaxAttempts,
        tableCopy,
        invalidatedSlotBehavior,
        pgoutputBinary,
        pgoutputStreaming,
        spoolDirectory,
        spoolMaxBytes,
        statusInterval,
        shutdownTimeout,
        lifecyclePollInterval,
        publicationRefreshInterval,
        instanceMode,
        leaseCheckInterval,
        takeoverDelay,
        temporarySlots,
        failoverSlots,
        requireReplicaIdentity,
        DEFAULT_COPY_MIN_BYTES_PER_CONNECTION);
  }

  /**
   * Creates a configuration without {@code requireReplicaIdentity} (false) and with a boolean
   * {@code failoverSlots} (true is {@link FailoverSlots#ON}, false {@link FailoverSlots#OFF}), as
   * before those settings existed; prefer {@link #builder()}.
   *
   * @throws EtlException of kind {@code CONFIG_ERROR} as the canonical constructor
   */
  @SuppressWarnings("InlineMeSuggester") // kept for source and binary compatibility
  public PipelineConfig(
      String pipelineId,
      String publication,
      PgConnectionConfig source,
      long batchMaxBytes,
      Duration batchMaxFill,
      int maxInFlightWrites,
      int maxTableSyncWorkers,
      int copyConnectionsPerTable,
      Duration retryDelay,
      Duration retryMaxDelay,
      double retryBackoffMultiplier,
      int retryMaxAttempts,
      TableCopySelection tableCopy,
      InvalidatedSlotBehavior invalidatedSlotBehavior,
      boolean pgoutputBinary,
      boolean pgoutputStreaming,
      Path spoolDirectory,
      long spoolMaxBytes,
      Duration statusInterval,
      Duration shutdownTimeout,
      Duration lifecyclePollInterval,
      Duration publicationRefreshInterval,
      InstanceMode instanceMode,
      Duration leaseCheckInterval,
      Duration takeoverDelay,
      boolean temporarySlots,
      boolean failoverSlots) {
    this(
        pipelineId,
        publication,
        source,
        batchMaxBytes,
        batchMaxFill,
        maxInFlightWrites,
        maxTableSyncWorkers,
        copyConnectionsPerTable,
        retryDelay,
        retryMaxDelay,
        retryBackoffMultiplier,
        retryMaxAttempts,
        tableCopy,
        invalidatedSlotBehavior,
        pgoutputBinary,
        pgoutputStreaming,
        spoolDirectory,
        spoolMaxBytes,
        statusInterval,
        shutdownTimeout,
        lifecyclePollInterval,
        publicationRefreshInterval,
        instanceMode,
        leaseCheckInterval,
        takeoverDelay,
        temporarySlots,
        FailoverSlots.of(failoverSlots),
        false);
  }

  /**
   * Creates a configuration with a boolean {@code failoverSlots} (true is {@link FailoverSlots#ON},
   * false {@link FailoverSlots#OFF}), as before the setting had its {@link FailoverSlots#AUTO}
   * default; prefer {@link #builder()}.
   *
   * @throws EtlException of kind {@code CONFIG_ERROR} as the canonical constructor
   */
  @SuppressWarnings("InlineMeSuggester") // kept for source and binary compatibility
  public PipelineConfig(
      String pipelineId,
      String publication,
      PgConnectionConfig source,
      long batchMaxBytes,
      Duration batchMaxFill,
      int maxInFlightWrites,
      int maxTableSyncWorkers,
      int copyConnectionsPerTable,
      Duration retryDelay,
      Duration retryMaxDelay,
      double retryBackoffMultiplier,
      int retryMaxAttempts,
      TableCopySelection tableCopy,
      InvalidatedSlotBehavior invalidatedSlotBehavior,
      boolean pgoutputBinary,
      boolean pgoutputStreaming,
      Path spoolDirectory,
      long spoolMaxBytes,
      Duration statusInterval,
      Duration shutdownTimeout,
      Duration lifecyclePollInterval,
      Duration publicationRefreshInterval,
      InstanceMode instanceMode,
      Duration leaseCheckInterval,
      Duration takeoverDelay,
      boolean temporarySlots,
      boolean failoverSlots,
      boolean requireReplicaIdentity) {
    this(
        pipelineId,
        publication,
        source,
        batchMaxBytes,
        batchMaxFill,
        maxInFlightWrites,
        maxTableSyncWorkers,
        copyConnectionsPerTable,
        retryDelay,
        retryMaxDelay,
        retryBackoffMultiplier,
        retryMaxAttempts,
        tableCopy,
        invalidatedSlotBehavior,
        pgoutputBinary,
        pgoutputStreaming,
        spoolDirectory,
        spoolMaxBytes,
        statusInterval,
        shutdownTimeout,
        lifecyclePollInterval,
        publicationRefreshInterval,
        instanceMode,
        leaseCheckInterval,
        takeoverDelay,
        temporarySlots,
        FailoverSlots.of(failoverSlots),
        requireReplicaIdentity);
  }

  /**
   * Returns the default {@code spoolDirectory}: {@code pgetl-spool} in the system's temporary
   * folder ({@code java.io.tmpdir}), read when a builder is created.
   *
   * @return the folder
   */
  public static Path defaultSpoolDirectory() {
    return Path.of(System.getProperty("java.io.tmpdir"), "pgetl-spool");
  }

  /**
   * Returns a builder with every default set.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns a builder holding this configuration's values.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.pipelineId = pipelineId;
    b.publication = publication;
    b.source = source;
    b.batchMaxBytes = batchMaxBytes;
    b.batchMaxFill = batchMaxFill;
    b.maxInFlightWrites = maxInFlightWrites;
    b.maxTableSyncWorkers = maxTableSyncWorkers;
    b.copyConnectionsPerTable = copyConnectionsPerTable;
    b.retryDelay = retryDelay;
    b.retryMaxDelay = retryMaxDelay;
    b.retryBackoffMultiplier = retryBackoffMultiplier;
    b.retryMaxAttempts = retryMaxAttempts;
    b.tableCopy = tableCopy;
    b.invalidatedSlotBehavior = invalidatedSlotBehavior;
    b.pgoutputBinary = pgoutputBinary;
    b.pgoutputStreaming = pgoutputStreaming;
    b.spoolDirectory = spoolDirectory;
    b.spoolMaxBytes = spoolMaxBytes;
    b.statusInterval = statusInterval;
    b.shutdownTimeout = shutdownTimeout;
    b.lifecyclePollInterval = lifecyclePollInterval;
    b.publicationRefreshInterval = publicationRefreshInterval;
    b.instanceMode = instanceMode;
    b.leaseCheckInterval = leaseCheckInterval;
    b.takeoverDelay = takeoverDelay;
    b.temporarySlots = temporarySlots;
    b.failoverSlots = failoverSlots;
    b.requireReplicaIdentity = requireReplicaIdentity;
    b.copyMinBytesPerConnection = copyMinBytesPerConnection;
    b.chunkedCopyMinBytes = chunkedCopyMinBytes;
    b.copyChunkBytes = copyChunkBytes;
    return b;
  }

  /**
   * Returns the name of the pipeline's apply slot.
   *
   * @return {@code pgetl_apply_<pipelineId>}
   */
  public String applySlotName() {
    return "pgetl_apply_" + pipelineId;
  }

  private static void requireText(String value, String field) {
    if (value == null || value.isBlank()) {
      throw invalid(field + " must be set");
    }
  }

  private static void positive(long value, String field) {
    if (value <= 0) {
      throw invalid(field + " must be > 0, was " + value);
    }
  }

  private static void positive(Duration value, String field) {
    if (value == null) {
      throw invalid(field + " must be set");
    }
    if (value.isNegative() || value.isZero()) {
      throw invalid(field + " must be > 0, was " + value);
    }
  }

  private static EtlException invalid(String message) {
    return new EtlException(ErrorKind.CONFIG_ERROR, message);
  }

  /** Returns the settings, without the source password. */
  @Override
  public String toString() {
    return String.format(
        Locale.ROOT,
        "PipelineConfig[pipelineId=%s, publication=%s, source=%s, batch.maxBytes=%d,"
            + " batch.maxFill=%s, maxInFlightWrites=%d, maxTableSyncWorkers=%d,"
            + " copyConnectionsPerTable=%d, retry.delay=%s, retry.maxDelay=%s,"
            + " retry.backoffMultiplier=%s, retry.maxAttempts=%d, tableCopy=%s,"
            + " invalidatedSlotBehavior=%s, pgoutputBinary=%s, pgoutputStreaming=%s,"
            + " spoolDirectory=%s, spoolMaxBytes=%d, statusInterval=%s, shutdownTimeout=%s,"
            + " lifecyclePollInterval=%s, publicationRefreshInterval=%s, instanceMode=%s,"
            + " leaseCheckInterval=%s, takeoverDelay=%s, temporarySlots=%s, failoverSlots=%s,"
            + " requireReplicaIdentity=%s, copyMinBytesPerConnection=%d,"
            + " chunkedCopyMinBytes=%d, copyChunkBytes=%d]",
        pipelineId,
        publication,
        source,
        batchMaxBytes,
        batchMaxFill,
        maxInFlightWrites,
        maxTableSyncWorkers,
        copyConnectionsPerTable,
        retryDelay,
        retryMaxDelay,
        retryBackoffMultiplier,
        retryMaxAttempts,
        tableCopy,
        invalidatedSlotBehavior,
        pgoutputBinary,
        pgoutputStreaming,
        spoolDirectory,
        spoolMaxBytes,
        statusInterval,
        shutdownTimeout,
        lifecyclePollInterval,
        publicationRefreshInterval,
        instanceMode,
        leaseCheckInterval,
        takeoverDelay,
        temporarySlots,
        failoverSlots,
        requireReplicaIdentity,
        copyMinBytesPerConnection,
        chunkedCopyMinBytes,
        copyChunkBytes);
  }

  /** Builds a {@link PipelineConfig}; every setter returns this builder. */
  public static final class Builder {
    private @Nullable String pipelineId;
    private @Nullable String publication;
    private @Nullable PgConnectionConfig source;
    private long batchMaxBytes = DEFAULT_BATCH_MAX_BYTES;
    private Duration batchMaxFill = DEFAULT_BATCH_MAX_FILL;
    private int maxInFlightWrites = DEFAULT_MAX_IN_FLIGHT_WRITES;
    private int maxTableSyncWorkers = DEFAULT_MAX_TABLE_SYNC_WORKERS;
    private int copyConnectionsPerTable = DEFAULT_COPY_CONNECTIONS_PER_TABLE;
    private long copyMinBytesPerConnection = DEFAULT_COPY_MIN_BYTES_PER_CONNECTION;
    private long chunkedCopyMinBytes = DEFAULT_CHUNKED_COPY_MIN_BYTES;
    private long copyChunkBytes = DEFAULT_COPY_CHUNK_BYTES;
    private Duration retryDelay = DEFAULT_RETRY_DELAY;
    private Duration retryMaxDelay = DEFAULT_RETRY_MAX_DELAY;
    private double retryBackoffMultiplier = DEFAULT_RETRY_BACKOFF_MULTIPLIER;
    private int retryMaxAttempts = DEFAULT_RETRY_MAX_ATTEMPTS;
    private TableCopySelection tableCopy = TableCopySelection.all();
    private InvalidatedSlotBehavior invalidatedSlotBehavior = InvalidatedSlotBehavior.FAIL;
    private boolean pgoutputBinary;
    private boolean pgoutputStreaming = DEFAULT_PGOUTPUT_STREAMING;
    private Path spoolDirectory = defaultSpoolDirectory();
    private long spoolMaxBytes = DEFAULT_SPOOL_MAX_BYTES;
    private Duration statusInterval = DEFAULT_STATUS_INTERVAL;
    private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
    private Duration lifecyclePollInterval = DEFAULT_LIFECYCLE_POLL_INTERVAL;
    private Duration publicationRefreshInterval = DEFAULT_PUBLICATION_REFRESH_INTERVAL;
    private InstanceMode instanceMode = InstanceMode.STANDBY;
    private Duration leaseCheckInterval = DEFAULT_LEASE_CHECK_INTERVAL;
    private Duration takeoverDelay = DEFAULT_TAKEOVER_DELAY;
    private boolean temporarySlots;
    private FailoverSlots failoverSlots = FailoverSlots.AUTO;
    private boolean requireReplicaIdentity;

    private Builder() {}

    /**
     * Sets the pipeline id (required).
     *
     * @param value 1–40 characters of {@code [a-z0-9_]}
     * @return this builder
     */
    public Builder pipelineId(String value) {
      this.pipelineId = value;
      return this;
    }

    /**
     * Sets the publication (required).
     *
     * @param value the publication name
     * @return this builder
     */
    public Builder publication(String value) {
      this.publication = value;
      return this;
    }

    /**
     * Sets the source connection (required).
     *
     * @param value the connection settings
     * @return this builder
     */
    public Builder source(PgConnectionConfig value) {
      this.source = value;
      return this;
    }

    /**
     * Sets the most bytes (estimated) a batch holds (default 8 MiB); a table's copy connections
     * share it, counted as the heap of their decoded rows.
     *
     * @param value bytes, > 0
     * @return this builder
     */
    public Builder batchMaxBytes(long value) {
      this.batchMaxBytes = value;
      return this;
    }

    /**
     * Sets how long a partly filled batch waits while data keeps coming (default 1 s).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder batchMaxFill(Duration value) {
      this.batchMaxFill = value;
      return this;
    }

    /**
     * Sets how many writes of one stream may wait for their answer (default 4).
     *
     * @param value at least 1
     * @return this builder
     */
    public Builder maxInFlightWrites(int value) {
      this.maxInFlightWrites = value;
      return this;
    }

    /**
     * Sets how many tables sync at once (default 4).
     *
     * @param value at least 1
     * @return this builder
     */
    public Builder maxTableSyncWorkers(int value) {
      this.maxTableSyncWorkers = value;
      return this;
    }

    /**
     * Sets how many connections copy one table (default 4).
     *
     * @param value 1 to 64
     * @return this builder
     */
    public Builder copyConnectionsPerTable(int value) {
      this.copyConnectionsPerTable = value;
      return this;
    }

    /**
     * Sets the least size of a table per copy connection (default 8 MiB): a table is copied over
     * one connection per this many bytes, from one up to {@code copyConnectionsPerTable}; 0 always
     * uses {@code copyConnectionsPerTable}.
     *
     * @param value bytes, 0 or more
     * @return this builder
     */
    public Builder copyMinBytesPerConnection(long value) {
      this.copyMinBytesPerConnection = value;
      return this;
    }

    /**
     * Sets the least size of a table that is copied in chunks while its changes stream (default 1
     * GiB): resumable per chunk, no snapshot held for the whole copy. It needs a destination that
     * supports it, PostgreSQL 14+ and a key whose first column is an integer or a uuid; other
     * tables are copied under one snapshot. 0 copies every such table in chunks, {@link
     * Long#MAX_VALUE} none.
     *
     * @param value bytes, 0 or more
     * @return this builder
     */
    public Builder chunkedCopyMinBytes(long value) {
      this.chunkedCopyMinBytes = value;
      return this;
    }

    /**
     * Sets about how many bytes of a table one chunk holds (default 16 MiB).
     *
     * @param value bytes, positive
     * @return this builder
     */
    public Builder copyChunkBytes(long value) {
      this.copyChunkBytes = value;
      return this;
    }

    /**
     * Sets the delay before the first timed retry (default 2 s).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder retryDelay(Duration value) {
      this.retryDelay = value;
      return this;
    }

    /**
     * Sets the longest delay between timed retries (default 5 min).
     *
     * @param value at least the retry delay
     * @return this builder
     */
    public Builder retryMaxDelay(Duration value) {
      this.retryMaxDelay = value;
      return this;
    }

    /**
     * Sets the factor by which the retry delay grows (default 2.0).
     *
     * @param value at least 1.0
     * @return this builder
     */
    public Builder retryBackoffMultiplier(double value) {
      this.retryBackoffMultiplier = value;
      return this;
    }

    /**
     * Sets how many timed retries are made before an operator is needed (default 5).
     *
     * @param value at least 0
     * @return this builder
     */
    public Builder retryMaxAttempts(int value) {
      this.retryMaxAttempts = value;
      return this;
    }

    /**
     * Sets which tables get an initial copy (default all).
     *
     * @param value the selection
     * @return this builder
     */
    public Builder tableCopy(TableCopySelection value) {
      this.tableCopy = value;
      return this;
    }

    /**
     * Sets what happens when the apply slot was invalidated (default {@code FAIL}).
     *
     * @param value the behaviour
     * @return this builder
     */
    public Builder invalidatedSlotBehavior(InvalidatedSlotBehavior value) {
      this.invalidatedSlotBehavior = value;
      return this;
    }

    /**
     * Asks pgoutput for binary values (default false; PostgreSQL 14+).
     *
     * @param value whether to use binary mode
     * @return this builder
     */
    public Builder pgoutputBinary(boolean value) {
      this.pgoutputBinary = value;
      return this;
    }

    /**
     * Asks pgoutput to stream large in-progress transactions while they run (default true;
     * PostgreSQL 14+, older servers use protocol 1). False keeps protocol 1: the server holds a
     * large transaction until its commit.
     *
     * @param value whether to stream
     * @return this builder
     */
    public Builder pgoutputStreaming(boolean value) {
      this.pgoutputStreaming = value;
      return this;
    }

    /**
     * Sets where streamed in-progress transactions wait for their commit (default {@link
     * #defaultSpoolDirectory()}); the pipeline uses the folder {@code <value>/<pipelineId>} and
     * empties it at every start.
     *
     * @param value a folder this process can write
     * @return this builder
     */
    public Builder spoolDirectory(Path value) {
      this.spoolDirectory = value;
      return this;
    }

    /**
     * Sets the most disk the pipeline's spool files may take together (default 10 GiB); beyond it
     * the pipeline stops with an error naming this setting.
     *
     * @param value bytes, > 0
     * @return this builder
     */
    public Builder spoolMaxBytes(long value) {
      this.spoolMaxBytes = value;
      return this;
    }

    /**
     * Sets the longest time between two status updates (default 10 s).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder statusInterval(Duration value) {
      this.statusInterval = value;
      return this;
    }

    /**
     * Sets how long a shutdown waits for unanswered results (default 30 s).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder shutdownTimeout(Duration value) {
      this.shutdownTimeout = value;
      return this;
    }

    /**
     * Sets how often the lifecycle row is read (default 1 s).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder lifecyclePollInterval(Duration value) {
      this.lifecyclePollInterval = value;
      return this;
    }

    /**
     * Sets how often the publication's tables are read again (default 5 s).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder publicationRefreshInterval(Duration value) {
      this.publicationRefreshInterval = value;
      return this;
    }

    /**
     * Sets what this instance does when another one holds the pipeline's lease (default {@code
     * STANDBY}).
     *
     * @param value the mode
     * @return this builder
     */
    public Builder instanceMode(InstanceMode value) {
      this.instanceMode = value;
      return this;
    }

    /**
     * Sets how often the lease is confirmed or tried (default 1 s).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder leaseCheckInterval(Duration value) {
      this.leaseCheckInterval = value;
      return this;
    }

    /**
     * Sets how long a takeover waits before it acts (default 3 s; more than two check intervals).
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder takeoverDelay(Duration value) {
      this.takeoverDelay = value;
      return this;
    }

    /**
     * Creates the replication slots as temporary slots, dropped by the server with their connection
     * (default false: permanent slots, which survive a restart of the process).
     *
     * @param value whether the slots are temporary
     * @return this builder
     */
    public Builder temporarySlots(boolean value) {
      this.temporarySlots = value;
      return this;
    }

    /**
     * Sets whether the apply slot is a failover slot (default {@link FailoverSlots#AUTO}: one on
     * PostgreSQL 17+, an ordinary slot before), so that a physical standby that synchronises slots
     * keeps it and the pipeline resumes from it after a promotion. An existing apply slot is
     * changed to match at the next start. With {@link FailoverSlots#ON}, {@code start()} fails with
     * {@code CONFIG_ERROR} on a server before 17.
     *
     * @param value auto, on or off
     * @return this builder
     */
    public Builder failoverSlots(FailoverSlots value) {
      this.failoverSlots = value;
      return this;
    }

    /**
     * Makes the apply slot a failover slot, or never one: true is {@link FailoverSlots#ON}, false
     * {@link FailoverSlots#OFF} (see {@link #failoverSlots(FailoverSlots)}).
     *
     * @param value whether the apply slot is a failover slot
     * @return this builder
     */
    public Builder failoverSlots(boolean value) {
      this.failoverSlots = FailoverSlots.of(value);
      return this;
    }

    /**
     * Makes a table without a replica identity an error of that table (default false). By default a
     * table that has no primary key, {@code REPLICA IDENTITY NOTHING} or no columns, in a
     * publication that publishes UPDATE or DELETE, is replicated as PostgreSQL's own subscriber
     * replicates it: its rows are copied and its INSERTs and TRUNCATEs streamed, while PostgreSQL
     * refuses UPDATE and DELETE on it at the source. With this setting such a table goes to its
     * {@code Errored} state with the {@code ALTER TABLE} that fixes it, and is not copied; the
     * other tables replicate, and {@code pgetl tables retry} copies it once it is fixed.
     *
     * @param value whether a table without a replica identity is an error of that table
     * @return this builder
     */
    public Builder requireReplicaIdentity(boolean value) {
      this.requireReplicaIdentity = value;
      return this;
    }

    /**
     * Validates and builds the configuration.
     *
     * @return the configuration
     * @throws EtlException of kind {@code CONFIG_ERROR} naming the first invalid field
     */
    // the canonical constructor rejects a missing pipeline id, publication or source with a
    // CONFIG_ERROR that names the field
    @SuppressWarnings("NullAway")
    public PipelineConfig build() {
      return new PipelineConfig(
          pipelineId,
          publication,
          source,
          batchMaxBytes,
          batchMaxFill,
          maxInFlightWrites,
          maxTableSyncWorkers,
          copyConnectionsPerTable,
          retryDelay,
          retryMaxDelay,
          retryBackoffMultiplier,
          retryMaxAttempts,
          tableCopy,
          invalidatedSlotBehavior,
          pgoutputBinary,
          pgoutputStreaming,
          spoolDirectory,
          spoolMaxBytes,
          statusInterval,
          shutdownTimeout,
          lifecyclePollInterval,
          publicationRefreshInterval,
          instanceMode,
          leaseCheckInterval,
          takeoverDelay,
          temporarySlots,
          failoverSlots,
          requireReplicaIdentity,
          copyMinBytesPerConnection,
          chunkedCopyMinBytes,
          copyChunkBytes);
    }
  }
}
