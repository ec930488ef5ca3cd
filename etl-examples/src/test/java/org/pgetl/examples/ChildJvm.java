package org.pgetl.examples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/** A main class run in a child JVM with this test's class path; stdout and stderr merged. */
public final class ChildJvm {
  /** The child process. */
  public final Process process;

  private final List<String> lines = new ArrayList<>();
  private final List<Long> arrivals = new ArrayList<>(); // System.nanoTime() of each line
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private boolean ended;
  private final Thread reader;

  private ChildJvm(Process process) {
    this.process = process;
    this.reader = new Thread(this::read, "child-jvm-output");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts a main class.
   *
   * @param dir the working folder
   * @param main the class
   * @param args its arguments
   * @return the running child
   * @throws IOException when the JVM cannot start
   */
  public static ChildJvm start(Path dir, Class<?> main, List<String> args) throws IOException {
    return start(dir, main, List.of(), args);
  }

  /**
   * Starts a main class with options for the JVM, such as {@code -Xmx128m}.
   *
   * @param dir the working folder
   * @param main the class
   * @param jvmOptions options placed before the class name
   * @param args its arguments
   * @return the running child
   * @throws IOException when the JVM cannot start
   */
  public static ChildJvm start(Path dir, Class<?> main, List<String> jvmOptions, List<String> args)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    for (String property : new String[] {"maven.repo.local", "java.io.tmpdir"}) {
      String value = System.getProperty(property);
      if (value != null) {
        command.add("-D" + property + "=" + value);
      }
    }
    command.add(main.getName());
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.directory(dir.toFile());
    return new ChildJvm(pb.start());
  }

  private void read() {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        add(line, false);
      }
    } catch (IOException e) {
      add("(reading the child's output failed: " + e + ")", false);
    } finally {
      add(null, true);
    }
  }

  private void add(String line, boolean end) {
    lock.lock();
    try {
      if (line != null) {
        lines.add(line);
        arrivals.add(System.nanoTime());
      }
      ended |= end;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits for a line of output that matches.
   *
   * @param match the test
   * @param minutes the longest wait
   * @return true when such a line came, false when the output ended or the time ran out first
   * @throws InterruptedException when interrupted
   */
  public boolean awaitLine(Predicate<String> match, int minutes) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(minutes);
    lock.lock();
    try {
      while (true) {
        if (lines.stream().anyMatch(match)) {
          return true;
        }
        long left = deadline - System.nanoTime();
        if (ended || left <= 0) {
          return false;
        }
        changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits for a line of output that matches and returns when it was read.
   *
   * @param match the test
   * @param max the longest wait
   * @return the {@link System#nanoTime()} at which the first such line was read
   * @throws AssertionError when the output ended or the time ran out first
   * @throws InterruptedException when interrupted
   */
  public long awaitLineAt(Predicate<String> match, java.time.Duration max)
      throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    lock.lock();
    try {
      while (true) {
        for (int i = 0; i < lines.size(); i++) {
          if (match.test(lines.get(i))) {
            return arrivals.get(i);
          }
        }
        long left = deadline - System.nanoTime();
        if (ended || left <= 0) {
          throw new AssertionError(
              "no such line within " + max + " (" + (ended ? "output ended" : "timed out") + ")");
        }
        changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits for the child to exit and its output to be read.
   *
   * @param minutes the longest wait; then the child is killed and the test fails
   * @return the exit code
   * @throws InterruptedException when interrupted
   */
  public int waitFor(int minutes) throws InterruptedException {
    if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("the child did not end within " + minutes + " min:\n" + text());
    }
    reader.join(TimeUnit.SECONDS.toMillis(10));
    return process.exitValue();
  }

  /** Sends SIGTERM, as a service manager does (Process.destroy() would also close our pipe). */
  public void terminate() {
    process.toHandle().destroy();
  }

  /**
   * Returns the lines printed so far.
   *
   * @return the lines
   */
  public List<String> lines() {
    lock.lock();
    try {
      return List.copyOf(lines);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns the output so far.
   *
   * @return the lines, joined
   */
  public String text() {
    return String.join("\n", lines());
  }
}
