package org.pgetl.examples.cli;

import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.Preflight;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.store.PipelineStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code pgetl check}: runs the checks that {@code pgetl replicate} runs before it starts (see
 * {@link Preflight}) and prints one line per check. It only reads: no slot, no row, no schema, in
 * any database; a store schema that does not exist yet is reported as what a start will create.
 */
@Command(
    name = "check",
    mixinStandardHelpOptions = true,
    description = {
      "Checks that a pipeline can start, without starting it: wal_level, the role's REPLICATION"
          + " attribute, the publication, SELECT on the tables the copy reads, their replica"
          + " identity, free replication slots and WAL senders, and the state store. Prints one"
          + " line per check to stdout. Read-only: creates no slot, no row and no schema in any"
          + " database; a missing store schema is reported as what replicate will create, and"
          + " fails the check when the role may not create it.",
    },
    footer = {
      "",
      "A URL without a password takes it from the PGPASSWORD environment variable.",
      "Example:",
      "  pgetl check --source-url 'jdbc:postgresql://db:5432/shop?user=pgetl' --publication shop",
      "",
      "Exit codes: 0 every check passed, 1 a check failed, 2 invalid input."
    })
final class CheckCommand implements Callable<Integer> {
  @Mixin PipelineOptions pipeline;

  @Option(
      names = {"-v", "--verbose"},
      description = "Show the engine's log lines and the stack trace of a failure.")
  boolean verbose;

  private final CliContext context;

  CheckCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    PgConnectionConfig source = pipeline.source();
    PipelineConfig config = pipeline.config(source);
    List<Preflight.Check> checks;
    PipelineStore store;
    try {
      store = pipeline.openStore(source);
    } catch (EtlException e) {
      // the source checks still run; the store's check reports why it did not open
      store = unopened(config.pipelineId(), e);
    }
    try (PipelineStore s = store) {
      checks = Preflight.run(config, s);
    }
    PrintStream out = context.out();
    int failed = 0;
    int warned = 0;
    for (Preflight.Check c : checks) {
      out.println(line(c));
      if (c.status() == Preflight.Status.FAILED) {
        failed++;
      } else if (c.status() == Preflight.Status.WARNING) {
        warned++;
      }
    }
    if (failed == 0) {
      out.println(
          "pgetl check: all "
              + checks.size()
              + " checks passed"
              + (warned == 0 ? "" : " (" + warned + (warned == 1 ? " warning)" : " warnings)")));
      return 0;
    }
    out.println(
        "pgetl check: "
            + failed
            + " of "
            + checks.size()
            + " checks failed; pgetl replicate would not start");
    return Main.EXIT_FAILURE;
  }

  /**
   * Returns the line of one check: {@code ok <what was found>}, {@code warn <check>: <what to
   * know>}, {@code FAIL <check>: <kind>: <description> (<detail>) — <hint>} or {@code skip <check>:
   * <why>}.
   *
   * @param c the check
   * @return the line
   */
  static String line(Preflight.Check c) {
    return switch (c.status()) {
      case PASSED -> "ok   " + ErrorReport.singleLine(c.summary());
      case WARNING -> "warn " + c.name() + ": " + ErrorReport.singleLine(c.summary());
      case SKIPPED -> "skip " + c.name() + ": " + ErrorReport.singleLine(c.summary());
      case FAILED -> {
        EtlException e = Objects.requireNonNull(c.failure(), "a failed check carries its failure");
        StringBuilder sb = new StringBuilder("FAIL ").append(c.name()).append(": ");
        sb.append(e.kind()).append(": ").append(ErrorReport.singleLine(e.description()));
        if (e.detail() != null && !e.detail().isBlank()) {
          sb.append(" (").append(ErrorReport.singleLine(e.detail())).append(')');
        }
        yield sb.append(" — ").append(ErrorReport.singleLine(e.hint())).toString();
      }
    };
  }

  /** A store that could not be opened: every call fails with the reason. */
  private static PipelineStore unopened(String pipelineId, EtlException reason) {
    EtlException failure =
        reason.kind() == ErrorKind.STATE_STORE_ERROR
            ? reason
            : new EtlException(
                ErrorKind.STATE_STORE_ERROR,
                "the state store of pipeline " + pipelineId + " could not be opened",
                reason.getMessage(),
                reason);
    return (PipelineStore)
        Proxy.newProxyInstance(
            PipelineStore.class.getClassLoader(),
            new Class<?>[] {PipelineStore.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "pipelineId" -> pipelineId;
                  case "close" -> null;
                  case "toString" -> "unopened store of pipeline " + pipelineId;
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  default -> throw failure;
                });
  }
}
