package org.pgetl.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Runs the external programs the testkit needs (tar, initdb, pg_ctl) with bounded waits. */
final class Commands {
  /** Folders searched after {@code PATH}: system tools such as useradd live in sbin. */
  private static final List<String> EXTRA_PATH = List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin");

  /** At most this much of a program's output goes into an error message. */
  static final int MAX_OUTPUT_CHARS = 6000;

  private Commands() {}

  /**
   * The outcome of one program run.
   *
   * @param command the command line that ran
   * @param exitCode its exit code
   * @param output its standard output and error, interleaved (the tail if very long)
   */
  record Result(List<String> command, int exitCode, String output) {
    boolean ok() {
      return exitCode == 0;
    }

    /** Describes the run for an error message: command, exit code and output. */
    String describe() {
      String out = output.isBlank() ? "(no output)" : output.strip();
      return "command: "
          + String.join(" ", command)
          + "\nexit code: "
          + exitCode
          + "\noutput:\n"
          + out;
    }
  }

  /**
   * Runs a program to completion, with the locale forced to C and no PG* variables inherited.
   *
   * @param command the program and its arguments
   * @param workDir the working directory (must be reachable by the user that runs the program)
   * @param timeout how long to wait before the program is killed
   * @return the result; a non-zero exit code is not an exception
   * @throws TestkitException when the program cannot be started or does not finish in time
   */
  static Result run(List<String> command, Path workDir, Duration timeout) {
    Path outputFile = null;
    try {
      outputFile = Files.createTempFile("pgetl-command-", ".out");
      ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile());
      pb.redirectErrorStream(true);
      // a file, not a pipe: a daemon started by the program (pg_ctl start) may keep a pipe open
      pb.redirectOutput(outputFile.toFile());
      pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
      Map<String, String> env = pb.environment();
      env.keySet().removeIf(k -> k.startsWith("PG"));
      env.put("LC_ALL", "C");
      env.put("LANG", "C");
      Process process;
      try {
        process = pb.start();
      } catch (IOException e) {
        throw new TestkitException(
            "cannot start '"
                + command.get(0)
                + "': "
                + e.getMessage()
                + " (command: "
                + command
                + ")",
            e);
      }
      boolean done = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (!done) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
        throw new TestkitException(
            "'"
                + String.join(" ", command)
                + "' did not finish within "
                + timeout.toSeconds()
                + " s and was killed; output:\n"
                + tail(Files.readString(outputFile, StandardCharsets.UTF_8)));
      }
      return new Result(
          List.copyOf(command),
          process.exitValue(),
          tail(Files.readString(outputFile, StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new TestkitException(
          "cannot run '" + String.join(" ", command) + "': " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TestkitException("interrupted while running '" + command.get(0) + "'", e);
    } finally {
      if (outputFile != null) {
        try {
          Files.deleteIfExists(outputFile);
        } catch (IOException ignored) {
          // a leftover temp file is harmless
        }
      }
    }
  }

  /**
   * Finds a program on {@code PATH} or in the usual system folders.
   *
   * @param name the program name
   * @return its path, if found and executable
   */
  static Optional<Path> which(String name) {
    List<String> dirs = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      for (String d : path.split(":", -1)) {
        if (!d.isEmpty()) {
          dirs.add(d);
        }
      }
    }
    dirs.addAll(EXTRA_PATH);
    for (String d : dirs) {
      Path candidate = Path.of(d, name);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /** Keeps the end of a long text: the last lines of a log say what went wrong. */
  static String tail(String text) {
    if (text.length() <= MAX_OUTPUT_CHARS) {
      return text;
    }
    return "[...]" + text.substring(text.length() - MAX_OUTPUT_CHARS);
  }

  /** Quotes a word for {@code sh -c}. */
  static String shellQuote(String word) {
    return "'" + word.replace("'", "'\"'\"'") + "'";
  }
}
