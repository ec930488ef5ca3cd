package org.pgetl.core.internal.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.pgetl.PipelineConfig;
import org.pgetl.PipelineStatus.Phase;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.apply.SpoolFolder;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.PgErrors;
import org.pgetl.core.internal.pg.ServerVersion;
import org.pgetl.core.internal.pg.SlotAdmin;
import org.pgetl.core.internal.pg.SlotInfo;
import org.pgetl.core.internal.pg.SlotNames;
import org.pgetl.core.internal.pg.StandbyWait;
import org.pgetl.core.internal.preflight.PreflightRunner;
import org.pgetl.core.internal.sync.TableStateMachine;
import org.pgetl.core.internal.sync.TableSyncWorker;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.destination.Destination;
import org.pgetl.destination.DestinationContext;
import org.pgetl.destination.DestinationTableMetadataStore;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.Lease;
import org.pgetl.store.PipelineStore.LeaseHolder;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.PipelineStore.TableRequest;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running pipeline: prepares the table states at start, then a supervisor thread runs generations
 * of workers (an apply worker and the table-sync workers it starts) as the destination's lifecycle
 * asks — one generation while {@code active}, none while {@code paused} or after a drain, and a
 * retirement that drops the slots and the state — until shutdown.
 *
 * <h2>Implementation notes</h2>
 *
 * Pausing, draining and shutting down all stop the current generation through its {@link
 * StopSignal}: a pause discards buffered work ({@link StopSignal.Mode#DISCARD}), a drain or a
 * shutdown flushes it ({@link StopSignal.Mode#DRAIN}); either way writes in flight may finish and
 * their durable answers still advance progress, and the next generation starts from {@code
 * max(stored progress, confirmed_flush_lsn)}. So a resume never delivers again what was already
 * durable, and never skips what was discarded.
 *
 * <p>Until the lifecycle row was read once, the destination's state is unknown and nothing is read
 * or delivered. Every wait of a stop is bounded: workers blocked in the server are aborted through
 * the stop signal, answers are awaited for {@code shutdownTimeout}, and a worker thread that still
 * does not end after that is left behind (all worker threads are daemons) and reported. {@link
 * #status} reads only what the workers published ({@link StatusBoard}, the live table states): no
 * I/O, no failure.
 */
public final class Engine {
  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
  private static final Duration RETAINED_WARNING_EVERY = Duration.ofMinutes(1);

  /** What a stop waits for beyond {@code shutdownTimeout}: slot drops, a last status update. */
  static final Duration STOP_MARGIN = Duration.ofSeconds(10);

  private final Ticker ticker;
  private final PipelineConfig config;
  private final PipelineStore store;
  private final Destination destination;
  private final EngineMetrics metrics;
  private final Shutdown shutdown;
  private final PgConnector connector;
  private final ErrorLog errors;
  private final LifecycleTracker lifecycle;
  private final StatusBoard board;
  private final Lease lease;
  private final java.util.concurrent.Semaphore wakeups = new java.util.concurrent.Semaphore(0);
  private volatile long epoch;
  private volatile boolean leaseLost;
  private boolean destinationStarted;
  private @Nullable Thread leaseWatch;
  private final Listeners listeners;
  private final SpoolFolder spool;
  private long lastPublicationRefresh;
  // operator requests handed to the running generation, not yet done
  private final Set<Long> forwardedRequests = new HashSet<>();
  private final Object lock = new Object();

  private volatile Phase phase = Phase.CREATED;
  private volatile @Nullable Generation generation;
  // the catalog connection of a takeover that just read the publication's tables, for the first
  // generation to start with instead of logging in and reading them again (supervisor thread, or
  // the caller of start() before the supervisor starts)
  private @Nullable Connection takeoverCatalog;
  private @Nullable Thread supervisor;
  private final java.util.concurrent.CountDownLatch terminated =
      new java.util.concurrent.CountDownLatch(1);
  private @Nullable EtlException shutdownFailure;

  /** One apply worker and its table-sync workers. */
  private static final class Generation {
    final EngineContext ctx;
    final Thread apply;

    Generation(EngineContext ctx, Thread apply) {
      this.ctx = ctx;
      this.apply = apply;
    }
  }

  /**
   * Creates an engine.
   *
   * @param config the configuration
   * @param store the store (scoped to the same pipeline id)
   * @param destination the destination
   * @param metrics where to report
   * @param shutdown the pipeline's shutdown handle
   */
  public Engine(
      PipelineConfig config,
      PipelineStore store,
      Destination destination,
      EngineMetrics metrics,
      Shutdown shutdown) {
    this(config, store, destination, metrics, shutdown, Ticker.system());
  }

  /**
   * Creates an engine that reads time from {@code ticker}.
   *
   * @param config the configuration
   * @param store the store (scoped to the same pipeline id)
   * @param destination the destination
   * @param metrics where to report
   * @param shutdown the pipeline's shutdown handle
   * @param ticker where every part of the engine reads time
   */
  public Engine(
      PipelineConfig config,
      PipelineStore store,
      Destination destination,
      EngineMetrics metrics,
      Shutdown shutdown,
      Ticker ticker) {
    this.ticker = ticker;
    this.errors = new ErrorLog(ticker);
    this.board = new StatusBoard(ticker);
    this.config = config;
    this.store = store;
    this.destination = destination;
    this.metrics = metrics;
    this.shutdown = shutdown;
    this.connector = new PgConnector(config.source());
    this.lifecycle = new LifecycleTracker(config.pipelineId(), destination.name());
    this.listeners = new Listeners(config.pipelineId());
    this.spool = new SpoolFolder(config);
    errors.onRecord(listeners::errorRecorded);
    this.lease = store.lease(holderDescription());
    shutdown.whenRequested().thenRun(this::wake);
  }

  private void setPhase(Phase next) {
    Phase before = phase;
    phase = next;
    if (before != next) {
      listeners.phaseChanged(before, next);
    }
  }

  /**
   * Adds a listener; see {@code PipelineListener}.
   *
   * @param listener the listener
   */
  public void addListener(org.pgetl.PipelineListener listener) {
    listeners.add(listener);
  }

  /**
   * Starts the pipeline: sets up the store when it needs it (its schema, after the preflight checks
   * passed), takes the pipeline's lease, runs the preflight checks ({@link org.pgetl.Preflight}),
   * prepares table states, sweeps leftover slots, starts the destination and the supervisor. Runs
   * on the caller's thread. When another instance holds the lease, it either fails ({@code
   * FAIL_FAST}) or starts the supervisor as a standby ({@code STANDBY}) that takes over when the
   * lease frees, touching nothing before.
   *
   * @throws EtlException when the store, the source, the publication or the destination fails, or
   *     another instance holds the lease and the instance mode is {@code FAIL_FAST}
   */
  public void start() {
    synchronized (lock) {
      if (phase != Phase.CREATED) {
        throw new EtlException(
            ErrorKind.INVALID_STATE, "pipeline " + config.pipelineId() + " was already started");
      }
      setPhase(Phase.RUNNING);
    }
    try {
      boolean checked = setUpStore();
      Optional<Long> acquired = lease.tryAcquire();
      if (acquired.isEmpty()) {
        Optional<LeaseHolder> holder = lease.holder();
        board.leaseHolder(holder.orElse(null));
        if (config.instanceMode() == PipelineConfig.InstanceMode.FAIL_FAST) {
          lease.close();
          throw new EtlException(
              ErrorKind.PIPELINE_RUNNING_ELSEWHERE,
              "pipeline "
                  + config.pipelineId()
                  + " runs in another instance: "
                  + holder.map(Engine::describe).orElse("(it just released its lease)"));
        }
        LOG.info(
            "pipeline {}: standby; the lease is held by {}",
            config.pipelineId(),
            holder.map(Engine::describe).orElse("another instance"));
        setPhase(Phase.STANDBY);
      } else {
        takeOver(acquired.get(), checked);
      }
    } catch (RuntimeException e) {
      PgConnector.closeQuietly(takeoverCatalog);
      takeoverCatalog = null;
      lease.close();
      setPhase(Phase.FAILED);
      terminated.countDown();
      throw e;
    }
    supervisor = new Thread(this::supervise, "pgetl-pipeline-" + config.pipelineId());
    // a host whose other threads ended can exit: the pipeline never keeps a JVM alive by itself
    supervisor.setDaemon(true);
    supervisor.start();
  }

  /**
   * Acts on a lease just acquired: waits the takeover delay when the previous holder did not
   * release it (it may still be stopping), then starts from the persisted state as a restart does:
   * the lifecycle, the preflight checks, the tables (leftover table-sync slots swept), the
   * requests, the destination's startup (once per process).
   *
   * @param newEpoch the lease's epoch
   * @param checked whether the preflight checks passed just before, when the store was set up
   */
  private void takeOver(long newEpoch, boolean checked) {
    if (!lease.previousHolderReleased()) {
      LOG.info(
          "pipeline {}: took over a lease that was not released; waiting {} for the previous"
              + " instance to stop",
          config.pipelineId(),
          config.takeoverDelay());
      try {
        if (shutdown.awaitRequested(config.takeoverDelay())) {
          return;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    epoch = newEpoch;
    leaseLost = false;
    board.leaseHolder(null);
    LOG.info("pipeline {}: active, lease epoch {}", config.pipelineId(), newEpoch);
    LifecycleState initial = readLifecycle();
    // one connection for the checks and the tables; a failure to open it is the checks' to report
    Connection c = null;
    try {
      try {
        c = connector.openPlain(ApplicationNames.catalog(config.pipelineId()));
      } catch (EtlException e) {
        checked = false;
      }
      // before any slot or state row exists; a retired destination needs only the clean-up's
      if (!checked || initial == LifecycleState.RETIRED) {
        new PreflightRunner(config, store, connector, destination)
            .require(initial == LifecycleState.RETIRED, c);
      }
      if (config.pgoutputStreaming()) {
        // what a killed process left there is streamed again by the server
        spool.clean();
      }
      if (initial == LifecycleState.RETIRED) {
        retire();
      } else {
        prepareTables(java.util.Objects.requireNonNull(c, "checked by the preflight"));
        PgConnector.closeQuietly(takeoverCatalog);
        takeoverCatalog = c;
        c = null;
      }
    } finally {
      PgConnector.closeQuietly(c);
    }
    board.applyLsn(store.progress(ProgressKey.apply()).orElse(Lsn.ZERO));
    store.copies().forEach((t, copy) -> board.rowsCopied(t, copy.rows()));
    if (initial != LifecycleState.RETIRED) {
      applyRequestsWithoutWorkers();
    }
    if (!destinationStarted) {
      destination.startup(new Context());
      destinationStarted = true;
    }
    setPhase(initial() == null ? Phase.STARTING : Phase.RUNNING);
    startLeaseWatch();
  }

  /**
   * Creates what the store lacks (its schema, on a first start) once the preflight checks passed: a
   * start that cannot create it names that with every other failed check in one error, and a start
   * that fails a check creates nothing. The store's lease lives in what it creates, so this runs
   * before the lease; a store that is ready leaves the checks to {@link #takeOver}.
   */
  private boolean setUpStore() {
    Optional<String> needed;
    try {
      needed = store.setupNeeded();
    } catch (RuntimeException e) {
      // the checks report it again, with whatever else fails; nothing stored says "retired" yet
      new PreflightRunner(config, store, connector, destination).require(false);
      throw e;
    }
    if (needed.isEmpty()) {
      return false;
    }
    new PreflightRunner(config, store, connector, destination).require(false);
    LOG.info("pipeline {}: setting up the state store: {}", config.pipelineId(), needed.get());
    store.setUp();
    return true;
  }

  private static String describe(LeaseHolder h) {
    return h.holder() + " since " + h.since() + " (epoch " + h.epoch() + ")";
  }

  /** How this instance describes itself to others: host, process id, destination. */
  private String holderDescription() {
    String host = System.getenv("HOSTNAME");
    if (host == null || host.isBlank()) {
      try {
        host = java.net.InetAddress.getLocalHost().getHostName();
      } catch (java.io.IOException e) {
        host = "unknown-host";
      }
    }
    return host + " pid " + ProcessHandle.current().pid() + " (" + destination.name() + ")";
  }

  /**
   * Starts the thread that confirms the lease every {@code leaseCheckInterval}; on a failed check
   * it fences the running generation at once (no destination call, no store write, no slot change
   * after that) and wakes the supervisor, which returns to standby.
   */
  private void startLeaseWatch() {
    if (leaseWatch != null) {
      return;
    }
    leaseWatch =
        new Thread(
            () -> {
              while (!shutdown.isRequested() && phase != Phase.STOPPED && phase != Phase.FAILED) {
                try {
                  if (shutdown.awaitRequested(config.leaseCheckInterval())) {
                    return;
                  }
                } catch (InterruptedException e) {
                  return;
                }
                if (epoch != 0 && !leaseLost && !lease.isHeld(config.leaseCheckInterval())) {
                  leaseLost = true;
                  Generation g = generation;
                  if (g != null) {
                    g.ctx.stop.request(StopSignal.Mode.FENCED);
                  }
                  LOG.error(
                      "pipeline {}: the lease (epoch {}) could not be confirmed; every worker is"
                          + " stopped now, and this instance waits as a standby",
                      config.pipelineId(),
                      epoch);
                  // status() and the listener show it, as recovered once this instance (or
                  // another) streams again
                  errors.record(
                      new EtlException(
                          ErrorKind.STATE_STORE_ERROR,
                          "the lease (epoch "
                              + epoch
                              + ") could not be confirmed; this instance stopped its workers and"
                              + " stands by",
                          "the store was unreachable or another instance took the pipeline over"));
                  wake();
                }
              }
            },
            "pgetl-lease-" + config.pipelineId());
    leaseWatch.setDaemon(true);
    leaseWatch.start();
  }

  /** Wakes the supervisor from its poll wait (a lost lease, an operator request). */
  void wake() {
    wakeups.release();
  }

  /** Waits for the poll interval, a wake-up or shutdown; true when shutdown was requested. */
  private boolean pause(Duration d) throws InterruptedException {
    wakeups.tryAcquire(d.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
    wakeups.drainPermits();
    return shutdown.isRequested();
  }

  private @Nullable LifecycleState initial() {
    return lifecycle.state();
  }

  private void prepareTables(Connection c) {
    String pipelineId = config.pipelineId();
    PgCatalog catalog = new PgCatalog(c);
    ServerVersion version = catalog.serverVersion();
    boolean failover = version.failoverSlots(config.failoverSlots(), config.temporarySlots());
    if (config.failoverSlots() == PipelineConfig.FailoverSlots.AUTO) {
      LOG.info(
          "pipeline {}: the apply slot is {} (failoverSlots=auto, PostgreSQL {}{})",
          pipelineId,
          failover ? "a failover slot" : "an ordinary slot",
          version,
          failover
              ? ""
              : config.temporarySlots()
                  ? ", temporary slots"
                  : ": failover slots need 17; a promoted standby has no copy of it");
    }
    catalog.requirePublication(config.publication());
    List<TableId> published = catalog.publicationTables(config.publication());
    if (published.isEmpty()) {
      // as PostgreSQL's subscriber: start, and copy each table the publication gains later
      LOG.warn(
          "pipeline {}: publication {} publishes no table; the pipeline streams nothing until a"
              + " table is added (ALTER PUBLICATION {} ADD TABLE ...), then copies it",
          pipelineId,
          config.publication(),
          config.publication());
    }
    reconcile(c, catalog, published);
    SlotAdmin slots = new SlotAdmin(c, ticker);
    // no table-sync slot outlives a process: every copy starts from scratch with a new one
    for (SlotInfo s : slots.listByPrefix(SlotNames.tableSyncPrefix(pipelineId))) {
      if (SlotNames.parseTableSync(s.slotName(), pipelineId).isPresent()) {
        slots.dropIfExists(s.slotName(), SlotAdmin.DROP_TIMEOUT);
        LOG.info("pipeline {}: dropped leftover table-sync slot {}", pipelineId, s.slotName());
      }
    }
    store.loadTableStates();
  }

  /**
   * Brings the stored table set in line with the publication while no worker runs: new tables get
   * {@code Init}, tables that left it lose their state and slot.
   */
  private void reconcile(Connection c, PgCatalog catalog, List<TableId> published) {
    String pipelineId = config.pipelineId();
    {
      for (Map.Entry<TableId, TableName> e : catalog.tableNames(published).entrySet()) {
        board.name(e.getKey(), e.getValue());
      }
      Map<TableId, TableState> states = store.loadTableStates();
      Map<TableId, TableState> added = new LinkedHashMap<>();
      for (TableId t : published) {
        if (!states.containsKey(t)) {
          added.put(t, TableState.INIT);
        }
      }
      if (!added.isEmpty()) {
        PartitionSwitch.warnOnOverlap(
            pipelineId, config.publication(), catalog, added.keySet(), states.keySet());
        store.updateTableStates(added);
        LOG.info(
            "pipeline {}: {} new tables to copy: {}", pipelineId, added.size(), added.keySet());
      }
      Set<TableId> publishedSet = new HashSet<>(published);
      SlotAdmin slots = new SlotAdmin(c, ticker);
      for (TableId t : states.keySet()) {
        if (!publishedSet.contains(t)) {
          store.deleteTable(t);
          slots.dropIfExists(SlotNames.tableSync(pipelineId, t), SlotAdmin.DROP_TIMEOUT);
          LOG.info(
              "pipeline {}: table {} left the publication; its state is deleted", pipelineId, t);
        }
      }
    }
  }

  // ---- operator requests and publication changes

  /**
   * Carries out the pending operator requests directly, while no worker runs (at start, or while
   * paused or drained).
   */
  private void applyRequestsWithoutWorkers() {
    for (TableRequest r : store.tableRequests()) {
      TableState s = store.tableState(r.table()).orElse(null);
      if (s == null) {
        LOG.warn(
            "pipeline {}: {} of table {} ignored: not in the pipeline",
            config.pipelineId(),
            r.action(),
            r.table());
      } else if (r.action() == TableRequest.Action.RESYNC) {
        store.resetTableState(r.table());
        LOG.info(
            "pipeline {}: table {} is copied again (requested)", config.pipelineId(), r.table());
      } else if (s instanceof TableState.Errored) {
        store.rollbackTableState(r.table());
        LOG.info(
            "pipeline {}: errored table {} is retried (requested)", config.pipelineId(), r.table());
      } else {
        LOG.warn(
            "pipeline {}: retry of table {} ignored: it is {}, not errored",
            config.pipelineId(),
            r.table(),
            s.type());
      }
      store.completeTableRequest(r.id());
    }
  }

  /** Hands new operator requests to the running generation's apply worker. */
  private void forwardRequests(Generation g) {
    List<TableRequest> pending = store.tableRequests();
    Set<Long> ids = new HashSet<>();
    for (TableRequest r : pending) {
      ids.add(r.id());
      if (forwardedRequests.add(r.id())) {
        g.ctx.commands.add(
            new TableCommand(
                r.action() == TableRequest.Action.RESYNC
                    ? TableCommand.Kind.RESYNC
                    : TableCommand.Kind.RETRY,
                r.table(),
                board.name(r.table()),
                r.id()));
      }
    }
    forwardedRequests.retainAll(ids);
  }

  /**
   * Reads the publication's tables again (every {@code publicationRefreshInterval}) and hands the
   * tables that joined or left it to the running generation's apply worker.
   */
  private void refreshPublication(Generation g) {
    long now = ticker.nanoTime();
    if (now - lastPublicationRefresh < config.publicationRefreshInterval().toNanos()) {
      return;
    }
    lastPublicationRefresh = now;
    try {
      if (lagConnection == null || lagConnection.isClosed()) {
        lagConnection = connector.openPlain(ApplicationNames.catalog(config.pipelineId()));
      }
      PgCatalog catalog = new PgCatalog(lagConnection);
      List<TableId> published = catalog.publicationTables(config.publication());
      Map<TableId, TableState> known = g.ctx.tables.snapshot();
      List<TableId> joined = new ArrayList<>();
      for (TableId t : published) {
        if (!known.containsKey(t)) {
          joined.add(t);
        }
      }
      Map<TableId, TableName> names = catalog.tableNames(joined);
      for (TableId t : joined) {
        g.ctx.commands.add(new TableCommand(TableCommand.Kind.ADD, t, names.get(t), 0));
      }
      Set<TableId> publishedSet = new HashSet<>(published);
      for (TableId t : known.keySet()) {
        if (!publishedSet.contains(t)) {
          g.ctx.commands.add(new TableCommand(TableCommand.Kind.REMOVE, t, board.name(t), 0));
        }
      }
    } catch (SQLException | EtlException e) {
      LOG.debug("pipeline {}: publication refresh failed: {}", config.pipelineId(), e.getMessage());
      closeLagConnection();
    }
  }

  /**
   * Asks for a table to be copied again, or an errored table to be retried: now in the running
   * pipeline, else at the next start.
   *
   * @param name the table
   * @param action what to do
   * @param requestedBy who asks, for the log
   * @return the stored request
   * @throws EtlException when the table is not known or the store fails
   */
  public TableRequest request(TableName name, TableRequest.Action action, String requestedBy) {
    TableId table = resolve(name);
    TableRequest r = store.requestTableAction(table, action, requestedBy);
    LOG.info("pipeline {}: {} of table {} requested", config.pipelineId(), action, name);
    return r;
  }

  private TableId resolve(TableName name) {
    for (TableId t : store.tableStates().keySet()) {
      if (name.equals(board.name(t))) {
        return t;
      }
    }
    try (Connection c = connector.openPlain(ApplicationNames.catalog(config.pipelineId()));
        PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)::oid::bigint")) {
      ps.setString(1, name.quoted());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        long oid = rs.getLong(1);
        if (rs.wasNull() || !store.tableStates().containsKey(new TableId(oid))) {
          throw new EtlException(
              ErrorKind.CONFIG_ERROR,
              "table " + name + " is not part of pipeline " + config.pipelineId(),
              "the pipeline's tables are those of publication " + config.publication());
        }
        return new TableId(oid);
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not look up table " + name);
    }
  }

  // ---- supervisor

  private void supervise() {
    try {
      while (!shutdown.isRequested()) {
        if (epoch == 0 && !awaitLease()) {
          break;
        }
        if (epoch == 0) {
          continue; // a takeover interrupted by shutdown
        }
        if (runActive()) {
          break;
        }
        // the lease was lost: back to standby, with the generation fenced
        stopGeneration(StopSignal.Mode.FENCED);
        epoch = 0;
        setPhase(Phase.STANDBY);
        // the standbys that saw the lease free have priority: this instance, which just lost it,
        // tries again only after each of them had two chances (they try every check interval)
        if (pause(config.leaseCheckInterval().multipliedBy(2))) {
          break;
        }
      }
      setPhase(Phase.STOPPING);
      stopGeneration(StopSignal.Mode.DRAIN);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopGeneration(StopSignal.Mode.DRAIN);
    } catch (RuntimeException | Error e) {
      LOG.error("pipeline {}: supervisor died", config.pipelineId(), e);
      errors.fatal(
          new EtlException(ErrorKind.WORKER_PANIC, "pipeline supervisor died", e.toString(), e));
      stopGeneration(StopSignal.Mode.DRAIN);
    } finally {
      finish();
    }
  }

  /**
   * Standby: tries to take the lease every {@code leaseCheckInterval} until it is free, then takes
   * over. Returns false when shutdown was requested first.
   */
  private boolean awaitLease() throws InterruptedException {
    while (!shutdown.isRequested()) {
      try {
        Optional<Long> acquired = lease.tryAcquire();
        if (acquired.isPresent()) {
          takeOver(acquired.get(), false);
          return true;
        }
        board.leaseHolder(lease.holder().orElse(null));
      } catch (EtlException e) {
        if (e.directive() != org.pgetl.error.RetryDirective.TIMED) {
          throw e;
        }
        errors.record(e);
        LOG.warn(
            "pipeline {}: standby cannot reach the store: {}", config.pipelineId(), e.getMessage());
      }
      if (pause(config.leaseCheckInterval())) {
        return false;
      }
    }
    return false;
  }

  /**
   * The active instance's loop: follows the lifecycle, runs generations of workers. Returns true
   * when shutdown was requested (or the pipeline failed), false when the lease was lost.
   */
  private boolean runActive() throws InterruptedException {
    while (true) {
      if (leaseLost) {
        return false;
      }
      LifecycleState wanted = pollLifecycle();
      if (shutdown.isRequested()) {
        return true;
      }
      try {
        if (runOnce(wanted)) {
          return true;
        }
      } catch (EtlException e) {
        if (e.directive() != org.pgetl.error.RetryDirective.TIMED) {
          throw e;
        }
        // the store or the source is away for now: the next poll tries again
        errors.record(e);
        LOG.warn("pipeline {}: {}; retrying", config.pipelineId(), e.getMessage());
      }
      if (leaseLost) {
        return false;
      }
      if (pause(config.lifecyclePollInterval())) {
        return true;
      }
    }
  }

  /**
   * One poll of the active instance: follows the lifecycle, restarts an ended generation, reads
   * requests and the publication, samples the lag. Returns true when the pipeline must stop.
   */
  private boolean runOnce(@Nullable LifecycleState wanted) throws InterruptedException {
    try {
      return pollOnce(wanted);
    } finally {
      // a generation that starts later reads the publication's tables again
      PgConnector.closeQuietly(takeoverCatalog);
      takeoverCatalog = null;
    }
  }

  private boolean pollOnce(@Nullable LifecycleState wanted) throws InterruptedException {
    Generation g = generation;
    if (g != null && !g.apply.isAlive()) {
      // the apply worker ended by itself: a fatal failure, a destination shutdown, or a lost
      // slot to recreate
      stopGeneration(StopSignal.Mode.DRAIN);
      if (errors.fatal() != null || shutdown.isRequested()) {
        return true;
      }
      if (g.ctx.resyncReason() != null) {
        try {
          resync(g.ctx.resyncReason());
        } catch (EtlException e) {
          if (e.directive() != org.pgetl.error.RetryDirective.TIMED) {
            throw e;
          }
          // the next generation finds the slot gone again and asks again
          LOG.warn(
              "pipeline {}: could not reset the tables yet ({})",
              config.pipelineId(),
              e.getMessage());
          errors.record(e);
        }
      }
      g = null;
    }
    if (wanted == null) {
      // the lifecycle was never read: the destination may be paused or retired
      setPhase(Phase.STARTING);
      return false;
    }
    switch (wanted) {
      case ACTIVE -> {
        lastRetainedWarning = 0;
        if (g == null && phase != Phase.RETIRED && !leaseLost) {
          startGeneration();
        }
      }
      case PAUSED -> {
        if (g != null) {
          stopGeneration(StopSignal.Mode.DISCARD);
          LOG.warn(
              "pipeline {}: paused; replication connections closed, slot {} kept (WAL is"
                  + " retained)",
              config.pipelineId(),
              SlotNames.apply(config.pipelineId()));
        }
        setPhase(Phase.PAUSED);
        warnRetainedWal();
      }
      case DRAINING -> {
        if (g != null) {
          Map<TableId, TableState> before = g.ctx.tables.snapshot();
          boolean clean = stopGeneration(StopSignal.Mode.DRAIN);
          String notCopied = notCopied(before, g.ctx.tables.snapshot());
          if (clean && notCopied == null) {
            LOG.warn(
                "pipeline {}: drain complete: everything read up to {} is durable at the"
                    + " destination; connections released",
                config.pipelineId(),
                board.applyLsn());
          } else {
            LOG.warn(
                "pipeline {}: drain NOT complete ({}): events after {} were not all made"
                    + " durable; set the destination active to deliver them before retiring"
                    + " it",
                config.pipelineId(),
                notCopied != null && clean
                    ? notCopied
                    : lastStopProblem != null ? lastStopProblem : "see the errors above",
                board.applyLsn());
          }
        }
        setPhase(Phase.DRAINED);
      }
      case RETIRED -> {
        if (phase != Phase.RETIRED) {
          if (g != null) {
            stopGeneration(StopSignal.Mode.DISCARD);
          }
          retire();
        }
      }
    }
    if (leaseLost) {
      return false;
    }
    Generation running = generation;
    try {
      if (running != null && running.apply.isAlive()) {
        forwardRequests(running);
        refreshPublication(running);
      } else if (wanted != LifecycleState.RETIRED) {
        applyRequestsWithoutWorkers();
      }
    } catch (EtlException e) {
      if (e.directive() != org.pgetl.error.RetryDirective.TIMED) {
        throw e;
      }
      // the store or the source is away: requests wait for the next poll
      LOG.debug("pipeline {}: requests not read: {}", config.pipelineId(), e.getMessage());
    }
    sampleLag();
    return false;
  }

  /**
   * Names the tables a drain left without a finished copy (a copy interrupted, or not started), or
   * returns null when every table was synced.
   */
  private static @Nullable String notCopied(
      Map<TableId, TableState> before, Map<TableId, TableState> after) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<TableId, TableState> e : after.entrySet()) {
      TableState.Type t = e.getValue().type();
      if (t != TableState.Type.READY && t != TableState.Type.SYNC_DONE) {
        TableState was = before.get(e.getKey());
        out.add(
            e.getKey()
                + " "
                + t.name().toLowerCase(java.util.Locale.ROOT)
                + (was != null && was.isSyncing() && t != TableState.Type.ERRORED
                    ? " (copy interrupted)"
                    : ""));
      }
    }
    return out.isEmpty() ? null : "tables not copied: " + String.join(", ", out);
  }

  /**
   * The apply slot was lost and the configuration says to recreate it: with the generation's
   * workers stopped, drop what is left of the slot, reset every table to {@code Init} and let the
   * next generation create a new slot and copy everything again.
   */
  private void resync(String reason) {
    String pipelineId = config.pipelineId();
    try (Connection c = connector.openPlain(ApplicationNames.catalog(pipelineId))) {
      new SlotAdmin(c, ticker).dropIfExists(SlotNames.apply(pipelineId), SlotAdmin.DROP_TIMEOUT);
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not drop the lost apply slot of pipeline " + pipelineId);
    }
    store.resetAllTablesForResync();
    LOG.warn("pipeline {}: {}; every table is reset to init and copied again", pipelineId, reason);
  }

  private void finish() {
    closeLagConnection();
    PgConnector.closeQuietly(takeoverCatalog);
    takeoverCatalog = null;
    try {
      if (destinationStarted) {
        destination.shutdown();
      }
    } catch (RuntimeException e) {
      shutdownFailure =
          EtlException.wrap(
              ErrorKind.DESTINATION_ERROR,
              "destination " + destination.name() + " failed to shut down",
              e);
      errors.record(shutdownFailure);
    }
    // released last, after the destination shut down: the next instance may act at once
    lease.close();
    epoch = 0;
    setPhase(errors.fatal() != null ? Phase.FAILED : Phase.STOPPED);
    LOG.info("pipeline {}: {}", config.pipelineId(), phase == Phase.FAILED ? "failed" : "stopped");
    listeners.stopped(failure(), Duration.ofSeconds(5));
    terminated.countDown();
  }

  /** Reads the lifecycle row; null while no read ever succeeded. */
  private @Nullable LifecycleState readLifecycle() {
    try {
      return lifecycle.apply(store.readLifecycle(destination.name()));
    } catch (EtlException e) {
      return lifecycle.readFailed(e);
    }
  }

  private @Nullable LifecycleState lastLifecycle;

  private @Nullable LifecycleState pollLifecycle() {
    LifecycleState s = readLifecycle();
    if (s != null) {
      metrics.lifecycleState(s);
      if (s != lastLifecycle) {
        listeners.lifecycleChanged(lastLifecycle, s);
        lastLifecycle = s;
      }
    }
    return s;
  }

  private void startGeneration() {
    try {
      startGenerationOnce();
    } catch (EtlException e) {
      if (e.directive() != org.pgetl.error.RetryDirective.TIMED) {
        throw e;
      }
      LOG.warn(
          "pipeline {}: could not start the workers ({}); retrying in {}",
          config.pipelineId(),
          e.getMessage(),
          config.lifecyclePollInterval());
      errors.record(e);
    }
  }

  private void startGenerationOnce() {
    StopSignal stop = new StopSignal(ticker);
    StreamSettings settings;
    // one connection for both reads: each connection costs a login on the path to the first row
    String reading = "the publication's tables";
    // right after a takeover, its connection, with the publication's tables just read
    Connection fresh = takeoverCatalog;
    takeoverCatalog = null;
    try (Connection c =
            fresh != null
                ? fresh
                : connector.openPlain(ApplicationNames.catalog(config.pipelineId()));
        CatalogSchemaResolver resolver =
            new CatalogSchemaResolver(connector, ApplicationNames.catalog(config.pipelineId()))) {
      PgCatalog catalog = new PgCatalog(c);
      if (fresh == null) {
        // the publication may have changed while no generation ran (paused, reconnecting)
        reconcile(c, catalog, catalog.publicationTables(config.publication()));
      }
      reading = "the source's settings";
      settings = ApplyWorker.decide(config, catalog.serverVersion(), c, resolver);
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read " + reading);
    }
    TableStateMachine tables = new TableStateMachine(store);
    tables.onChange(
        (t, from, to) -> {
          if (to != null) {
            metrics.tableState(tableLabel(t), to.type());
          }
          listeners.tableStateChanged(t, board.name(t), from, to);
        });
    tables.snapshot().forEach((t, s) -> metrics.tableState(tableLabel(t), s.type()));
    forwardedRequests.clear();
    EngineContext ctx =
        new EngineContext(
            config,
            store,
            destination,
            metrics,
            shutdown,
            connector,
            tables,
            stop,
            settings,
            errors,
            board,
            spool,
            ticker,
            TableSyncWorker::runFor);
    resumeChunkedCopies(ctx);
    Thread apply = new Thread(new ApplyWorker(ctx), "pgetl-apply-" + config.pipelineId());
    apply.setDaemon(true);
    generation = new Generation(ctx, apply);
    setPhase(Phase.RUNNING);
    apply.start();
  }

  /**
   * Hands the tables whose chunked copy was under way to the apply stream before it starts: it
   * applies their changes from its first message on, as it did before the restart. A chunked copy
   * that cannot go on (the destination or the source no longer allows it) is dropped; its table is
   * copied from scratch.
   */
  private void resumeChunkedCopies(EngineContext ctx) {
    for (Map.Entry<TableId, TableState> e : ctx.tables.snapshot().entrySet()) {
      TableId table = e.getKey();
      TableState.Type type = e.getValue().type();
      if (type != TableState.Type.DATA_SYNC && type != TableState.Type.ERRORED) {
        continue;
      }
      List<PipelineStore.ChunkRecord> chunks = store.chunks(table);
      if (chunks.isEmpty()) {
        continue;
      }
      Optional<org.pgetl.core.internal.chunk.ChunkKey> key =
          store.tableSchema(table, Lsn.MAX).flatMap(org.pgetl.core.internal.chunk.ChunkKey::of);
      if (key.isPresent() && destination.supportsChunkedCopy() && ctx.streams.messages()) {
        ctx.chunks.activate(table, chunks.get(0).attemptId(), key.get(), chunks);
      } else {
        LOG.info(
            "pipeline {}: the chunked copy of table {} cannot resume; it is copied from scratch",
            config.pipelineId(),
            table);
        store.deleteChunks(table);
      }
    }
  }

  /** Stops the current generation; returns true when nothing was left unanswered or failed. */
  private boolean stopGeneration(StopSignal.Mode mode) {
    Generation g = generation;
    if (g == null) {
      return true;
    }
    g.ctx.stop.request(mode);
    // answers get shutdownTimeout; statements blocked in the server are aborted at once; the
    // margin covers the slot drops and the last status update
    long deadline = ticker.nanoTime() + config.shutdownTimeout().plus(STOP_MARGIN).toNanos();
    List<Thread> left = new ArrayList<>();
    if (!joinUntil(g.apply, deadline, ticker)) {
      left.add(g.apply);
    }
    left.addAll(g.ctx.pool.awaitAll(deadline));
    generation = null;
    if (!left.isEmpty()) {
      StringBuilder names = new StringBuilder();
      for (Thread t : left) {
        StackTraceElement[] stack = t.getStackTrace();
        names
            .append(names.length() == 0 ? "" : ", ")
            .append(t.getName())
            .append(stack.length > 0 ? " at " + stack[0] : "");
      }
      g.ctx.stop.noteIncomplete("worker threads did not stop in time: " + names);
      LOG.error(
          "pipeline {}: worker threads did not stop within {}: {}; they are left behind",
          config.pipelineId(),
          config.shutdownTimeout().plus(STOP_MARGIN),
          names);
    }
    lastStopProblem = g.ctx.stop.incompleteReason();
    return errors.fatal() == null && lastStopProblem == null;
  }

  private String tableLabel(TableId table) {
    TableName name = board.name(table);
    return name != null ? name.toString() : table.toString();
  }

  private void retire() {
    String pipelineId = config.pipelineId();
    LOG.warn(
        "pipeline {}: destination {} retired; dropping slots and state",
        pipelineId,
        destination.name());
    try (Connection c = connector.openPlain(ApplicationNames.catalog(pipelineId))) {
      SlotAdmin slots = new SlotAdmin(c, ticker);
      slots.dropIfExists(SlotNames.apply(pipelineId), SlotAdmin.DROP_TIMEOUT);
      for (SlotInfo s : slots.listByPrefix(SlotNames.tableSyncPrefix(pipelineId))) {
        slots.dropIfExists(s.slotName(), SlotAdmin.DROP_TIMEOUT);
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not drop the slots of retired pipeline " + pipelineId);
    }
    store.deletePipelineState();
    setPhase(Phase.RETIRED);
  }

  private long lastRetainedWarning;

  /** While paused, the slot retains WAL: say how much, every {@link #RETAINED_WARNING_EVERY}. */
  private void warnRetainedWal() {
    long now = ticker.nanoTime();
    if (lastRetainedWarning != 0 && now - lastRetainedWarning < RETAINED_WARNING_EVERY.toNanos()) {
      return;
    }
    lastRetainedWarning = now;
    sampleLag();
    LOG.warn(
        "pipeline {}: paused; slot {} retains {} bytes of WAL (resume, or retire the destination to"
            + " release it)",
        config.pipelineId(),
        SlotNames.apply(config.pipelineId()),
        board.lagBytes() < 0 ? "an unknown number of" : Long.toString(board.lagBytes()));
  }

  private @Nullable Connection lagConnection;
  private volatile @Nullable String lastStopProblem;

  /**
   * Samples the server's WAL end against the apply slot's confirmed position, on one connection
   * kept open by the supervisor (opened again after a failure).
   */
  private void sampleLag() {
    try {
      if (lagConnection == null || lagConnection.isClosed()) {
        lagConnection = connector.openPlain(ApplicationNames.catalog(config.pipelineId()));
      }
      String waitEvent = null;
      try (PreparedStatement ps =
          lagConnection.prepareStatement(
              "SELECT pg_current_wal_lsn()::text, s.confirmed_flush_lsn::text, a.wait_event"
                  + " FROM pg_replication_slots s"
                  + " LEFT JOIN pg_stat_activity a ON a.pid = s.active_pid"
                  + " WHERE s.slot_name = ?")) {
        ps.setString(1, SlotNames.apply(config.pipelineId()));
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            Lsn end = Lsn.parse(rs.getString(1));
            String confirmed = rs.getString(2);
            waitEvent = rs.getString(3);
            long lag = confirmed == null ? -1 : end.bytesSince(Lsn.parse(confirmed));
            board.lag(lag);
            if (lag >= 0) {
              metrics.lagBytes(lag);
            }
          }
        }
      }
      String held =
          StandbyWait.EVENT.equals(waitEvent) ? StandbyWait.describe(lagConnection) : null;
      if (!java.util.Objects.equals(held, board.heldBy())) {
        if (held != null) {
          LOG.warn("pipeline {}: {}", config.pipelineId(), held);
        } else if (board.heldBy() != null) {
          LOG.info("pipeline {}: no standby holds the apply stream any more", config.pipelineId());
        }
      }
      board.heldBy(held);
      metrics.heldByStandby(held != null);
    } catch (SQLException | EtlException e) {
      LOG.debug("pipeline {}: lag sample failed: {}", config.pipelineId(), e.getMessage());
      closeLagConnection();
    }
  }

  private void closeLagConnection() {
    PgConnector.closeQuietly(lagConnection);
    lagConnection = null;
  }

  /** Joins a thread until the deadline (a reading of {@code ticker}); true when it ended. */
  static boolean joinUntil(Thread t, long deadlineNanos, Ticker ticker) {
    boolean interrupted = false;
    try {
      while (t.isAlive()) {
        long left = deadlineNanos - ticker.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          t.join(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      return true;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  // ---- termination and status

  /**
   * Waits until the pipeline stopped.
   *
   * @param timeout the longest wait
   * @return true when it stopped
   * @throws InterruptedException when interrupted
   */
  public boolean awaitTermination(Duration timeout) throws InterruptedException {
    return terminated.await(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /**
   * Returns the failure that stopped the pipeline, with the destination's shutdown failure and
   * other workers' failures suppressed in it.
   *
   * @return the failure, or empty after a clean stop
   */
  public Optional<EtlException> failure() {
    EtlException fatal = errors.fatal();
    if (fatal == null) {
      return Optional.ofNullable(shutdownFailure);
    }
    if (shutdownFailure != null && fatal != shutdownFailure) {
      boolean already = false;
      for (Throwable t : fatal.getSuppressed()) {
        already |= t == shutdownFailure;
      }
      if (!already) {
        fatal.addSuppressed(shutdownFailure);
      }
    }
    return Optional.of(fatal);
  }

  /**
   * Returns the phase.
   *
   * @return the phase
   */
  public Phase phase() {
    return phase;
  }

  /**
   * Returns the effective lifecycle state.
   *
   * @return the state, or null while no read of the lifecycle ever succeeded
   */
  public @Nullable LifecycleState lifecycleState() {
    return lifecycle.state();
  }

  /**
   * Returns the pipeline's status from memory only.
   *
   * @return the status
   */
  public org.pgetl.PipelineStatus status() {
    Map<TableId, org.pgetl.PipelineStatus.TableStatus> out = new LinkedHashMap<>();
    for (Map.Entry<TableId, Map.Entry<TableName, TableState>> e : tables().entrySet()) {
      out.put(
          e.getKey(),
          new org.pgetl.PipelineStatus.TableStatus(
              e.getValue().getKey(),
              e.getValue().getValue(),
              board.rowsCopied(e.getKey()),
              board.chunkProgress(e.getKey())));
    }
    List<String> recent = new ArrayList<>();
    for (EtlException e : errors.recent()) {
      recent.add(e.getMessage());
    }
    long sampled = board.lagSampledAtMillis();
    org.pgetl.PipelineStatus.@Nullable LastError lastError = null;
    List<EtlException> all = errors.recent();
    java.time.Instant lastAt = errors.lastAt();
    if (!all.isEmpty() && lastAt != null) {
      boolean tableErrored =
          out.values().stream().anyMatch(t -> t.state().type() == TableState.Type.ERRORED);
      boolean recovered =
          board.progressedAtMillis() > lastAt.toEpochMilli()
              && !tableErrored
              && phase != Phase.FAILED
              && errors.fatal() == null;
      lastError =
          new org.pgetl.PipelineStatus.LastError(
              String.valueOf(all.get(all.size() - 1).getMessage()), lastAt, recovered);
    }
    return new org.pgetl.PipelineStatus(
        config.pipelineId(),
        phase,
        lifecycle.state(),
        out,
        board.applyLsn(),
        board.lagBytes(),
        board.lagTime(ticker.now().toEpochMilli()),
        sampled == 0 ? null : java.time.Instant.ofEpochMilli(sampled),
        recent,
        epoch,
        epoch == 0 ? board.leaseHolder() : null,
        lastError,
        board.heldBy());
  }

  /**
   * Returns the current states of the tables with their names when known.
   *
   * @return per table, its name (null when unknown) and state
   */
  public Map<TableId, Map.Entry<TableName, TableState>> tables() {
    Generation g = generation;
    // both read memory only: the live states, or the store's cache of the stored ones
    Map<TableId, TableState> states = g != null ? g.ctx.tables.snapshot() : store.tableStates();
    Map<TableId, Map.Entry<TableName, TableState>> out = new LinkedHashMap<>();
    for (Map.Entry<TableId, TableState> e : states.entrySet()) {
      TableName name = board.name(e.getKey());
      out.put(e.getKey(), new java.util.AbstractMap.SimpleImmutableEntry<>(name, e.getValue()));
    }
    return out;
  }

  /**
   * Returns the last sampled lag in bytes (server WAL end minus the slot's confirmed flush).
   *
   * @return the lag, or -1 when unknown
   */
  public long lagBytes() {
    return board.lagBytes();
  }

  /**
   * Returns the recent failures.
   *
   * @return the failures, oldest first
   */
  public List<EtlException> recentErrors() {
    return new ArrayList<>(errors.recent());
  }

  /**
   * Returns the pipeline's stored apply progress.
   *
   * @return the durable LSN of the apply stream
   */
  public Lsn applyLsn() {
    return board.applyLsn();
  }

  private final class Context implements DestinationContext {
    @Override
    public String pipelineId() {
      return config.pipelineId();
    }

    @Override
    public DestinationTableMetadataStore tableMetadata() {
      return store;
    }

    @Override
    public void requestShutdown() {
      shutdown.request();
    }

    @Override
    public long epoch() {
      return epoch;
    }
  }
}
