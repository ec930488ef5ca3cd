package org.pgetl.examples.cli;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus;
import org.pgetl.destination.Destination;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.LeaseHolder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code pgetl replicate}: runs a pipeline from a real database into stdout, a DuckDB file or a
 * PostgreSQL mirror until Ctrl-C, printing its status to stderr now and then.
 */
@Command(
    name = "replicate",
    mixinStandardHelpOptions = true,
    description = {
      "Replicates the tables of a publication: copies each table once, then streams every"
          + " committed change, until Ctrl-C. Status lines go to stderr; the stdout destination's"
          + " JSON lines go to stdout.",
      "",
      "The source needs wal_level=logical and a role with the REPLICATION attribute, SELECT on"
          + " the published tables and (for --state-store source) CREATE on the database."
    },
    footer = {
      "",
      "A URL without a password takes it from the PGPASSWORD environment variable.",
      "Example:",
      "  pgetl replicate --source-url 'jdbc:postgresql://db:5432/shop?user=pgetl'"
          + " --publication shop --create-publication public.orders,public.customers"
          + " --destination duckdb:shop.duckdb",
      "",
      "Outages of the source and of its state store are retried for as long as they last; a"
          + " failure the pipeline does not retry (or a destination still unreachable after its"
          + " retries) ends the command.",
      "Exit codes: 0 stopped cleanly, 1 the pipeline failed, 2 invalid input."
    })
final class ReplicateCommand implements Callable<Integer> {
  /** How soon a takeover or a lost lease is reported: the status is read from memory. */
  private static final Duration INSTANCE_WATCH_EVERY = Duration.ofMillis(100);

  @Mixin PipelineOptions options;

  @Option(
      names = "--create-publication",
      paramLabel = "TABLE",
      split = ",",
      description =
          "Create the publication for these tables (schema.table, comma separated) if it"
              + " does not exist yet.")
  @Nullable List<String> createPublication;

  @Option(
      names = "--destination",
      paramLabel = "DEST",
      defaultValue = "stdout",
      converter = DestinationSpec.Converter.class,
      description =
          "Where to write: stdout (JSON lines), duckdb:PATH, postgres:JDBC_URL, iceberg:DIR"
              + " (Iceberg tables, upserted) or iceberg-changelog:DIR (default: ${DEFAULT-VALUE}).")
  DestinationSpec destination;

  @Option(
      names = "--status-every",
      paramLabel = "TIME",
      defaultValue = "10s",
      converter = Converters.DurationConverter.class,
      description = "How often a status line is printed to stderr (default: ${DEFAULT-VALUE}).")
  Duration statusEvery;

  @Option(
      names = "--copy-connections",
      paramLabel = "N",
      defaultValue = "" + PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
      description =
          "How many connections copy one table in parallel, 1 to 64 (default:"
              + " ${DEFAULT-VALUE}).")
  int copyConnections;

  @Option(
      names = "--chunked-copy-min-size",
      paramLabel = "SIZE",
      defaultValue = "1GiB",
      converter = Converters.SizeConverter.class,
      description =
          "Tables at least this large (pg_table_size) are copied in chunks while their changes"
              + " stream: resumable after a restart, no snapshot held for the whole copy; 0 copies"
              + " every table whose key can split it (integer, uuid, numeric, date, timestamp) in chunks, never none (default:"
              + " ${DEFAULT-VALUE}).")
  long chunkedCopyMinSize;

  @Option(
      names = "--copy-chunk-size",
      paramLabel = "SIZE",
      defaultValue = "16MiB",
      converter = Converters.SizeConverter.class,
      description = "About how much of a table one chunk holds (default: ${DEFAULT-VALUE}).")
  long copyChunkSize;

  @Option(
      names = "--instance-mode",
      paramLabel = "MODE",
      defaultValue = "standby",
      description =
          "What to do when another instance of the pipeline is active: standby (wait, and take"
              + " over when it stops) or fail_fast (exit 1) (default: ${DEFAULT-VALUE}).")
  PipelineConfig.InstanceMode instanceMode;

  @Option(
      names = "--lease-check-interval",
      paramLabel = "TIME",
      defaultValue = "1s",
      converter = Converters.DurationConverter.class,
      description =
          "How often the active instance confirms its lease and a standby tries to take it"
              + " (default: ${DEFAULT-VALUE}).")
  Duration leaseCheckInterval;

