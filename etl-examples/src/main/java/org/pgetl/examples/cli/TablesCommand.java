package org.pgetl.examples.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.CopyRecord;
import org.pgetl.store.PipelineStore.TableRequest;
import org.pgetl.store.TableState;
import org.pgetl.store.postgres.PostgresStore;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pgetl tables}: lists a pipeline's tables from its PostgreSQL state store, and asks for one
 * to be copied again ({@code resync}) or an errored one retried ({@code retry}). A request is
 * stored; the running pipeline carries it out within its lifecycle poll interval, a stopped one at
 * its next start.
 */
@Command(
    name = "tables",
    mixinStandardHelpOptions = true,
    description = {
      "Lists a pipeline's tables (state, rows copied, last error), or asks for one to be copied"
          + " again or retried. A running pipeline carries a request out within about a second."
    },
    footer = {
      "",
      "Examples:",
      "  pgetl tables list --store-url 'jdbc:postgresql://db:5432/shop?user=pgetl' --pipeline-id cli",
      "  pgetl tables resync --store-url 'jdbc:postgresql://db:5432/shop?user=pgetl'"
          + " --pipeline-id cli public.orders"
    })
final class TablesCommand implements Callable<Integer> {
  private final CliContext context;

  private TablesCommand(CliContext context) {
    this.context = context;
  }

  /**
   * Builds the {@code tables} command with its subcommands.
   *
   * @param context the streams
   * @return the command line
   */
  static CommandLine commandLine(CliContext context) {
    CommandLine cli = new CommandLine(new TablesCommand(context));
    cli.addSubcommand("list", new ListTables(context));
    cli.addSubcommand("resync", new Request(context, TableRequest.Action.RESYNC));
    cli.addSubcommand("retry", new Request(context, TableRequest.Action.RETRY));
    return cli;
  }

  /** Without a subcommand: an input error. */
  @Override
  public Integer call() {
    context.err().println("error: a tables command is missing (list, resync, retry)");
    return Main.EXIT_USAGE;
  }

  /** The options that find a pipeline's store, and where its tables' names are looked up. */
  static final class Target {
    @CommandLine.Mixin StoreOptions store;

    @Option(
        names = "--source",
        paramLabel = "URL",
        description =
            "The source database, when the state store lives elsewhere; table names are looked up"
                + " in the state store's database unless it is given.")
    @Nullable String sourceUrl;
  }

  /** {@code tables list}. */
  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Lists the pipeline's tables: state, rows of the last copy, last error.")
  static final class ListTables implements Callable<Integer> {
    @CommandLine.Mixin Target target;

    private final CliContext context;

    ListTables(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      try (PostgresStore store = target.store.open()) {
        printTables(store, target.store.pipelineId, context.out(), "");
      }
      return 0;
    }
  }

  /**
   * Prints a pipeline's tables, one line each (name, state, last copy, error), then the pending
   * requests.
   *
   * @param store the pipeline's store
   * @param pipelineId the pipeline
   * @param out where to print
   * @param indent put before every line
   */
  static void printTables(
      PostgresStore store, String pipelineId, java.io.PrintStream out, String indent) {
    Map<TableId, TableState> states = store.loadTableStates();
    Map<TableId, CopyRecord> copies = store.copies();
    if (states.isEmpty()) {
      out.println(indent + "pipeline " + pipelineId + ": no tables");
      return;
    }
    for (Map.Entry<TableId, TableState> e : states.entrySet()) {
      TableId t = e.getKey();
      String name =
          store
              .tableSchema(t, Lsn.MAX)
              .map(ReplicatedTableSchema::name)
              .map(TableName::toString)
              .orElse("(oid " + t + ")");
      StringJoiner line = new StringJoiner("  ");
      line.add(name);
      line.add(e.getValue().type().name().toLowerCase(Locale.ROOT));
      CopyRecord copy = copies.get(t);
      line.add(
          copy == null
              ? "not copied yet"
              : ProgressView.number(copy.rows()) + " rows copied at " + copy.finishedAt());
      if (e.getValue() instanceof TableState.Errored err) {
        line.add("error: " + ErrorReport.singleLine(err.reason()) + " (retry " + err.retry() + ")");
      }
      out.println(indent + line);
    }
    for (TableRequest r : store.tableRequests()) {
      out.println(
          indent
              + "pending: "
              + r.action().name().toLowerCase(Locale.ROOT)
              + " of table "
              + r.table()
              + " (requested "
              + r.requestedAt()
              + ")");
    }
  }

  /** {@code tables resync|retry TABLE}. */
  @Command(mixinStandardHelpOptions = true)
  static final class Request implements Callable<Integer> {
    @CommandLine.Mixin Target target;

    @Parameters(paramLabel = "TABLE", description = "The table, as schema.name (or name).")
    String table;

    @Option(
        names = "--by",
        paramLabel = "WHO",
        description = "Who asks, stored with the request (default: the OS user).")
    @Nullable String by;

    private final CliContext context;
    private final TableRequest.Action action;

    Request(CliContext context, TableRequest.Action action) {
      this.context = context;
      this.action = action;
    }

    @Override
    public Integer call() throws SQLException {
      TableName name;
      try {
        name = TableName.parse(table);
      } catch (IllegalArgumentException e) {
        throw new CliException("TABLE: " + e.getMessage(), Main.EXIT_USAGE);
      }
      String who = by != null ? by : System.getProperty("user.name", "pgetl") + " (pgetl cli)";
      try (PostgresStore store = target.store.open()) {
        Map<TableId, TableState> states = store.loadTableStates();
        TableId id = lookUp(name);
        if (id == null || !states.containsKey(id)) {
          StringJoiner known = new StringJoiner(", ");
          for (TableId t : states.keySet()) {
            known.add(
                store.tableSchema(t, Lsn.MAX).map(s -> s.name().toString()).orElse("oid " + t));
          }
          throw new CliException(
              "table "
                  + name
                  + " is not part of pipeline "
                  + target.store.pipelineId
                  + (states.isEmpty() ? " (it has no tables)" : "; its tables: " + known),
              Main.EXIT_FAILURE);
        }
        TableState state = states.get(id);
        if (action == TableRequest.Action.RETRY && !(state instanceof TableState.Errored)) {
          throw new CliException(
              "table "
                  + name
                  + " is "
                  + state.type().name().toLowerCase(Locale.ROOT)
                  + ", not errored: there is nothing to retry (resync copies it again)",
              Main.EXIT_FAILURE);
        }
        TableRequest r = store.requestTableAction(id, action, who);
        context
            .out()
            .println(
                "pipeline "
                    + target.store.pipelineId
                    + ": "
                    + action.name().toLowerCase(Locale.ROOT)
                    + " of "
                    + name
                    + " requested (request "
                    + r.id()
                    + "); a running pipeline carries it out within its lifecycle poll interval,"
                    + " a stopped one at its next start");
      }
      return 0;
    }

    private @Nullable TableId lookUp(TableName name) throws SQLException {
      String url = target.sourceUrl != null ? target.sourceUrl : target.store.storeUrl;
      try (Connection c = Connections.open(Connections.config(url), "look up table " + name);
          PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)::oid::bigint")) {
        ps.setString(1, name.quoted());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          long oid = rs.getLong(1);
          return rs.wasNull() ? null : new TableId(oid);
        }
      }
    }
  }
}
