package org.pgetl.core.internal.apply;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.codec.TypeRegistry;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.core.internal.engine.EngineMetrics;
import org.pgetl.core.internal.engine.ErrorLog;
import org.pgetl.core.internal.engine.StopSignal;
import org.pgetl.core.internal.time.ManualTicker;
import org.pgetl.destination.StreamId;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore.ProgressKey;

/**
 * An {@link ApplyLoop} of the apply stream over a {@link ScriptedSource}, a {@link
 * ScriptedDestination} and a {@link MemoryStore}, on a thread of its own, with a {@link
 * ManualTicker}: no server, and time moves only when the test (or the script) moves it.
 */
final class LoopHarness {
  final ManualTicker ticker = new ManualTicker();
  final MemoryStore store = new MemoryStore("loop_test");
  final StopSignal stop = new StopSignal();
  final Shutdown shutdown = new Shutdown();
  final ErrorLog errors = new ErrorLog();
  final ScriptedSource source;
  final AllTablesRole role = new AllTablesRole();
  final ScriptedDestination destination;
  final Lsn start;
  private final PipelineConfig config;
  private final Path spoolDir;
  private final CompletableFuture<ApplyLoop.Exit> exit = new CompletableFuture<>();
  private boolean streaming;

  LoopHarness(
      Path spoolDir,
      Lsn start,
      ScriptedDestination.Policy policy,
      java.util.function.UnaryOperator<PipelineConfig.Builder> settings) {
    this.spoolDir = spoolDir;
    this.start = start;
    this.source = new ScriptedSource(ticker, start);
    this.destination = new ScriptedDestination(policy);
    PipelineConfig.Builder b =
        PipelineConfig.builder()
            .pipelineId("loop_test")
            .publication("pub")
            .source(PgConnectionConfig.builder().host("localhost").database("db").user("u").build())
            .spoolDirectory(spoolDir)
            .batchMaxFill(Duration.ofMillis(100))
            .shutdownTimeout(Duration.ofSeconds(1))
            .maxInFlightWrites(4);
    this.config = settings.apply(b).build();
  }

  /** Decodes protocol version 2 with streamed in-progress transactions (before {@link #start}). */
  LoopHarness streaming() {
    streaming = true;
    return this;
  }

  /** Starts the loop on its own thread (which owns it and the source). */
  LoopHarness start() {
    LoopEnv env =
        new LoopEnv(
            config,
            store,
            destination,
            EngineMetrics.NONE,
            stop,
            shutdown,
            errors,
            new SpoolFolder(spoolDir, config.spoolMaxBytes(), config.pipelineId()),
            ticker);
    boolean streamed = streaming;
    Thread t =
        new Thread(
            () -> {
              try {
                ApplyLoop loop =
                    new ApplyLoop(
                        env,
                        role,
                        source,
                        streamed
                            ? new PgOutputDecoder(2, StreamingMode.ON)
                            : new PgOutputDecoder(1, StreamingMode.OFF),
                        new MessageResolver(),
                        start);
                exit.complete(loop.run());
              } catch (Throwable e) {
                exit.completeExceptionally(e);
              }
            },
            "loop-test");
    t.setDaemon(true);
    t.start();
    return this;
  }

  /** Waits for the loop to end and returns how. */
  ApplyLoop.Exit awaitExit() throws Exception {
    try {
      return exit.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception x) {
        throw x;
      }
      throw e;
    }
  }

  /** True when the loop has ended. */
  boolean ended() {
    return exit.isDone();
  }

  /**
   * Ends the loop however the test left it: a discarding stop, with the ticker moved past the grace
   * period until the loop is gone (writes the test never answered stay unanswered).
   */
  void close() throws InterruptedException {
    stop.request(StopSignal.Mode.DISCARD);
    for (int i = 0; i < 500 && !exit.isDone(); i++) {
      ticker.advance(config.shutdownTimeout().plusMillis(1));
      try {
        exit.get(20, TimeUnit.MILLISECONDS);
      } catch (ExecutionException | TimeoutException e) {
        // ended with the failure the test asserted, or not yet
      }
    }
  }

  /** The apply stream's stored progress, or null. */
  Lsn storedProgress() {
    return store.progress(ProgressKey.apply()).orElse(null);
  }

  /** The apply role: owns every table, delivers messages, nothing to hand off. */
  static final class AllTablesRole implements StreamRole {
    /** The positions {@link #whenIdle} was called with, in order. */
    final List<Lsn> idleAt = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** What {@link #settled()} answers: no table copied, no command waiting. */
    volatile boolean settled;

    @Override
    public boolean settled() {
      return settled;
    }

    @Override
    public String describe() {
      return "apply";
    }

    @Override
    public StreamId streamId() {
      return StreamId.APPLY;
    }

    @Override
    public ProgressKey progressKey() {
      return ProgressKey.apply();
    }

    @Override
    public boolean owns(TableId table, Lsn commitLsn) {
      return true;
    }

    @Override
    public boolean deliversMessages() {
      return true;
    }

    @Override
    public void afterCommit(Lsn commitEndLsn, java.time.Instant commitTime, Control control) {}

    @Override
    public void afterDurable(Lsn durableLsn, Control control) {}

    @Override
    public void whenIdle(Lsn lastReceived, Control control) {
      if (idleAt.isEmpty() || !idleAt.get(idleAt.size() - 1).equals(lastReceived)) {
        idleAt.add(lastReceived);
      }
    }
  }

  /** Builds the schema from the RELATION message alone: attnums in order, key flags as the key. */
  static final class MessageResolver implements SchemaResolver {
    private final TypeRegistry types = new TypeRegistry();

    @Override
    public ReplicatedTableSchema resolve(
        PgOutputMessage.Relation relation, Lsn snapshotLsn, ReplicatedTableSchema previous) {
      List<ColumnSchema> columns = new ArrayList<>();
      int key = 0;
      for (int i = 0; i < relation.columns().size(); i++) {
        PgOutputMessage.Relation.Column c = relation.columns().get(i);
        columns.add(
            new ColumnSchema(
                c.name(),
                c.typeOid(),
                c.typeModifier(),
                c.typeOid() == PgOutput.INT4 ? "integer" : "text",
                i + 1,
                c.isKey() ? ++key : 0,
                !c.isKey(),
                null));
      }
      return ReplicatedTableSchema.allColumns(
          new TableSchema(
              new TableId(relation.relationId()),
              new TableName(relation.namespace(), relation.name()),
              columns,
              snapshotLsn));
    }

    @Override
    public List<ValueCodec> codecs(int[] typeOids) {
      return types.codecs(typeOids);
    }

    @Override
    public void close() {}
  }
}