  @Option(
      names = "--takeover-delay",
      paramLabel = "TIME",
      defaultValue = "3s",
      converter = Converters.DurationConverter.class,
      description =
          "How long a standby that took a lease its holder did not release (a killed process)"
              + " waits before it acts; more than twice --lease-check-interval (default:"
              + " ${DEFAULT-VALUE}).")
  Duration takeoverDelay;

  @Option(
      names = {"-v", "--verbose"},
      description = "Show the engine's log lines and the stack trace of a failure.")
  boolean verbose;

  private final CliContext context;

  ReplicateCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws Exception {
    if (statusEvery.isNegative() || statusEvery.isZero()) {
      throw new CliException("--status-every must be positive, was " + statusEvery, 2);
    }
    PgConnectionConfig source = options.source();
    PipelineConfig config = config(source);
    List<String> publicationTables = createPublication;
    if (publicationTables != null && !publicationTables.isEmpty()) {
      createPublication(source, publicationTables);
    } else if (options.stateStore.kind() == StateStoreSpec.Kind.SOURCE) {
      // the store opens first and would report a wrong password as a store failure
      try (Connection c = Connections.open(source, "replicate it")) {
        c.isValid(1);
      }
    }
    try (PipelineStore store = options.openStore(source)) {
      Destination dest = destination.create(context, source);
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Pipeline pipeline = Pipeline.create(config, store, dest, registry);
      pipeline.start();
      PipelineStatus started = pipeline.status();
      context
          .err()
          .println(
              "pgetl: replicating publication "
                  + options.publication
                  + " of "
                  + source.describe()
                  + " into "
                  + dest.name()
                  + " (pipeline "
                  + options.pipelineId
                  + ", slot "
                  + config.applySlotName()
                  + (started.epoch() > 0 ? ", lease epoch " + started.epoch() : "")
                  + "); Ctrl-C stops");
      if (started.phase() == PipelineStatus.Phase.STANDBY) {
        context.err().println(standbyLine(options.pipelineId, started.leaseHolder()));
      }
      CountDownLatch wake = new CountDownLatch(1);
      context.stop().whenRequested().thenRun(wake::countDown);
      pipeline.shutdownHandle().whenRequested().thenRun(wake::countDown);
      InstanceWatch watch = new InstanceWatch(started);
      long nextStatus = System.nanoTime() + statusEvery.toNanos();
      long tick = Math.min(statusEvery.toMillis(), INSTANCE_WATCH_EVERY.toMillis());
      while (!wake.await(tick, TimeUnit.MILLISECONDS)) {
        String change = watch.changed(options.pipelineId, pipeline.status());
        if (change != null) {
          context.err().println(change);
        }
        if (System.nanoTime() - nextStatus >= 0) {
          printStatus(pipeline, registry);
          nextStatus = System.nanoTime() + statusEvery.toNanos();
        }
      }
      context.err().println("pgetl: stopping (flushing what is buffered)");
      pipeline.shutdown();
      if (!pipeline.awaitTermination(config.shutdownTimeout().plusSeconds(30))) {
        throw new CliException(
            "the pipeline did not stop in time; its threads are named pgetl-*-"
                + options.pipelineId);
      }
      Optional<EtlException> failure = pipeline.failure();
      if (failure.isPresent()) {
        throw failure.get();
      }
      printStatus(pipeline, registry);
      context.err().println("pgetl: stopped cleanly");
      return 0;
    }
  }

  /**
   * Builds the pipeline's configuration from the options; an invalid value is an input error that
   * names the option.
   */
  PipelineConfig config(PgConnectionConfig source) {
    PipelineConfig.Builder b =
        options
            .builder(source)
            .copyConnectionsPerTable(copyConnections)
            .chunkedCopyMinBytes(chunkedCopyMinSize)
            .copyChunkBytes(copyChunkSize)
            .instanceMode(instanceMode)
            .leaseCheckInterval(leaseCheckInterval)
            .takeoverDelay(takeoverDelay);
    if (options.stateStore.kind() == StateStoreSpec.Kind.MEMORY) {
      // nothing outlives the process, so neither may its slots: a temporary slot goes with its
      // connection, and one lost with a connection means a new copy, as a new start does
      b.temporarySlots(true)
          .invalidatedSlotBehavior(PipelineConfig.InvalidatedSlotBehavior.RECREATE);
    }
    return PipelineOptions.build(b);
  }

