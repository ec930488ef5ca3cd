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
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.pgetl.PipelineConfig;
import org.pgetl.Preflight;
import org.pgetl.Preflight.Check;
import org.pgetl.Preflight.Status;
import org.pgetl.core.internal.pg.ApplicationNames;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.pg.PgErrors;
import org.pgetl.core.internal.pg.PublicationInfo;
import org.pgetl.core.internal.pg.PublishedTable;
import org.pgetl.core.internal.pg.SlotAdmin;
import org.pgetl.core.internal.pg.SlotInfo;
import org.pgetl.core.internal.pg.SlotNames;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.PipelineStore.TableRequest;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the preflight checks of {@link Preflight} over one plain connection to the source and the
 * pipeline's store, reading only.
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

  static final PreflightMessages.Resource SLOTS =
      new PreflightMessages.Resource(
          "replication slots", "max_replication_slots", "the apply slot");
  static final PreflightMessages.Resource SENDERS =
      new PreflightMessages.Resource("WAL senders", "max_wal_senders", "the apply stream");

  private final PipelineConfig config;
  private final PipelineStore store;
  private final PgConnector connector;

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
    this.config = config;
    this.store = store;
    this.connector = connector;
  }

  /**
   * Runs the checks of a start and throws when one failed.
   *
   * @param retiring whether the destination is retired at start (then only the connection and the
   *     store are checked)
   * @throws EtlException naming every failed check ({@link Preflight#failure})
   */
  public void require(boolean retiring) {
    List<Check> checks = run(retiring);
    Optional<EtlException> failure = Preflight.failure(checks);
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
  public List<Check> run(boolean retiring) {
    List<Check> out = new ArrayList<>();
    Connection c = null;
    try {
      try {
        c = connector.openPlain(ApplicationNames.catalog(config.pipelineId()));
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
      return out;
    } finally {
      if (c != null) {
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

  private Check walLevel(Connection c) {
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

  private Check role(Connection c) {
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

  private Check publicationCheck(Publication p) {
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

  private Check select(Connection c, String role, Publication p, Map<TableId, Physical> physical) {
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

  private Check identity(Publication p, Map<TableId, Physical> physical) {
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

  private Check slots(Connection c, int toCopy) {
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

  private Check senders(Connection c, int toCopy) {
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

  static Check ok(String name, String summary) {
    return new Check(name, Status.PASSED, summary, null);
  }

  static Check fail(String name, EtlException failure) {
    return new Check(name, Status.FAILED, failure.description(), failure);
  }

  static Check warn(String name, String summary) {
    return new Check(name, Status.WARNING, summary, null);
  }

  static Check skip(String name, String reason) {
    return new Check(name, Status.SKIPPED, reason, null);
  }
}
