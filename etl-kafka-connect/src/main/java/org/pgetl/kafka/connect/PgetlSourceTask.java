package org.pgetl.kafka.connect;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineListener;
import org.pgetl.error.EtlException;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one pgetl pipeline inside Connect: the pipeline copies and streams its publication into an
 * internal destination, and {@link #poll()} hands the resulting records to Connect.
 *
 * <h2>Acknowledgements</h2>
 *
 * A destination write is answered {@code durable()} only once Kafka acknowledged every one of its
 * records ({@link #commitRecord(SourceRecord, RecordMetadata)}; under exactly-once, once their
 * transaction committed), so the replication slot's confirmed position never passes what Kafka
 * holds. Table states and progress stay in the pgetl state store ({@code PostgresStore}), and a
 * restarted task resumes from the store; Connect's offsets ({@code {"lsn": ..., "tx_ordinal": ...}}
 * per record) tell it which of the changes it reads again Kafka holds already: those are dropped.
 *
 * <h2>Exactly-once</h2>
 *
 * With {@code transaction.boundary=connector} on a worker with {@code
 * exactly.once.source.support=enabled}, the task defines the producer transactions (see {@code
 * ConnectDestination}): a table's copy is one transaction, the streams' records are committed at
 * most every {@code exactly.once.commit.interval.ms} while no copy is partly sent.
 *
 * <h2>Stopping and rebalancing</h2>
 *
 * {@link #stop()} stops the pipeline through its shutdown path: records not yet handed to Connect
 * are abandoned (delivered again by the next task), no table error is recorded. Two tasks of one
 * pipeline never run at once: the pipeline's lease makes a task that starts while the previous one
 * still stops wait as a standby.
 */
public final class PgetlSourceTask extends SourceTask {
  private static final Logger LOG = LoggerFactory.getLogger(PgetlSourceTask.class);
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private PgetlConnectorConfig config;
  private String pipelineId;
  private ConnectDestination destination;
  private @Nullable PostgresStore store;
  private Pipeline pipeline;
  private @Nullable ObjectName mbean;
  private volatile boolean stopping;

  /** Creates the task; Connect calls {@link #start(Map)} next. */
  public PgetlSourceTask() {}

  /**
   * Returns the connector's version.
   *
   * @return the version
   */
  @Override
  public String version() {
    return Version.get();
  }

  /**
   * Opens the state store and starts the pipeline of the task's publication. Returns once the
   * pipeline runs, or waits as a standby while another task holds its lease.
   *
   * @param props the task's properties (the connector's plus its publication)
   * @throws ConnectException when the settings are invalid, the source or the store cannot be
   *     reached, or the publication is missing
   */
  @Override
  public void start(Map<String, String> props) {
    try {
      config = new PgetlConnectorConfig(props);
      PgetlConnectorConfig.PipelineSpec spec =
          new PgetlConnectorConfig.PipelineSpec(
              taskProperty(props, PgetlConnectorConfig.TASK_PIPELINE_ID),
              taskProperty(props, PgetlConnectorConfig.TASK_PUBLICATION));
      pipelineId = spec.pipelineId();
      PgConnectionConfig source = config.source();
      PipelineConfig pipelineConfig = config.pipelineConfig(spec, source);
      String encodingError = config.recordEncodingError();
      if (encodingError != null) {
        throw new ConnectException(encodingError);
      }
      RecordMapper mapper =
          new RecordMapper(config.recordSettings(spec, source), config.recordEncoder());
      store = config.openStore(pipelineId, source);
      TransactionContext transactions = context.transactionContext();
      OffsetStorageReader offsets = context.offsetStorageReader();
      EventSequenceKey committed =
          ConnectDestination.position(
              offsets.offset(ConnectDestination.applyPartition(pipelineId)));
      destination =
          new ConnectDestination(
              mapper,
              pipelineId,
              config.pollMaxRecords(),
              transactions,
              config.exactlyOnceCommitInterval(),
              committed,
              transactions == null ? Map.of() : copiesInKafka(store, offsets));
      pipeline = Pipeline.create(pipelineConfig, store, destination);
      ConnectDestination d = destination;
      pipeline.addListener(
          new PipelineListener() {
            @Override
            public void tableStateChanged(
                TableId table,
                @Nullable TableName name,
                @Nullable TableState from,
                @Nullable TableState to) {
              if (to == null
                  || to.type() == TableState.Type.ERRORED
                  || to.type() == TableState.Type.INIT) {
                // its copy attempt ends without a Finish: commits need not wait for it
                d.copyAbandoned(table);
              }
            }
          });
      pipeline.start();
      if (committed != null) {
        LOG.info(
            "pgetl task of pipeline {}: Kafka holds the apply stream up to {}; earlier changes"
                + " read again are dropped",
            pipelineId,
            committed);
      }
      registerMBean();
      LOG.info(
          "pgetl task started: pipeline {}, publication {}, source {}",
          pipelineId,
          spec.publication(),
          source.describe());
    } catch (EtlException e) {
      closeQuietly();
      throw new ConnectException(describe(e), e);
    } catch (ConfigException e) {
      closeQuietly();
      throw e;
    }
  }

  /**
   * Returns the next records, waiting at most {@code poll.timeout.ms} for them.
   *
   * @return the records of whole destination writes, or null when none are ready
   * @throws ConnectException when the pipeline failed (its error, hint included) or stopped on its
   *     own
   * @throws InterruptedException when interrupted
   */
  @Override
  public @Nullable List<SourceRecord> poll() throws InterruptedException {
    List<SourceRecord> records = destination.poll(config.pollTimeout());
    if (records == null && !stopping && pipeline.awaitTermination(Duration.ZERO)) {
      Optional<EtlException> failure = pipeline.failure();
      if (failure.isPresent()) {
        throw new ConnectException(describe(failure.get()), failure.get());
      }
      throw new ConnectException(
          "pgetl pipeline " + pipelineId + " stopped on its own (see its log); restart the task");
    }
    return records;
  }

  /**
   * Counts a record as written: a destination write is answered durable with its last record.
   *
   * @param record the record, as {@link #poll()} returned it
   * @param metadata Kafka's acknowledgement, or null when a transformation dropped the record
   */
  @Override
  public void commitRecord(SourceRecord record, RecordMetadata metadata) {
    destination.acknowledged(record, metadata);
  }

  /**
   * Stops the pipeline through its shutdown path: queued records are abandoned, records sent
   * already may still be acknowledged for {@code shutdown.timeout.ms}; the store is closed.
   */
  @Override
  public void stop() {
    stopping = true;
    if (destination != null) {
      destination.close();
    }
    if (pipeline != null) {
      pipeline.shutdown();
      try {
        if (!pipeline.awaitTermination(config.shutdownTimeout().plusSeconds(5))) {
          LOG.warn(
              "pgetl pipeline {} did not stop in time; its threads go on stopping", pipelineId);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      pipeline
          .failure()
          .ifPresent(f -> LOG.warn("pgetl pipeline {} failed: {}", pipelineId, describe(f)));
    }
    closeQuietly();
    LOG.info(
        "pgetl task stopped: pipeline {}, {} transaction commits requested",
        pipelineId,
        destination == null ? 0 : destination.commits());
  }

  /**
   * The committed copy offsets of the tables the store will copy again: a copy Kafka committed
   * whose end the store did not record (the task died between the two).
   */
  private Map<TableId, Map<String, ?>> copiesInKafka(
      PostgresStore store, OffsetStorageReader offsets) {
    Map<TableId, TableState> states;
    try {
      states = store.loadTableStates();
    } catch (RuntimeException e) {
      LOG.debug("pipeline {}: no table states before the start", pipelineId, e);
      return Map.of();
    }
    List<Map<String, String>> partitions = new ArrayList<>();
    Map<Map<String, String>, TableId> tables = new HashMap<>();
    states.forEach(
        (table, state) -> {
          TableState.Type t = state.type();
          if (t != TableState.Type.SYNC_DONE && t != TableState.Type.READY) {
            Map<String, String> p = ConnectDestination.tablePartition(pipelineId, table);
            partitions.add(p);
            tables.put(p, table);
          }
        });
    Map<TableId, Map<String, ?>> copied = new HashMap<>();
    if (partitions.isEmpty()) {
      return copied;
    }
    offsets
        .offsets(partitions)
        .forEach(
            (partition, offset) -> {
              TableId table = tables.get(partition);
              // a chunked copy (no snapshot LSN) resumes at its chunks: it is not copied again
              if (table != null
                  && offset != null
                  && offset.get("snapshot_lsn") instanceof String lsn
                  && !Lsn.parse(lsn).isZero()) {
                copied.put(table, Map.copyOf(offset));
              }
            });
    return copied;
  }

  private void closeQuietly() {
    unregisterMBean();
    if (store != null) {
      try {
        store.close();
      } catch (RuntimeException e) {
        LOG.warn("closing the pgetl store of pipeline {} failed", pipelineId, e);
      }
      store = null;
    }
  }

  private static String taskProperty(Map<String, String> props, String key) {
    String value = props.get(key);
    if (value == null) {
      throw new ConnectException(
          "the task's settings lack "
              + key
              + ": pgetl tasks take the settings PgetlSourceConnector.taskConfigs gives them");
    }
    return value;
  }

  private static String describe(EtlException e) {
    String hint = e.hint();
    return e.getMessage() + (hint == null || hint.isBlank() ? "" : " (" + hint + ")");
  }

  private void registerMBean() {
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      mbean =
          new ObjectName(
              "org.pgetl.kafka.connect:type=task,pipeline="
                  + ObjectName.quote(pipelineId)
                  + ",instance="
                  + INSTANCES.incrementAndGet());
      server.registerMBean(new Metrics(), mbean);
    } catch (JMException e) {
      LOG.warn("pgetl task metrics not registered for pipeline {}", pipelineId, e);
      mbean = null;
    }
  }

  private void unregisterMBean() {
    if (mbean != null) {
      try {
        ManagementFactory.getPlatformMBeanServer().unregisterMBean(mbean);
      } catch (JMException e) {
        LOG.debug("pgetl task metrics already gone", e);
      }
      mbean = null;
    }
  }

  /** The JMX view of this task. */
  private final class Metrics implements PgetlTaskMXBean {
    @Override
    public String getPipelineId() {
      return pipelineId;
    }

    @Override
    public String getPhase() {
      return pipeline.status().phase().name();
    }

    @Override
    public long getHeldBytes() {
      return destination.heldBytes();
    }

    @Override
    public long getMaxHeldBytes() {
      return destination.maxHeldBytes();
    }

    @Override
    public long getHeldRecords() {
      return destination.heldRecords();
    }

    @Override
    public long getAcknowledgedRecords() {
      return destination.acknowledgedRecords();
    }

    @Override
    public int getQueuedWrites() {
      return destination.queuedWrites();
    }

    @Override
    public long getDroppedEvents() {
      return destination.droppedEvents();
    }
  }
}
