package org.pgetl.examples.cli;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.pgetl.Shutdown;

/** Runs the command line in this JVM and captures what it prints. */
final class CliRun {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final Shutdown stop = new Shutdown();
  private final String[] args;

  private CliRun(String... args) {
    this.args = args;
  }

  /** Runs to the end and returns the run, with its exit code. */
  static Finished run(String... args) {
    CliRun r = new CliRun(args);
    int code = r.execute();
    return new Finished(code, r.out(), r.err());
  }

  /** Starts a run on another thread; {@link #stop()} asks it to stop, as Ctrl-C does. */
  static CliRun start(String... args) {
    CliRun r = new CliRun(args);
    r.exit =
        CompletableFuture.supplyAsync(
            r::execute,
            runnable -> {
              Thread t = new Thread(runnable, "cli-under-test");
              t.setDaemon(true);
              t.start();
            });
    return r;
  }

  private CompletableFuture<Integer> exit;

  private int execute() {
    return Main.run(args, print(out), print(err), stop);
  }

  private static PrintStream print(OutputStream target) {
    // synchronized: the stdout destination and the command write from different threads
    return new PrintStream(target, true, StandardCharsets.UTF_8);
  }

  /** Requests a clean stop, like Ctrl-C. */
  void stop() {
    stop.request();
  }

  /** The exit code, once the run has ended. */
  CompletableFuture<Integer> exit() {
    return exit;
  }

  String out() {
    synchronized (out) {
      return out.toString(StandardCharsets.UTF_8);
    }
  }

  String err() {
    synchronized (err) {
      return err.toString(StandardCharsets.UTF_8);
    }
  }

  /**
   * A finished run.
   *
   * @param exitCode the exit code
   * @param out what went to stdout
   * @param err what went to stderr
   */
  record Finished(int exitCode, String out, String err) {
    /** The non-blank lines of stderr. */
    List<String> errLines() {
      return Arrays.stream(err.split("\\R")).filter(l -> !l.isBlank()).toList();
    }
  }
}