  /** Names the options in a configuration message, which names the settings. */
  static String optionNames(String message) {
    return message
        .replace("maxTableSyncWorkers", "--max-table-sync-workers")
        .replace("copyConnectionsPerTable", "--copy-connections")
        .replace("chunkedCopyMinBytes", "--chunked-copy-min-size")
        .replace("copyChunkBytes", "--copy-chunk-size")
        .replace("leaseCheckInterval", "--lease-check-interval")
        .replace("takeoverDelay", "--takeover-delay")
        .replace("temporarySlots and failoverSlots", "--state-store memory and --failover-slots on")
        .replace("failoverSlots", "--failover-slots")
        .replace("pipelineId", "--pipeline-id")
        .replace("publication", "--publication");
  }

  /**
   * Returns the line that says this instance is a standby, and for whom.
   *
   * @param pipelineId the pipeline
   * @param holder the instance holding the lease, or null when it was not seen
   * @return the line
   */
  static String standbyLine(String pipelineId, @Nullable LeaseHolder holder) {
    return "pgetl: standby: pipeline "
        + pipelineId
        + " is active in "
        + holderText(holder)
        + "; this instance takes over when it stops";
  }

  /**
   * Describes a lease holder: {@code host pid N (destination) since TIME, epoch N}.
   *
   * @param holder the holder, or null
   * @return the text
   */
  static String holderText(@Nullable LeaseHolder holder) {
    return holder == null
        ? "another instance"
        : holder.holder() + " since " + holder.since() + ", epoch " + holder.epoch();
  }

  /**
   * Follows whether this instance is the active one, from the status (memory only): prints a line
   * when a standby takes over, and when the active instance loses its lease. Used by the command's
   * thread only.
   */
  private static final class InstanceWatch {
    private boolean active;

    InstanceWatch(PipelineStatus started) {
      this.active = started.epoch() > 0;
    }

    /** Returns the line to print for a change since the last call, or null. */
    @Nullable String changed(String pipelineId, PipelineStatus now) {
      boolean isActive = now.epoch() > 0;
      if (isActive == active) {
        return null;
      }
      active = isActive;
      if (isActive) {
        return "pgetl: took over pipeline "
            + pipelineId
            + ": this instance is active now (lease epoch "
            + now.epoch()
            + ")";
      }
      if (now.phase() == PipelineStatus.Phase.STANDBY) {
        return "pgetl: lost the lease of pipeline "
            + pipelineId
            + "; every worker stopped, this instance stands by";
      }
      return null; // stopping: the lease is released last
    }
  }

  /**
   * Prints a status line. Nothing that goes wrong while reading the status or the metrics may end
   * the command: the pipeline runs on its own threads, retries outages of the source and its store
   * for as long as they last, and stops the command only through its shutdown handle.
   */
  private void printStatus(Pipeline pipeline, SimpleMeterRegistry registry) {
    String line;
    try {
      line = statusLine(pipeline.status(), registry);
    } catch (RuntimeException e) {
      line = "pgetl: status not available (" + ErrorReport.singleLine(String.valueOf(e)) + ")";
    }
    context.err().println(line);
  }

