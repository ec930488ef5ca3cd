package org.pgetl.core.internal.preflight;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.PgErrors;
import org.pgetl.core.internal.pg.PublicationInfo;
import org.pgetl.core.internal.pg.PublishedTable;
import org.pgetl.core.internal.pg.ServerVersion;
import org.pgetl.core.internal.pg.SlotAdmin;
import org.pgetl.core.internal.pg.SlotInfo;
import org.pgetl.core.internal.pg.SlotNames;
import org.pgetl.core.internal.pg.StandbyWait;
import org.pgetl.destination.Destination;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.PipelineStore.TableRequest;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the preflight checks of {@code org.pgetl.Preflight} over one plain connection to the source
 * and the pipeline's store, reading only.
 *
 * <p>Implementation notes. The checks run in a fixed order and each catches its own failure, so
 * that one run reports every problem it can see; a check that needs what an earlier one could not
 * provide (the connection, the publication's tables, the stored table states) is skipped, never
 * failed a second time. The tables checked for {@code SELECT} and replica identity are the ones the
 * copy reads and PostgreSQL checks on UPDATE: for each published table its leaf partitions ({@link
 * PgCatalog#partitionLeaves}), or the table itself; a table that {@code tableCopy} leaves out needs
 * no {@code SELECT}. When the destination is retired at start the pipeline replicates nothing, only
 * drops its slots and state: then only the connection and the store are checked, and a publication
 * dropped during the decommissioning does not block the clean-up.
 */
public final class PreflightRunner {
  private static final Logger LOG = LoggerFactory.getLogger(PreflightRunner.class);

  static final String CONNECTION = "source connection";
  static final String WAL_LEVEL = "wal_level";
  static final String ROLE = "replication privilege";
  static final String PUBLICATION = "publication";
  static final String SELECT = "SELECT privilege";
  static final String IDENTITY = "replica identity";
  static final String STORE = "state store";
  static final String FAILOVER = "failover";
  static final String DESTINATION = "destination";

  static final PreflightMessages.Resource SLOTS =
      new PreflightMessages.Resource(
          "replication slots", "max_replication_slots", "the apply slot");
  static final PreflightMessages.Resource SENDERS =
      new PreflightMessages.Resource("WAL senders", "max_wal_senders", "the apply stream");

  private final PipelineConfig config;
  private final PipelineStore store;
  private final PgConnector connector;
  private final @Nullable Destination destination;

  /** What the publication check found, for the checks that follow it. */
  private record Publication(
      PublicationInfo info,
      Map<TableId, PublishedTable> tables,
      Map<TableId, TableName> names,
      Map<TableId, List<TableId>> reads) {}

  /** A table the copy reads, as the catalog describes it. */
  private record Physical(
      TableId id,
      String sqlName,
      boolean canSelect,
      char replident,
      boolean hasPrimaryKey,
      boolean hasIdentityIndex) {}

  /**
   * Creates a runner.
   *
   * @param config the pipeline's configuration
   * @param store the pipeline's store
   * @param connector connects to the source
   */
  public PreflightRunner(PipelineConfig config, PipelineStore store, PgConnector connector) {
    this(config, store, connector, null);
  }

  /**
   * Creates a runner that also asks the destination whether it can hold the published tables
   * ({@link Destination#checkTables}).
   *
   * @param config the pipeline's configuration
   * @param store the pipeline's store
   * @param connector connects to the source
   * @param destination the pipeline's destination, or null to leave that check out
   */
  public PreflightRunner(
      PipelineConfig config,
      PipelineStore store,
      PgConnector connector,
      @Nullable Destination destination) {
    this.config = config;
    this.store = store;
    this.connector = connector;
    this.destination = destination;
  }

  /**
   * Runs the checks of a start and throws when one failed.
   *
   * @param retiring whether the destination is retired at start (then only the connection and the
   *     store are checked)
   * @throws EtlException naming every failed check ({@link CheckResult#failureOf})
   */
  public void require(boolean retiring) {
    require(retiring, null);
  }

  /**
   * Runs the checks of a start on a connection the caller opened (and closes), and throws when one
   * failed.
   *
   * @param retiring whether the destination is retired at start (then only the connection and the
   *     store are checked)
   * @param connection a connection to the source, or null to open one (a failure to open it is the
   *     connection check's)
   * @throws EtlException naming every failed check ({@link CheckResult#failureOf})
   */
  public void require(boolean retiring, @Nullable Connection connection) {
    List<CheckResult> checks = run(retiring, connection);
    Optional<EtlException> failure = CheckResult.failureOf(checks);
    if (failure.isPresent()) {
      throw failure.get();
    }
    LOG.info("pipeline {}: preflight checks passed", config.pipelineId());
  }

  /**
   * Runs every check.
   *
   * @param retiring whether the destination is retired at start (then only the connection and the
   *     store are checked)
   * @return one result per check, in order
   */
  public List<CheckResult> run(boolean retiring) {
    return run(retiring, null);
  }

  private List<CheckResult> run(boolean retiring, @Nullable Connection borrowed) {
    List<CheckResult> out = new ArrayList<>();
    Connection c = null;
    try {
      try {
        c =
            borrowed != null
                ? borrowed
                : connector.openPlain(ApplicationNames.catalog(config.pipelineId()));
        out.add(ok(CONNECTION, connected(c)));
      } catch (EtlException e) {
        out.add(fail(CONNECTION, e));
      }
      String noSource = c == null ? "needs a connection to the source" : null;
      if (retiring) {
        noSource = "the destination is retired: the pipeline only drops its slots and state";
      }
      String role = null;
      Publication publication = null;
      if (noSource != null) {
        for (String name : List.of(WAL_LEVEL, ROLE, PUBLICATION, SELECT, IDENTITY)) {
          out.add(skip(name, noSource));
        }
        if (destination != null) {
          out.add(skip(DESTINATION, noSource));
        }
      } else if (c != null) { // as noSource says
        out.add(walLevel(c));
        role = roleName(c);
        out.add(role(c));
        try {
          publication = publication(new PgCatalog(c));
          out.add(publicationCheck(publication));
        } catch (EtlException e) {
          out.add(fail(PUBLICATION, e));
        }
        if (publication == null) {
          out.add(skip(SELECT, "needs the publication"));
          out.add(skip(IDENTITY, "needs the publication"));
          if (destination != null) {
            out.add(skip(DESTINATION, "needs the publication"));
          }
        } else {
          Map<TableId, Physical> physical = null;
          try {
            physical = physical(c, publication);
          } catch (EtlException e) {
            out.add(fail(SELECT, e));
            out.add(skip(IDENTITY, "needs the tables' catalog entries"));
          }
          if (physical != null) {
            out.add(select(c, role, publication, physical));
            out.add(identity(publication, physical));
          }
          if (destination != null) {
            out.add(destinationCheck(destination, new PgCatalog(c), publication));
          }
        }
      }
      Map<TableId, TableState> states = null;
      List<TableRequest> requests = List.of();
      try {
        Optional<String> setup = store.setupNeeded();
        if (setup.isPresent()) {
          // nothing is stored before the set-up: every published table is new
          states = Map.of();
          out.add(ok(STORE, "state store: " + setup.get()));
        } else {
          states = store.loadTableStates();
          requests = store.tableRequests();
          Optional<Lsn> progress = store.progress(ProgressKey.apply());
          out.add(
              ok(
                  STORE,
                  "state store: reachable, "
                      + count(states.size(), "table state")
                      + ", apply progress "
                      + progress.map(Lsn::toString).orElse("none")));
        }
      } catch (RuntimeException e) {
        out.add(fail(STORE, storeError(e)));
      }
      String noCount =
          noSource != null
              ? noSource
              : publication == null
                  ? "needs the publication"
                  : states == null ? "needs the state store" : null;
      if (noCount != null) {
        out.add(skip(SLOTS.name(), noCount));
        out.add(skip(SENDERS.name(), noCount));
      } else if (c != null && publication != null && states != null) { // as noCount says
        int toCopy = tablesToCopy(publication.tables().keySet(), states, requests);
        out.add(slots(c, toCopy));
        out.add(senders(c, toCopy));
      }
      if (noSource != null) {
        out.add(skip(FAILOVER, noSource));
      } else if (c != null) {
        out.add(failover(c));
      }
      return out;
    } finally {
      if (c != null && c != borrowed) {
        try {
          c.close();
        } catch (SQLException e) {
          LOG.debug("pipeline {}: closing the preflight connection failed", config.pipelineId());
        }
      }
    }
  }

  private String connected(Connection c) {
    String version = queryString(c, "SELECT current_setting('server_version')", "server version");
    return "connected to "
        + config.source().describe()
        + " as "
        + config.source().user()
        + " (PostgreSQL "
        + version
        + ")";
  }

  private CheckResult walLevel(Connection c) {
    try {
      String level = queryString(c, "SELECT current_setting('wal_level')", "wal_level");
      if ("logical".equals(level)) {
        return ok(WAL_LEVEL, "wal_level = logical");
      }
      return fail(
          WAL_LEVEL,
          new EtlException(
              ErrorKind.SOURCE_WAL_LEVEL_NOT_LOGICAL,
              "wal_level is '"
                  + level
                  + "' on "
                  + config.source().describe()
                  + ": logical replication needs wal_level = logical"));
    } catch (EtlException e) {
      return fail(WAL_LEVEL, e);
    }
  }

  /** The role's name as SQL; the configured user name when the query fails. */
  private String roleName(Connection c) {
    try {
      return queryString(c, "SELECT quote_ident(current_user)", "the role's name");
    } catch (EtlException e) {
      return config.source().user();
    }
  }

  private CheckResult role(Connection c) {
    // Amazon RDS and Aurora grant replication through membership in rds_replication instead of
    // the REPLICATION attribute.
    String sql =
        "SELECT r.rolsuper, r.rolreplication, EXISTS (SELECT 1 FROM pg_roles g"
            + " WHERE g.rolname = 'rds_replication' AND pg_has_role(r.oid, g.oid, 'MEMBER')),"
            + " quote_ident(r.rolname)"
            + " FROM pg_roles r WHERE r.rolname = current_user";
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      if (!rs.next()) {
        throw new EtlException(
            ErrorKind.INVALID_STATE, "the current role is missing from pg_roles");
      }
      String name = rs.getString(4);
      if (rs.getBoolean(1)) {
        return ok(ROLE, "role " + name + " is a superuser");
      }
      if (rs.getBoolean(2)) {
        return ok(ROLE, "role " + name + " has REPLICATION");
      }
      if (rs.getBoolean(3)) {
        return ok(ROLE, "role " + name + " is a member of rds_replication");
      }
      return fail(
          ROLE,
          new EtlException(
              ErrorKind.PERMISSION_DENIED,
              "role "
                  + name
                  + " has neither REPLICATION nor SUPERUSER, which replication slots and"
                  + " connections need: ALTER ROLE "
                  + name
                  + " REPLICATION"));
    } catch (SQLException e) {
      return fail(ROLE, PgErrors.map(e, "could not read the role's attributes"));
    } catch (EtlException e) {
      return fail(ROLE, e);
    }
  }

  private Publication publication(PgCatalog catalog) {
    PublicationInfo info = catalog.requirePublication(config.publication());
    Map<TableId, PublishedTable> tables = catalog.publishedTables(config.publication());
    Map<TableId, TableName> names = catalog.tableNames(new ArrayList<>(tables.keySet()));
    Map<TableId, List<TableId>> reads = new LinkedHashMap<>();
    for (TableId t : tables.keySet()) {
      // as the table-sync worker's copy: the leaf partitions, or the table itself
      List<TableId> leaves = catalog.partitionLeaves(t);
      reads.put(t, leaves.isEmpty() ? List.of(t) : leaves);
    }
    return new Publication(info, tables, names, reads);
  }

  private CheckResult publicationCheck(Publication p) {
    if (p.tables().isEmpty()) {
      // as PostgreSQL's subscriber: the pipeline starts, and the publication watch copies each
      // table added later
      return warn(
          PUBLICATION,
          "publication "
              + config.publication()
              + " publishes no table ("
              + operations(p.info())
              + "): the pipeline starts, streams nothing and copies each table added later with"
              + " ALTER PUBLICATION "
              + config.publication()
              + " ADD TABLE ...");
    }
    return ok(
        PUBLICATION,
        "publication "
            + config.publication()
            + " publishes "
            + count(p.tables().size(), "table")
            + " ("
            + operations(p.info())
            + ")");
  }

  private static String operations(PublicationInfo p) {
    List<String> ops = new ArrayList<>();
    if (p.inserts()) {
      ops.add("insert");
    }
    if (p.updates()) {
      ops.add("update");
    }
    if (p.deletes()) {
      ops.add("delete");
    }
    if (p.truncates()) {
      ops.add("truncate");
    }
    return ops.isEmpty() ? "no operation" : String.join(", ", ops);
  }

  /** Reads the catalog entries of every table the publication makes the copy read. */
  private Map<TableId, Physical> physical(Connection c, Publication p) {
    List<Long> oids = new ArrayList<>();
    for (List<TableId> leaves : p.reads().values()) {
      for (TableId t : leaves) {
        oids.add(t.oid());
      }
    }
    String sql =
        "SELECT c.oid::bigint, quote_ident(n.nspname) || '.' || quote_ident(c.relname),"
            + " has_table_privilege(c.oid, 'SELECT'), c.relreplident::text,"
            + " EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary),"
            + " EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisreplident)"
            + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE c.oid = ANY (?::bigint[]::oid[])";
    Map<TableId, Physical> out = new LinkedHashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setArray(1, c.createArrayOf("bigint", oids.toArray(new Long[0])));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          TableId id = new TableId(rs.getLong(1));
          out.put(
              id,
              new Physical(
                  id,
                  rs.getString(2),
                  rs.getBoolean(3),
                  rs.getString(4).charAt(0),
                  rs.getBoolean(5),
                  rs.getBoolean(6)));
        }
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the published tables of " + config.publication());
    }
    return out;
  }

  private CheckResult select(
      Connection c, String role, Publication p, Map<TableId, Physical> physical) {
    List<String> missing = new ArrayList<>();
    int checked = 0;
    try {
      for (Map.Entry<TableId, List<TableId>> e : p.reads().entrySet()) {
        PublishedTable published = p.tables().get(e.getKey());
        TableName name = p.names().get(e.getKey());
        if (name != null && !config.tableCopy().shouldCopy(name)) {
          continue; // tableCopy leaves it out: nothing reads its rows
        }
        for (TableId t : e.getValue()) {
          Physical ph = physical.get(t);
          if (ph == null) {
            continue; // dropped since the publication was read
          }
          checked++;
          if (!ph.canSelect()
              && !canSelectColumns(c, t, published == null ? null : published.columnNames())) {
            missing.add(ph.sqlName());
          }
        }
      }
    } catch (EtlException e) {
      return fail(SELECT, e);
    }
    if (missing.isEmpty()) {
      return ok(SELECT, "SELECT on the " + count(checked, "table") + " the copy reads");
    }
    return fail(
        SELECT,
        new EtlException(
            ErrorKind.PERMISSION_DENIED,
            "role "
                + role
                + " has no SELECT on "
                + (missing.size() == 1 ? "table " : "tables ")
                + PreflightMessages.listed(missing)
                + ", which the copy of publication "
                + config.publication()
                + " reads: GRANT SELECT ON TABLE "
                + PreflightMessages.listed(missing)
                + " TO "
                + role));
  }

  /** Whether the role may read every column the copy reads, through column privileges. */
  private static boolean canSelectColumns(
      Connection c, TableId table, @Nullable List<String> columns) {
    String sql =
        "SELECT count(*) > 0 AND bool_and(has_column_privilege(a.attrelid, a.attnum, 'SELECT'))"
            + " FROM pg_attribute a WHERE a.attrelid = ?::bigint::oid AND a.attnum > 0"
            + " AND NOT a.attisdropped AND a.attgenerated = ''"
            + " AND (?::text[] IS NULL OR a.attname = ANY (?::text[]))";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, table.oid());
      java.sql.Array names =
          columns == null ? null : c.createArrayOf("text", columns.toArray(new String[0]));
      ps.setArray(2, names);
      ps.setArray(3, names);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read the column privileges of table " + table);
    }
  }

  private CheckResult identity(Publication p, Map<TableId, Physical> physical) {
    PublicationInfo info = p.info();
    if (!info.updates() && !info.deletes()) {
      return ok(
          IDENTITY,
          "publication "
              + config.publication()
              + " publishes neither UPDATE nor DELETE: no replica identity needed");
    }
    List<String> problems = new ArrayList<>();
    int checked = 0;
    for (List<TableId> leaves : p.reads().values()) {
      for (TableId t : leaves) {
        Physical ph = physical.get(t);
        if (ph == null) {
          continue;
        }
        checked++;
        String problem =
            PreflightMessages.replicaIdentityProblem(
                ph.sqlName(), ph.replident(), ph.hasPrimaryKey(), ph.hasIdentityIndex());
        if (problem != null) {
          problems.add(problem);
        }
      }
    }
    String what = PreflightMessages.changeOperations(info.updates(), info.deletes());
    if (problems.isEmpty()) {
      return ok(
          IDENTITY,
          "replica identity: "
              + (checked == 1 ? "the one table has one" : "all " + checked + " tables have one")
              + " (the publication publishes "
              + what
              + ")");
    }
    String listed =
        problems.size() <= PreflightMessages.MAX_NAMED
            ? String.join("; ", problems)
            : String.join("; ", problems.subList(0, PreflightMessages.MAX_NAMED))
                + "; and "
                + (problems.size() - PreflightMessages.MAX_NAMED)
                + " more tables";
    // PostgreSQL itself refuses UPDATE and DELETE on such a table at the source, so nothing it
    // commits is lost: the table is replicated as its own subscriber replicates it
    return warn(
        IDENTITY,
        count(problems.size(), "table")
            + " without a replica identity ("
            + (config.requireReplicaIdentity()
                ? "requireReplicaIdentity is on: such a table goes to its error state and is not"
                    + " copied; the other tables replicate"
                : "copied, INSERT and TRUNCATE replicated; PostgreSQL refuses "
                    + what
                    + " on such a table at the source while publication "
                    + config.publication()
                    + " publishes it")
            + "): "
            + listed);
  }

  /**
   * Asks the destination whether it can hold the published tables, with their replicated schemas as
   * a copy would read them now. A table whose schema cannot be built (a column list without its
   * identity columns) is left to the table's own copy, which fails it with that error.
   */
  private CheckResult destinationCheck(Destination d, PgCatalog catalog, Publication p) {
    List<ReplicatedTableSchema> schemas = new ArrayList<>();
    try {
      for (PublishedTable t : p.tables().values()) {
        try {
          schemas.add(catalog.replicatedTableSchema(t.table(), t.columnNames()));
        } catch (EtlException e) {
          if (e.kind() != ErrorKind.SOURCE_SCHEMA_ERROR
              && e.kind() != ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR) {
            throw e;
          }
          LOG.debug("pipeline {}: table {} left to its copy: {}", config.pipelineId(), t, e);
        }
      }
    } catch (EtlException e) {
      return fail(DESTINATION, e);
    }
    try {
      d.checkTables(List.copyOf(schemas));
    } catch (EtlException e) {
      return fail(DESTINATION, e);
    } catch (RuntimeException e) {
      return fail(
          DESTINATION,
          new EtlException(
              ErrorKind.DESTINATION_ERROR,
              "destination " + d.name() + " failed its check of the published tables",
              String.valueOf(e),
              e));
    }
    return ok(
        DESTINATION,
        "destination "
            + d.name()
            + ": can hold "
            + (schemas.size() == 1 ? "the one published table" : count(schemas.size(), "table")));
  }

  /**
   * Counts the tables that need a table-sync worker: new ones, ones being copied, ones waiting for
   * a timed retry, and the ones an operator asked to copy again or (errored) to retry, which the
   * start carries out.
   */
  static int tablesToCopy(
      Iterable<TableId> published, Map<TableId, TableState> states, List<TableRequest> requests) {
    Set<TableId> asked = new HashSet<>();
    for (TableRequest r : requests) {
      TableState s = states.get(r.table());
      if (r.action() == TableRequest.Action.RESYNC || s instanceof TableState.Errored) {
        asked.add(r.table());
      }
    }
    int n = 0;
    for (TableId t : published) {
      TableState s = states.get(t);
      if (s == null
          || asked.contains(t)
          || s.type() == TableState.Type.INIT
          || s.type() == TableState.Type.DATA_SYNC
          || s.type() == TableState.Type.FINISHED_COPY
          || (s instanceof TableState.Errored e && e.retry() == RetryDirective.TIMED)) {
        n++;
      }
    }
    return n;
  }

  private CheckResult slots(Connection c, int toCopy) {
    try {
      int max = queryInt(c, "SELECT current_setting('max_replication_slots')::int");
      int inUse = queryInt(c, "SELECT count(*)::int FROM pg_replication_slots");
      SlotAdmin admin = new SlotAdmin(c);
      boolean applyExists = admin.find(SlotNames.apply(config.pipelineId())).isPresent();
      int leftovers = 0;
      // the start drops the table-sync slots an earlier process left behind before it needs new
      for (SlotInfo s : admin.listByPrefix(SlotNames.tableSyncPrefix(config.pipelineId()))) {
        if (!s.active()
            && SlotNames.parseTableSync(s.slotName(), config.pipelineId()).isPresent()) {
          leftovers++;
        }
      }
      return PreflightMessages.capacity(
          SLOTS, max, inUse, leftovers, applyExists ? 0 : 1, toCopy, config.maxTableSyncWorkers());
    } catch (EtlException e) {
      return fail(SLOTS.name(), e);
    }
  }

  private CheckResult senders(Connection c, int toCopy) {
    try {
      int max = queryInt(c, "SELECT current_setting('max_wal_senders')::int");
      // pg_stat_activity hides the backend type of other roles' sessions from a role without
      // pg_read_all_stats; the walsender list shows every one
      int inUse = queryInt(c, "SELECT count(*)::int FROM pg_stat_get_wal_senders()");
      return PreflightMessages.capacity(
          SENDERS, max, inUse, 0, 1, toCopy, config.maxTableSyncWorkers());
    } catch (EtlException e) {
      return fail(SENDERS.name(), e);
    }
  }

  private EtlException storeError(RuntimeException e) {
    if (e instanceof EtlException etl
        && (etl.kind() == ErrorKind.STATE_STORE_ERROR
            || etl.kind() == ErrorKind.PERMISSION_DENIED)) {
      return etl;
    }
    return new EtlException(
        ErrorKind.STATE_STORE_ERROR,
        "the state store of pipeline " + config.pipelineId() + " could not be read",
        e instanceof EtlException etl ? etl.getMessage() : String.valueOf(e),
        e);
  }

  private static String count(int n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }

  private static String queryString(Connection c, String sql, String what) {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw PgErrors.map(e, "could not read " + what);
    }
  }

  private static int queryInt(Connection c, String sql) {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getInt(1);
    } catch (SQLException e) {
      throw PgErrors.map(e, "query failed: " + sql);
    }
  }

  /**
   * Whether the pipeline would survive a failover of the source: the apply slot is (or will be) a
   * failover slot, the standbys that stream from the source are listed in {@code
   * synchronized_standby_slots}, and each further host of the URL that is a standby holds a
   * synchronised copy of the apply slot. Warns, naming what is missing and the setting that fixes
   * it; never fails a start (a failover may never come).
   */
  private CheckResult failover(Connection c) {
    try {
      return failoverCheck(c);
    } catch (EtlException e) {
      if (e.kind() == ErrorKind.CONFIG_ERROR) {
        return fail(FAILOVER, e); // failoverSlots on before 17, as start() fails
      }
      return warn(FAILOVER, "could not read the failover settings: " + e.description());
    } catch (SQLException e) {
      return warn(FAILOVER, "could not read the failover settings: " + e.getMessage());
    }
  }

  private CheckResult failoverCheck(Connection c) throws SQLException {
    ServerVersion version = new PgCatalog(c).serverVersion();
    String slot = SlotNames.apply(config.pipelineId());
    List<String> found = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    boolean failover = version.failoverSlots(config.failoverSlots(), config.temporarySlots());
    String setting = "failoverSlots=" + config.failoverSlots().name().toLowerCase(Locale.ROOT);
    if (!failover) {
      if (config.temporarySlots()) {
        return ok(
            FAILOVER,
            "failover: temporary slots are never failover slots; a failover copies every table"
                + " again");
      }
      String why =
          version.supportsFailoverSlots()
              ? "the apply slot "
                  + slot
                  + " is no failover slot ("
                  + setting
                  + "): a promoted standby has no copy of it; set failoverSlots to auto or on"
                  + " (--failover-slots)"
              : "PostgreSQL "
                  + version
                  + " has no failover slots (17+): a promoted standby has no copy of the apply"
                  + " slot, and the pipeline must copy every table again after a failover"
                  + " (invalidatedSlotBehavior=RECREATE, --on-missing-slot recopy)";
      return warn(FAILOVER, "failover: " + why);
    }
    Boolean existing = null;
    try (PreparedStatement ps =
        c.prepareStatement("SELECT failover FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          existing = rs.getBoolean(1);
        }
      }
    }
    found.add(
        "PostgreSQL "
            + version
            + ", apply slot "
            + slot
            + (existing == null
                ? " will be a failover slot"
                : existing ? " is a failover slot" : " becomes a failover slot at start")
            + " ("
            + setting
            + ")");
    List<StandbyWait.ListedSlot> listed = StandbyWait.listedSlots(c);
    Set<String> listedNames = new HashSet<>();
    for (StandbyWait.ListedSlot l : listed) {
      listedNames.add(l.name());
    }
    found.add(
        "synchronized_standby_slots = "
            + (listed.isEmpty() ? "''" : "'" + String.join(",", listedNames) + "'"));
    for (StandbyWait.ListedSlot l : listed) {
      if (!l.exists()) {
        missing.add(
            "synchronized_standby_slots names slot "
                + l.name()
                + ", which does not exist: the apply stream waits for it (create the standby's"
                + " slot, or remove it from synchronized_standby_slots)");
      } else if (!l.active()) {
        missing.add(
            "no standby streams through slot "
                + l.name()
                + " of synchronized_standby_slots: the pipeline waits until one does");
      }
    }
    List<String> standbys = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT r.application_name, coalesce(host(r.client_addr), 'local'),"
                    + " s.slot_name FROM pg_stat_replication r"
                    + " LEFT JOIN pg_replication_slots s"
                    + " ON s.active_pid = r.pid AND s.slot_type = 'physical'"
                    + " WHERE r.state = 'streaming' OR r.state = 'catchup'")) {
      while (rs.next()) {
        String name = rs.getString(1) + " from " + rs.getString(2);
        String physical = rs.getString(3);
        if (physical == null) {
          // a logical walsender (a table copy, another subscriber) is no standby
          continue;
        }
        standbys.add(name + " (slot " + physical + ")");
        if (!listedNames.contains(physical)) {
          missing.add(
              "standby "
                  + name
                  + " streams through slot "
                  + physical
                  + ", which synchronized_standby_slots does not list: after a promotion of that"
                  + " standby the destination may hold changes the standby never received (add"
                  + " it: ALTER SYSTEM SET synchronized_standby_slots = '"
                  + physical
                  + "')");
        }
      }
    }
    found.add("standbys streaming: " + (standbys.isEmpty() ? "none" : String.join(", ", standbys)));
    List<PgConnectionConfig.HostPort> hosts = config.source().hosts();
    // a single server without standbys has no failover to survive: said, not warned about
    if (standbys.isEmpty() && (!listed.isEmpty() || hosts.size() > 1)) {
      missing.add(
          "no physical standby streams from this server (pg_stat_replication): nothing keeps a"
              + " copy of the apply slot to fail over to");
    }
    if (hosts.size() > 1) {
      for (PgConnectionConfig.HostPort h : hosts) {
        String other = otherHost(h, slot, missing);
        if (other != null) {
          found.add(other);
        }
      }
    }
    String summary = "failover: " + String.join("; ", found);
    if (missing.isEmpty()) {
      return ok(FAILOVER, summary);
    }
    return warn(FAILOVER, String.join("; ", missing) + " [" + summary + "]");
  }

  /**
   * Checks one host of a multi-host URL: when it is a standby, whether it holds a synchronised,
   * persistent copy of the apply slot. Returns what was found, or null for the primary.
   */
  private @Nullable String otherHost(
      PgConnectionConfig.HostPort h, String slot, List<String> missing) {
    String where = h.host() + ":" + h.port();
    PgConnectionConfig one =
        config.source().toBuilder()
            .host(h.host())
            .port(h.port())
            .additionalHosts(List.of())
            .targetServerType(PgConnectionConfig.TargetServerType.ANY)
            .build();
    try (Connection s =
            new PgConnector(one).openPlain(ApplicationNames.catalog(config.pipelineId()));
        Statement st = s.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT pg_is_in_recovery(), current_setting('sync_replication_slots', true),"
                    + " (SELECT synced::text || ',' || temporary::text FROM pg_replication_slots"
                    + " WHERE slot_name = "
                    + quoteLiteral(slot)
                    + ")")) {
      rs.next();
      if (!rs.getBoolean(1)) {
        return null; // the primary, checked above
      }
      String sync = rs.getString(2);
      String copy = rs.getString(3);
      if (!"on".equals(sync)) {
        missing.add(
            "standby "
                + where
                + " does not synchronise slots (sync_replication_slots = "
                + (sync == null ? "unknown" : sync)
                + "): set sync_replication_slots = on, hot_standby_feedback = on and a dbname in"
                + " its primary_conninfo");
        return "standby " + where + ": no slot synchronisation";
      }
      if (copy == null) {
        missing.add(
            "standby "
                + where
                + " has no copy of the apply slot "
                + slot
                + " yet (it appears once the slot exists on the primary and the standby caught up)");
        return "standby " + where + ": no copy of " + slot + " yet";
      }
      if (copy.equals("true,true")) {
        missing.add(
            "standby "
                + where
                + "'s copy of "
                + slot
                + " is not persistent yet (temporary): it becomes usable once the slot on the"
                + " primary moves past the standby's horizon");
        return "standby " + where + ": temporary copy of " + slot;
      }
      if (!copy.startsWith("true")) {
        missing.add(
            "standby "
                + where
                + " holds a slot "
                + slot
                + " that it does not synchronise (synced = false): drop it on the standby");
        return "standby " + where + ": unsynchronised slot " + slot;
      }
      return "standby " + where + " holds a synchronised copy of " + slot;
    } catch (SQLException | EtlException e) {
      return "host " + where + " not reachable (" + e.getMessage() + ")";
    }
  }

  private static String quoteLiteral(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  static CheckResult ok(String name, String summary) {
    return new CheckResult(name, CheckResult.Outcome.PASSED, summary, null);
  }

  static CheckResult fail(String name, EtlException failure) {
    return new CheckResult(name, CheckResult.Outcome.FAILED, failure.description(), failure);
  }

  static CheckResult warn(String name, String summary) {
    return new CheckResult(name, CheckResult.Outcome.WARNING, summary, null);
  }

  static CheckResult skip(String name, String reason) {
    return new CheckResult(name, CheckResult.Outcome.SKIPPED, reason, null);
  }
}
