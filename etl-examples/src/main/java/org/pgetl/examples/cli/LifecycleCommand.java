package org.pgetl.examples.cli;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import org.pgetl.lifecycle.LifecycleAdmin;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.store.PipelineStore.LifecycleRecord;
import org.pgetl.store.postgres.PostgresStore;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Unmatched;

/**
 * {@code pgetl lifecycle}: shows and changes a destination's lifecycle state in a pipeline's
 * PostgreSQL state store, through {@link LifecycleAdmin}. A running pipeline follows the change
 * within its lifecycle poll interval (one second by default).
 */
@Command(
    name = "lifecycle",
    mixinStandardHelpOptions = true,
    description = {
      "Shows or changes a destination's lifecycle state: active, paused, draining (retired is set"
          + " by an operator with SQL). A running pipeline follows within about a second.",
    },
    footer = {
      "",
      "Example:",
      "  pgetl lifecycle pause --store-url 'jdbc:postgresql://db:5432/shop?user=pgetl'"
          + " --pipeline-id cli --destination-name duckdb --reason 'disk full'"
    })
final class LifecycleCommand implements Callable<Integer> {
  private final CliContext context;

  private LifecycleCommand(CliContext context) {
    this.context = context;
  }

  /**
   * Builds the {@code lifecycle} command with its subcommands.
   *
   * @param context the streams
   * @return the command line
   */
  static CommandLine commandLine(CliContext context) {
    CommandLine cli = new CommandLine(new LifecycleCommand(context));
    cli.addSubcommand("show", new Show(context));
    cli.addSubcommand("pause", new Pause(context));
    cli.addSubcommand("resume", new Resume(context));
    cli.addSubcommand("drain", new Drain(context));
    cli.addSubcommand("retire", new Retire(context));
    return cli;
  }

  /** Without a subcommand: an input error. */
  @Override
  public Integer call() {
    context.err().println("error: a lifecycle command is missing (show, pause, resume, drain)");
    return Main.EXIT_USAGE;
  }

  /** The options that find the lifecycle row: store, schema, pipeline, destination. */
  static final class Target {
    @Mixin StoreOptions store;

    @Option(
        names = "--destination-name",
        required = true,
        paramLabel = "NAME",
        description = "The destination's name(): stdout-json for stdout, duckdb for duckdb:PATH.")
    String destinationName;

    /**
     * Fails unless the store knows the pipeline and the destination; see {@link StoreDirectory}.
     */
    void requireKnown() {
      new StoreDirectory(store.storeDb(), store.storeSchema)
          .requireDestination(store.pipelineId, destinationName);
    }
  }

  /** {@code lifecycle show}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Shows the destination's lifecycle state and who set it, when and why.")
  static final class Show implements Callable<Integer> {
    @Mixin Target target;

    private final CliContext context;

    Show(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      try (PostgresStore store = target.store.open()) {
        LifecycleAdmin admin = new LifecycleAdmin(store);
        context.out().println(describe(admin, target));
      }
      return 0;
    }
  }

  /** {@code lifecycle pause|resume|drain}: writes the destination's lifecycle row. */
  abstract static class Change implements Callable<Integer> {
    @Mixin Target target;

    @Option(
        names = "--reason",
        paramLabel = "TEXT",
        description = "Why, stored in the row's reason column.")
    @Nullable String reason;

    @Option(
        names = "--by",
        paramLabel = "WHO",
        description = "Who, stored in the row's updated_by column (default: the OS user).")
    @Nullable String by;

    private final CliContext context;
    private final LifecycleState state;

    Change(CliContext context, LifecycleState state) {
      this.context = context;
      this.state = state;
    }

    @Override
    public Integer call() {
      String who = by != null ? by : System.getProperty("user.name", "pgetl") + " (pgetl cli)";
      target.requireKnown();
      try (PostgresStore store = target.store.open()) {
        LifecycleAdmin admin = new LifecycleAdmin(store);
        switch (state) {
          case PAUSED -> admin.pause(target.destinationName, reason, who);
          case ACTIVE -> admin.resume(target.destinationName, reason, who);
          case DRAINING -> admin.drain(target.destinationName, reason, who);
          case RETIRED -> throw new IllegalStateException("retire is refused before this point");
        }
        context.out().println(describe(admin, target));
      }
      return 0;
    }
  }

  /** {@code lifecycle retire}: refused, with a pointer to the operator's SQL. */
  @Command(
      name = "retire",
      mixinStandardHelpOptions = true,
      description = {
        "Refused: retiring drops the pipeline's replication slots and state for good, so an"
            + " operator does it with SQL (docs/operations.md, \"Retiring a destination\")."
      })
  static final class Retire implements Callable<Integer> {
    // every argument after retire is accepted and ignored: the command refuses anyway
    @Unmatched @Nullable List<String> ignored;

    private final CliContext context;

    Retire(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      context
          .err()
          .println(
              "error: pgetl does not retire destinations: retiring drops the pipeline's"
                  + " replication slots and state for good, so an operator does it with SQL;"
                  + " see docs/operations.md, \"Retiring a destination\"");
      return Main.EXIT_FAILURE;
    }
  }

  /** {@code lifecycle pause}. */
  @Command(
      name = "pause",
      mixinStandardHelpOptions = true,
      description =
          "Pauses the destination: no WAL is read and nothing delivered; buffered work is"
              + " discarded and read again on resume. The slot stays, so the server keeps WAL.")
  static final class Pause extends Change {
    Pause(CliContext context) {
      super(context, LifecycleState.PAUSED);
    }
  }

  /** {@code lifecycle resume}. */
  @Command(
      name = "resume",
      mixinStandardHelpOptions = true,
      description =
          "Resumes a paused or drained destination: it reads again from its durable point.")
  static final class Resume extends Change {
    Resume(CliContext context) {
      super(context, LifecycleState.ACTIVE);
    }
  }

  /** {@code lifecycle drain}. */
  @Command(
      name = "drain",
      mixinStandardHelpOptions = true,
      description =
          "Drains the destination: no new intake; what is buffered is delivered and awaited,"
              + " then the pipeline idles until resumed.")
  static final class Drain extends Change {
    Drain(CliContext context) {
      super(context, LifecycleState.DRAINING);
    }
  }

  private static String describe(LifecycleAdmin admin, Target target) {
    Optional<LifecycleRecord> row = admin.read(target.destinationName);
    LifecycleState effective = admin.effectiveState(target.destinationName);
    StringBuilder sb =
        new StringBuilder("pipeline ")
            .append(target.store.pipelineId)
            .append(", destination ")
            .append(target.destinationName)
            .append(": ")
            .append(effective.dbValue());
    if (row.isEmpty()) {
      sb.append(" (no lifecycle row: active by default)");
    } else {
      LifecycleRecord r = row.get();
      if (!r.rawState().equals(effective.dbValue())) {
        sb.append(" (stored value '").append(r.rawState()).append("' is unknown: read as paused)");
      }
      sb.append(", set by ").append(r.updatedBy() == null ? "?" : r.updatedBy());
      sb.append(" at ").append(r.updatedAt());
      if (r.reason() != null) {
        sb.append(", reason: ").append(r.reason());
      }
    }
    return sb.toString();
  }
}
