package org.pgetl.examples.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.lifecycle.LifecycleAdmin;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.Lease;
import org.pgetl.store.PipelineStore.LeaseHolder;
import org.pgetl.store.PipelineStore.LifecycleRecord;
import org.pgetl.store.postgres.PostgresStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code pgetl status}: what a pipeline's PostgreSQL state store says about it — which instance is
 * active (the lease holder and its epoch), each destination's lifecycle state, and each table's
 * state. Reads only; works whether the pipeline runs or not.
 */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = {
      "Shows a pipeline's state from its state store: the active instance (lease holder, epoch),"
          + " each destination's lifecycle state, and each table's state."
    },
    footer = {
      "",
      "Example:",
      "  pgetl status --store-url 'jdbc:postgresql://db:5432/shop?user=pgetl' --pipeline-id cli",
      "",
      "Exit codes: 0 shown, 1 the store cannot be read or does not know the pipeline, 2 invalid"
          + " input."
    })
final class StatusCommand implements Callable<Integer> {
  @Mixin StoreOptions target;

  private final CliContext context;

  StatusCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws SQLException {
    PgConnectionConfig storeDb = target.storeDb();
    StoreDirectory directory = new StoreDirectory(storeDb, target.storeSchema);
    directory.requirePipeline(target.pipelineId);
    List<String> destinations = directory.destinations(target.pipelineId);
    try (PostgresStore store = target.open()) {
      context
          .out()
          .println(
              "pipeline "
                  + target.pipelineId
                  + " (state store: schema "
                  + target.storeSchema
                  + " of "
                  + storeDb.describe()
                  + ")");
      context.out().println("  lease: " + lease(store, storeDb));
      LifecycleAdmin admin = new LifecycleAdmin(store);
      if (destinations.isEmpty()) {
        context.out().println("  destinations: none known yet");
      }
      for (String d : destinations) {
        context.out().println("  destination " + d + ": " + lifecycle(admin, d));
      }
      context.out().println("  tables:");
      TablesCommand.printTables(store, target.pipelineId, context.out(), "    ");
    }
    return 0;
  }

  /** The lease: who holds it now (the advisory lock is granted), else its last holder. */
  private String lease(PostgresStore store, PgConnectionConfig storeDb) throws SQLException {
    Optional<LeaseHolder> holder;
    try (Lease lease = store.lease("pgetl status")) {
      holder = lease.holder();
    }
    if (holder.isPresent()) {
      return "held by " + ReplicateCommand.holderText(holder.get()) + " (active)";
    }
    try (Connection c = Connections.open(storeDb, "read the lease");
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT holder, epoch, acquired_at, released FROM "
                    + TableName.quoteIdentifier(target.storeSchema)
                    + ".pipeline_leases WHERE pipeline_id = ?")) {
      ps.setString(1, target.pipelineId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getString(1) == null) {
          return "never held: no instance has run";
        }
        return "not held: no instance is active (last: "
            + rs.getString(1)
            + ", epoch "
            + rs.getLong(2)
            + ", acquired "
            + rs.getObject(3, java.time.OffsetDateTime.class).toInstant()
            + (rs.getBoolean(4) ? ", released by a clean stop)" : ", lost: the process ended)");
      }
    }
  }

  private static String lifecycle(LifecycleAdmin admin, String destination) {
    Optional<LifecycleRecord> row = admin.read(destination);
    LifecycleState effective = admin.effectiveState(destination);
    if (row.isEmpty()) {
      return effective.dbValue() + " (no lifecycle row: active by default)";
    }
    LifecycleRecord r = row.get();
    return effective.dbValue()
        + ", set by "
        + (r.updatedBy() == null ? "?" : r.updatedBy())
        + " at "
        + r.updatedAt()
        + (r.reason() == null ? "" : ", reason: " + r.reason());
  }
}
