package org.pgetl.examples.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import org.pgetl.Shutdown;
import picocli.CommandLine;

/**
 * The {@code pgetl} command line: {@code demo} (a local replication demo on an embedded
 * PostgreSQL), {@code replicate} (replicate a real database), {@code check} (check that a pipeline
 * can start, without starting it), {@code lifecycle} (pause, resume or drain a destination), {@code
 * tables} (list, copy again, retry) and {@code status} (the active instance, lifecycle and table
 * states).
 *
 * <p>Exit codes: 0 success; 1 a failure (the pipeline failed, the demo's verification found a
 * difference, an operation was refused); 2 invalid command-line input; 130 interrupted before the
 * work could finish.
 */
public final class Main {
  /** The exit code of a failure. */
  public static final int EXIT_FAILURE = 1;

  /** The exit code of invalid command-line input. */
  public static final int EXIT_USAGE = 2;

  /** The exit code of a run interrupted (Ctrl-C) before its work could finish. */
  public static final int EXIT_INTERRUPTED = 130;

  private Main() {}

  /**
   * Runs the command line and exits with its exit code. The first Ctrl-C (or SIGTERM) asks the
   * running command to stop cleanly; a second one exits at once.
   *
   * @param args the arguments
   */
  public static void main(String[] args) {
    configureLogging(Arrays.asList(args));
    Shutdown stop = new Shutdown();
    InterruptSignals.install(stop, System.err);
    int code = run(args, System.out, System.err, stop);
    System.out.flush();
    System.exit(code);
  }

  /**
   * Runs the command line without exiting: for tests and for embedding the CLI.
   *
   * @param args the arguments
   * @param out where results go (the stdout destination's JSON lines, the demo's progress)
   * @param err where errors and status lines go
   * @param stop requested when the running command should stop (Ctrl-C)
   * @return the exit code
   */
  public static int run(String[] args, PrintStream out, PrintStream err, Shutdown stop) {
    CliContext context = new CliContext(out, err, stop);
    CommandLine cli = commandLine(context);
    return cli.execute(args);
  }

  /**
   * Builds the picocli command tree with its error handlers.
   *
   * @param context the streams and stop handle the commands use
   * @return the command line
   */
  static CommandLine commandLine(CliContext context) {
    CommandLine cli = new CommandLine(new PgetlCommand());
    cli.addSubcommand("demo", new DemoCommand(context));
    cli.addSubcommand("replicate", new ReplicateCommand(context));
    cli.addSubcommand("check", new CheckCommand(context));
    cli.addSubcommand("lifecycle", LifecycleCommand.commandLine(context));
    cli.addSubcommand("tables", TablesCommand.commandLine(context));
    cli.addSubcommand("status", new StatusCommand(context));
    cli.addSubcommand("help", new CommandLine.HelpCommand());
    // the platform charset, as the PrintStreams of System.out and System.err use on Java 17
    java.nio.charset.Charset charset = java.nio.charset.Charset.defaultCharset();
    cli.setOut(
        new java.io.PrintWriter(new java.io.OutputStreamWriter(context.out(), charset), true));
    cli.setErr(
        new java.io.PrintWriter(new java.io.OutputStreamWriter(context.err(), charset), true));
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    cli.setParameterExceptionHandler(
        (e, args) -> {
          CommandLine failed = e.getCommandLine();
          context
              .err()
              .println(
                  "error: "
                      + ErrorReport.singleLine(e.getMessage())
                      + " (see '"
                      + failed.getCommandSpec().qualifiedName()
                      + " --help')");
          return EXIT_USAGE;
        });
    cli.setExecutionExceptionHandler(
        (e, failed, parseResult) -> {
          context.err().println(ErrorReport.describe(e));
          if (isVerbose(parseResult)) {
            e.printStackTrace(context.err());
          }
          return e instanceof CliException c ? c.exitCode() : EXIT_FAILURE;
        });
    return cli;
  }

  private static boolean isVerbose(CommandLine.ParseResult parseResult) {
    CommandLine.ParseResult r = parseResult;
    while (r != null) {
      if (r.hasMatchedOption("--verbose")) {
        return true;
      }
      r = r.subcommand();
    }
    return false;
  }

  /**
   * Sets the simple logger's level before any logger exists: warnings only, unless {@code
   * --verbose} is given (then the engine's info lines show too). Logs go to stderr.
   */
  private static void configureLogging(List<String> args) {
    boolean verbose = args.contains("--verbose") || args.contains("-v");
    setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : "warn");
    setIfAbsent("org.slf4j.simpleLogger.logFile", "System.err");
    setIfAbsent("org.slf4j.simpleLogger.showDateTime", "true");
    setIfAbsent("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
    // Flyway reports every migration at info level: quiet unless --verbose
    if (!verbose) {
      setIfAbsent("org.slf4j.simpleLogger.log.org.flywaydb", "warn");
    }
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }
}
