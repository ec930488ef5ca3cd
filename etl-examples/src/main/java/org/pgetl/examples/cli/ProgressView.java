package org.pgetl.examples.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Draws the demo's progress: a bar per table during the copy, then one live status line. On a
 * terminal it redraws in place (ANSI cursor movement); otherwise (a pipe, a file, a CI log) it
 * prints plain lines now and then.
 */
final class ProgressView {
  private static final int BAR_WIDTH = 24;
  private static final Duration PLAIN_COPY_EVERY = Duration.ofSeconds(2);
  private static final Duration PLAIN_LIVE_EVERY = Duration.ofSeconds(5);

  /**
   * One table's line during the copy.
   *
   * @param table the table's name
   * @param state what the table is doing (copying, catching up, ready, ...)
   * @param copied rows copied so far
   * @param estimate the planner's row estimate
   * @param rowsPerSecond the recent copy rate
   * @param done whether the table's copy is finished
   */
  record CopyLine(
      String table, String state, long copied, long estimate, double rowsPerSecond, boolean done) {}

  private final PrintStream out;
  private final boolean ansi;
  private int drawnLines;
  private boolean liveLineOpen;
  private long lastPlainCopy;
  private long lastPlainLive;

  /**
   * Creates a view.
   *
   * @param out where to draw
   * @param ansi true to redraw in place (a terminal), false for plain periodic lines
   */
  ProgressView(PrintStream out, boolean ansi) {
    this.out = out;
    this.ansi = ansi;
  }

  /** Whether this view redraws in place. */
  boolean ansi() {
    return ansi;
  }

  /**
   * Draws the copy bars (plain mode: at most every two seconds, unless forced).
   *
   * @param lines one line per table
   * @param force print even if a plain block was printed recently
   */
  void copy(List<CopyLine> lines, boolean force) {
    if (ansi) {
      StringBuilder sb = new StringBuilder();
      if (drawnLines > 0) {
        sb.append("\033[").append(drawnLines).append('A');
      }
      for (CopyLine l : lines) {
        sb.append("\r\033[2K").append(format(l)).append('\n');
      }
      out.print(sb);
      out.flush();
      drawnLines = lines.size();
      return;
    }
    long now = System.nanoTime();
    if (!force && now - lastPlainCopy < PLAIN_COPY_EVERY.toNanos()) {
      return;
    }
    lastPlainCopy = now;
    for (CopyLine l : lines) {
      out.println("copy " + format(l).strip());
    }
    out.flush();
  }

  /** Ends the block of copy bars: what is printed next goes below it. */
  void endCopy() {
    drawnLines = 0;
  }

  /**
   * Draws the live status line (plain mode: at most every five seconds, unless forced).
   *
   * @param line the status
   * @param force print even if a plain line was printed recently
   */
  void live(String line, boolean force) {
    if (ansi) {
      out.print("\r\033[2K" + line);
      out.flush();
      liveLineOpen = true;
      return;
    }
    long now = System.nanoTime();
    if (!force && now - lastPlainLive < PLAIN_LIVE_EVERY.toNanos()) {
      return;
    }
    lastPlainLive = now;
    out.println(line);
    out.flush();
  }

  /**
   * Prints a line below whatever is drawn.
   *
   * @param line the text
   */
  void println(String line) {
    if (liveLineOpen) {
      out.println();
      liveLineOpen = false;
    }
    out.println(line);
    out.flush();
  }

  static String format(CopyLine l) {
    double fraction =
        l.done()
            ? 1.0
            : l.estimate() <= 0 ? 0.0 : Math.min(0.99, (double) l.copied() / l.estimate());
    int filled = (int) Math.round(fraction * BAR_WIDTH);
    String bar = "#".repeat(filled) + "-".repeat(BAR_WIDTH - filled);
    StringBuilder sb = new StringBuilder(120);
    sb.append(
        String.format(Locale.ROOT, "  %-20s [%s] %3d%%", l.table(), bar, (int) (fraction * 100)));
    sb.append(
        String.format(
            Locale.ROOT, "  %11s / %-11s rows", number(l.copied()), number(l.estimate())));
    if (!l.done() && l.rowsPerSecond() > 0 && l.copied() > 0) {
      long left = Math.max(0, l.estimate() - l.copied());
      sb.append(
          String.format(
              Locale.ROOT,
              "  %9s rows/s  ETA %s",
              number((long) l.rowsPerSecond()),
              duration(Duration.ofMillis((long) (left * 1000 / l.rowsPerSecond())))));
    }
    sb.append("  ").append(l.state());
    return sb.toString();
  }

  /**
   * Returns a lifecycle state as the status lines show it: its database value, or {@code not read
   * yet} while the pipeline starts (nothing is read or delivered before it was read once).
   */
  static String lifecycle(org.pgetl.lifecycle.@Nullable LifecycleState state) {
    return state == null ? "not read yet" : state.dbValue();
  }

  /** {@code 1,234,567}. */
  static String number(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }

  /** {@code 950 B}, {@code 12.3 kB}, {@code 4.5 MB}. */
  static String bytes(long n) {
    if (n < 0) {
      return "?";
    }
    if (n < 1000) {
      return n + " B";
    }
    if (n < 1_000_000) {
      return String.format(Locale.ROOT, "%.1f kB", n / 1e3);
    }
    if (n < 1_000_000_000) {
      return String.format(Locale.ROOT, "%.1f MB", n / 1e6);
    }
    return String.format(Locale.ROOT, "%.1f GB", n / 1e9);
  }

  /** {@code 41 s}, {@code 3 min}, {@code 2 h}, {@code 3 d}: an age, to the unit that matters. */
  static String age(Duration d) {
    long s = Math.max(0, d.toSeconds());
    if (s < 120) {
      return s + " s";
    }
    if (s < 7200) {
      return s / 60 + " min";
    }
    if (s < 172_800) {
      return s / 3600 + " h";
    }
    return s / 86_400 + " d";
  }

  /** {@code 850 ms}, {@code 12.3 s}, {@code 2m05s}. */
  static String duration(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + " ms";
    }
    if (ms < 60_000) {
      return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
    long s = d.toSeconds();
    return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
  }
}
