package org.pgetl.core.internal.engine;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;

/**
 * The Micrometer binding of {@link EngineMetrics}; loaded only when a registry is configured, so
 * Micrometer stays an optional dependency. Names are documented in {@code docs/metrics.md}.
 */
final class MicrometerMetrics implements EngineMetrics {
  private final MeterRegistry registry;
  private final Tags tags;
  private final Counter eventsDelivered;
  private final Counter markersDelivered;
  private final Counter eventBytes;
  private final Counter discarded;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicLong lag = new AtomicLong(-1);
  private final AtomicInteger heldByStandby = new AtomicInteger();
  private final Map<LifecycleState, AtomicInteger> lifecycle = new EnumMap<>(LifecycleState.class);
  private final Map<String, Timer> latency = new ConcurrentHashMap<>();
  private final Map<TableName, Counter> rows = new ConcurrentHashMap<>();
  private final Map<TableName, Counter> rowBytes = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> states = new ConcurrentHashMap<>();

  private MicrometerMetrics(MeterRegistry registry, String pipelineId, String destination) {
    this.registry = registry;
    this.tags = Tags.of("pipeline", pipelineId, "destination", destination);
    this.eventsDelivered =
        Counter.builder("pgetl.events.delivered")
            .description(
                "data changes handed to the destination (insert, update, delete, truncate, message)")
            .tags(tags)
            .register(registry);
    this.markersDelivered =
        Counter.builder("pgetl.events.markers")
            .description("begin, commit and relation events handed to the destination")
            .tags(tags)
            .register(registry);
    this.eventBytes =
        Counter.builder("pgetl.events.bytes")
            .description("estimated size of the change events handed to the destination")
            .baseUnit("bytes")
            .tags(tags)
            .register(registry);
    this.discarded =
        Counter.builder("pgetl.lifecycle.discarded.events")
            .description(
                "buffered events dropped by a pause or an abandoned write (read again later)")
            .tags(tags)
            .register(registry);
    Gauge.builder("pgetl.writes.inflight", inFlight, AtomicInteger::get)
        .description("writeEvents calls waiting for their answer")
        .tags(tags)
        .register(registry);
    Gauge.builder("pgetl.replication.held.by.standby", heldByStandby, AtomicInteger::get)
        .description(
            "1 while the apply stream waits for a standby of synchronized_standby_slots to confirm"
                + " the WAL (the standby is named in the status), 0 otherwise")
        .tags(tags)
        .register(registry);
    Gauge.builder("pgetl.replication.lag", lag, AtomicLong::get)
        .description("server WAL end minus the apply slot's confirmed flush position (-1 unknown)")
        .baseUnit("bytes")
        .tags(tags)
        .register(registry);
    for (LifecycleState s : LifecycleState.values()) {
      AtomicInteger v = new AtomicInteger(s == LifecycleState.ACTIVE ? 1 : 0);
      lifecycle.put(s, v);
      Gauge.builder("pgetl.destination.lifecycle.state", v, AtomicInteger::get)
          .description("1 for the destination's current lifecycle state, 0 for the others")
          .tags(tags.and("state", s.dbValue()))
          .register(registry);
    }
  }

  static EngineMetrics create(Object registry, String pipelineId, String destination) {
    if (!(registry instanceof MeterRegistry r)) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "meterRegistry must be an io.micrometer.core.instrument.MeterRegistry, was "
              + registry.getClass().getName());
    }
    return new MicrometerMetrics(r, pipelineId, destination);
  }

  @Override
  public void rowsCopied(TableName table, long n, long bytes) {
    rows.computeIfAbsent(
            table,
            t ->
                Counter.builder("pgetl.rows.copied")
                    .description("rows of the initial copy handed to the destination")
                    .tags(tags.and("table", t.toString()))
                    .register(registry))
        .increment((double) n);
    rowBytes
        .computeIfAbsent(
            table,
            t ->
                Counter.builder("pgetl.rows.copied.bytes")
                    .baseUnit("bytes")
                    .tags(tags.and("table", t.toString()))
                    .register(registry))
        .increment((double) bytes);
  }

  @Override
  public void eventsDelivered(long changes, long markers, long bytes) {
    eventsDelivered.increment((double) changes);
    markersDelivered.increment((double) markers);
    eventBytes.increment((double) bytes);
  }

  @Override
  public void batchLatency(String kind, long nanos) {
    latency
        .computeIfAbsent(
            kind,
            k ->
                Timer.builder("pgetl.batch.latency")
                    .description("time from handing a batch to the destination to its answer")
                    .tags(tags.and("kind", k))
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void inFlight(int delta) {
    inFlight.addAndGet(delta);
  }

  @Override
  public void eventsDiscarded(long events) {
    discarded.increment((double) events);
  }

  @Override
  public void lagBytes(long bytes) {
    lag.set(bytes);
  }

  @Override
  public void heldByStandby(boolean held) {
    heldByStandby.set(held ? 1 : 0);
  }

  @Override
  public void tableState(String table, TableState.Type state) {
    states
        .computeIfAbsent(
            table,
            t -> {
              AtomicInteger v = new AtomicInteger(-1);
              Gauge.builder("pgetl.table.state", v, AtomicInteger::get)
                  .description(
                      "the table's state: 0 init, 1 data_sync, 2 finished_copy, 3 sync_wait,"
                          + " 4 catchup, 5 sync_done, 6 ready, 7 errored")
                  .tags(tags.and("table", t))
                  .register(registry);
              return v;
            })
        .set(gaugeValue(state));
  }

  /** The documented value of the table-state gauge, independent of the enum's order. */
  private static int gaugeValue(TableState.Type state) {
    return switch (state) {
      case INIT -> 0;
      case DATA_SYNC -> 1;
      case FINISHED_COPY -> 2;
      case SYNC_WAIT -> 3;
      case CATCHUP -> 4;
      case SYNC_DONE -> 5;
      case READY -> 6;
      case ERRORED -> 7;
    };
  }

  @Override
  public void lifecycleState(LifecycleState state) {
    lifecycle.forEach((s, v) -> v.set(s == state ? 1 : 0));
  }
}