  /** Creates the publication unless it exists; the tables must exist. */
  private void createPublication(PgConnectionConfig source, List<String> tables) {
    List<String> quoted = new ArrayList<>();
    for (String t : tables) {
      if (t.isBlank()) {
        continue;
      }
      try {
        quoted.add(TableName.parse(t.strip()).quoted());
      } catch (IllegalArgumentException e) {
        throw new CliException("--create-publication: " + e.getMessage(), Main.EXIT_USAGE);
      }
    }
    try (Connection c = Connections.open(source, "create publication " + options.publication)) {
      try (PreparedStatement ps =
          c.prepareStatement("SELECT 1 FROM pg_publication WHERE pubname = ?")) {
        ps.setString(1, options.publication);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            context
                .err()
                .println(
                    "pgetl: publication "
                        + options.publication
                        + " exists already; it is used as it is");
            return;
          }
        }
      }
      try (Statement s = c.createStatement()) {
        s.execute(
            "CREATE PUBLICATION "
                + TableName.quoteIdentifier(options.publication)
                + " FOR TABLE "
                + String.join(", ", quoted));
      }
      context
          .err()
          .println(
              "pgetl: created publication "
                  + options.publication
                  + " for "
                  + String.join(", ", quoted));
    } catch (SQLException e) {
      throw new EtlException(
          "42501".equals(e.getSQLState()) ? ErrorKind.PERMISSION_DENIED : ErrorKind.CONFIG_ERROR,
          "cannot create publication " + options.publication,
          ErrorReport.singleLine(e.getMessage()) + ", SQLSTATE " + e.getSQLState(),
          e);
    }
  }

  /**
   * Returns a one-line status: phase, table states, events delivered, lag, applied LSN.
   *
   * @param status the pipeline's status
   * @param registry its metrics
   * @return the line
   */
  static String statusLine(PipelineStatus status, SimpleMeterRegistry registry) {
    return statusLine(status, registry, java.time.Instant.now());
  }

  /**
   * Returns a one-line status as of {@code now} (the age of the last error is counted to it).
   *
   * @param status the pipeline's status
   * @param registry its metrics
   * @param now the current time
   * @return the line
   */
  static String statusLine(
      PipelineStatus status, SimpleMeterRegistry registry, java.time.Instant now) {
    Map<String, Integer> states = new TreeMap<>();
    for (PipelineStatus.TableStatus t : status.tables().values()) {
      states.merge(t.state().type().name().toLowerCase(Locale.ROOT), 1, Integer::sum);
    }
    List<String> parts = new ArrayList<>();
    states.forEach((state, n) -> parts.add(n + " " + state));
    List<String> chunked = new ArrayList<>();
    for (PipelineStatus.TableStatus t : status.tables().values()) {
      PipelineStatus.ChunkProgress c = t.chunks();
      if (c != null) {
        chunked.add(
            (t.name() == null ? "?" : t.name().toString())
                + " "
                + c.chunksDone()
                + "/"
                + c.chunks()
                + " chunks"
                + (c.chunksKept() > 0 ? " (" + c.chunksKept() + " kept)" : "")
                + (c.eta() == null ? "" : ", about " + c.eta().toSeconds() + " s left"));
      }
    }
    long copied = 0;
    for (Counter c : registry.find("pgetl.rows.copied").counters()) {
      copied += (long) c.count();
    }
    Counter events = registry.find("pgetl.events.delivered").counter();
    if (status.phase() == PipelineStatus.Phase.STANDBY) {
      return "pgetl: standby, active elsewhere: " + holderText(status.leaseHolder());
    }
    return "pgetl: "
        + status.phase().name().toLowerCase(Locale.ROOT)
        + ", lifecycle "
        + ProgressView.lifecycle(status.lifecycle())
        + ", tables "
        + (parts.isEmpty() ? "none yet" : String.join(", ", parts))
        + (chunked.isEmpty() ? "" : " (copying in chunks: " + String.join("; ", chunked) + ")")
        + ", rows copied "
        + ProgressView.number(copied)
        + ", events "
        + ProgressView.number(events == null ? 0 : (long) events.count())
        + ", lag "
        + ProgressView.bytes(status.lagBytes())
        + ", durable at "
        + status.applyLsn()
        + (status.heldBy() == null ? "" : ", " + ErrorReport.singleLine(status.heldBy()))
        + lastError(status, now);
  }

  /**
   * Returns the status line's part about the last error: {@code , last error 41 s ago: ...}, with
   * {@code (recovered)} once the pipeline works again since, or nothing when nothing failed.
   */
  static String lastError(PipelineStatus status, java.time.Instant now) {
    PipelineStatus.LastError last = status.lastError();
    if (last == null) {
      return status.errors().isEmpty()
          ? ""
          : ", last error: "
              + ErrorReport.singleLine(status.errors().get(status.errors().size() - 1));
    }
    return ", last error "
        + ProgressView.age(last.age(now))
        + " ago"
        + (last.recovered() ? " (recovered)" : "")
        + ": "
        + ErrorReport.singleLine(last.message());
  }
}
