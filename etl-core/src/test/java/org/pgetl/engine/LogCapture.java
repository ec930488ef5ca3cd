package org.pgetl.engine;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Captures what the logger (slf4j-simple, writing to {@code System.err}) prints while it is open,
 * still passing it through.
 */
public final class LogCapture implements AutoCloseable {
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  /** Starts capturing. */
  public LogCapture() {
    OutputStream tee =
        new OutputStream() {
          @Override
          public synchronized void write(int b) {
            captured.write(b);
            original.write(b);
          }

          @Override
          public synchronized void write(byte[] b, int off, int len) {
            captured.write(b, off, len);
            original.write(b, off, len);
          }
        };
    System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
  }

  /**
   * Returns the lines captured so far.
   *
   * @return the lines
   */
  public synchronized List<String> lines() {
    return Arrays.asList(captured.toString(StandardCharsets.UTF_8).split("\n"));
  }

  /**
   * Counts the captured lines that contain every fragment.
   *
   * @param fragments the fragments
   * @return the count
   */
  public long count(String... fragments) {
    return lines().stream().filter(l -> Arrays.stream(fragments).allMatch(l::contains)).count();
  }

  @Override
  public void close() {
    System.setErr(original);
  }
}
