package org.pgetl.examples.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The top-level {@code pgetl} command: it only holds the subcommands. */
@Command(
    name = "pgetl",
    mixinStandardHelpOptions = true,
    versionProvider = PgetlCommand.Version.class,
    description =
        "PostgreSQL change data capture for the JVM: run the demo, replicate a database,"
            + " check that it can be replicated, or change a destination's lifecycle.",
    footer = {
      "",
      "Exit codes: 0 success, 1 failure, 2 invalid input, 130 interrupted.",
      "Start with: pgetl demo"
    })
final class PgetlCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  /** Without a subcommand, prints the usage to stderr: a subcommand is missing. */
  @Override
  public Integer call() {
    spec.commandLine()
        .getErr()
        .println("error: a command is missing (demo, replicate, check, lifecycle, tables)");
    spec.commandLine().usage(spec.commandLine().getErr());
    return Main.EXIT_USAGE;
  }

  /** Reads the version from the jar's manifest. */
  static final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = PgetlCommand.class.getPackage().getImplementationVersion();
      return new String[] {"pgetl " + (v == null ? "(development build)" : v)};
    }
  }
}
