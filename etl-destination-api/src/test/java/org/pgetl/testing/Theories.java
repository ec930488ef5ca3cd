package org.pgetl.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.quicktheories.QuickTheory;
import org.quicktheories.api.AsString;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Configuration;
import org.quicktheories.core.Gen;
import org.quicktheories.core.NoGuidance;
import org.quicktheories.core.Reporter;
import org.quicktheories.core.Strategy;
import org.quicktheories.generators.Generate;

/**
 * Property runs with pgetl's settings: a fixed number of examples, a time budget after which a run
 * stops early, and a seed that every failure prints and {@code -Dpgetl.seed=...} replays.
 *
 * <p>Every property in the build starts here ({@link #qt}) or, where a property is a plain loop
 * over random inputs, takes its {@link java.util.SplittableRandom} seed from {@link #seed()} and
 * reports a failure through {@link #failure}. A replayed seed lifts the time budget, so the replay
 * reaches the failing example however slow the machine is; run one property with {@code
 * -Dtest=Class#method} (or {@code -Dit.test=...}) to replay it alone.
 *
 * <p>QuickTheories' own {@code QT_*} system properties are not read: the example count and the
 * budget of each property are part of its code.
 */
public final class Theories {
  /** The system property that replays a seed: {@code -Dpgetl.seed=-4206387620822802130}. */
  public static final String SEED_PROPERTY = "pgetl.seed";

  /** Shrink attempts per example when a property does not say: QuickTheories' own default. */
  private static final int SHRINKS_PER_EXAMPLE = 100;

  /** Draws per example when a generator filters its values: QuickTheories' own default. */
  private static final int GENERATE_ATTEMPTS = 10;

  private Theories() {}

  /**
   * A property run of at most {@code examples} examples and at most {@code budget} of wall time,
   * shrinking a failure for up to a hundred attempts per example.
   */
  public static QuickTheory qt(int examples, Duration budget) {
    return qt(examples, budget, examples * SHRINKS_PER_EXAMPLE);
  }

  /**
   * A property run of at most {@code examples} examples and at most {@code budget} of wall time,
   * shrinking a failure for at most {@code shrinks} attempts (for properties whose every example
   * costs a server round trip).
   */
  public static QuickTheory qt(int examples, Duration budget, int shrinks) {
    if (examples <= 0 || budget.isNegative() || budget.isZero() || shrinks < 0) {
      throw new IllegalArgumentException(
          "examples and budget must be > 0 and shrinks >= 0, were "
              + examples
              + ", "
              + budget
              + ", "
              + shrinks);
    }
    Long replay = replaySeed();
    long seed = replay != null ? replay : seed();
    long budgetMillis = replay != null ? -1 : Math.max(1, budget.toMillis());
    return QuickTheory.qt(
        () ->
            new Strategy(
                Configuration.defaultPRNG(seed),
                examples,
                budgetMillis,
                shrinks,
                GENERATE_ATTEMPTS,
                new SeedReporter(),
                prng -> new NoGuidance()));
  }

  /**
   * The seed of a run: the replayed one when {@code -Dpgetl.seed} is set, a fresh one otherwise.
   */
  public static long seed() {
    Long replay = replaySeed();
    return replay != null ? replay : ThreadLocalRandom.current().nextLong();
  }

  /** Whether this run replays a seed (and so runs without a time budget). */
  public static boolean replaying() {
    return replaySeed() != null;
  }

  /** The error a plain seeded loop throws when an example fails: it names the seed to replay. */
  public static AssertionError failure(long seed, int example, Object value, Throwable cause) {
    return new AssertionError(
        "Property falsified at example "
            + example
            + ", seed "
            + seed
            + replayHint(seed)
            + "\nfalsifying value:\n"
            + value,
        cause);
  }

  private static Long replaySeed() {
    String value = System.getProperty(SEED_PROPERTY);
    if (value == null || value.isBlank()) {
      return null;
    }
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          SEED_PROPERTY + " must be a 64-bit integer, was '" + value + "'", e);
    }
  }

  private static String replayHint(long seed) {
    return " (replay: -D" + SEED_PROPERTY + "=" + seed + ")";
  }

  // ------------------------------------------------------------------ generators

  /**
   * Mostly {@code gen}, and one value in eight from {@code edges}: QuickTheories tries only the
   * smallest and largest values of a generator before drawing at random, so values that matter at a
   * boundary are mixed in by hand.
   */
  @SafeVarargs
  public static <T> Gen<T> withEdges(Gen<T> gen, T... edges) {
    return Generate.frequency(Pair.of(7, gen), Pair.of(1, Generate.pick(Arrays.asList(edges))));
  }

  /** Strings of {@code min} to {@code max} characters, each drawn from {@code alphabet}. */
  public static Gen<String> strings(String alphabet, int min, int max) {
    List<Character> chars = new ArrayList<>();
    alphabet.chars().forEach(c -> chars.add((char) c));
    Gen<Character> one = Generate.pick(chars);
    Gen<Integer> length = Generate.range(min, max);
    return in -> {
      int n = length.generate(in);
      StringBuilder sb = new StringBuilder(n);
      for (int i = 0; i < n; i++) {
        sb.append(one.generate(in));
      }
      return sb.toString();
    };
  }

  /** Byte arrays of up to {@code max} bytes, every byte value possible; printed as hex. */
  public static Gen<byte[]> bytes(int max) {
    return Generate.byteArrays(
            Generate.range(0, max), Generate.bytes(Byte.MIN_VALUE, Byte.MAX_VALUE, (byte) 0))
        .describedAs(Theories::hex);
  }

  /** A byte array as hex, for failure reports. */
  public static String hex(byte[] b) {
    return b == null ? "null" : "[" + b.length + " bytes] " + java.util.HexFormat.of().formatHex(b);
  }

  /** Reports a falsified property with its seed and the way to replay it. */
  private static final class SeedReporter implements Reporter {
    private static final int OTHERS_SHOWN = 5;

    @Override
    public void falisification(
        long seed,
        int count,
        Object smallest,
        Throwable cause,
        List<Object> examples,
        AsString<Object> toString) {
      throw new AssertionError(message(seed, count, smallest, examples, toString), cause);
    }

    @Override
    public void falisification(
        long seed, int count, Object smallest, List<Object> examples, AsString<Object> toString) {
      throw new AssertionError(message(seed, count, smallest, examples, toString));
    }

    @Override
    public void valuesExhausted(int completedExamples) {
      throw new IllegalStateException(
          "gave up after only "
              + completedExamples
              + " example(s) met the generators' assumptions");
    }

    private static String message(
        long seed, int count, Object smallest, List<Object> others, AsString<Object> toString) {
      StringBuilder sb = new StringBuilder();
      sb.append("Property falsified after ")
          .append(count)
          .append(" example(s), seed ")
          .append(seed)
          .append(replayHint(seed))
          .append("\nsmallest falsifying value:\n")
          .append(toString.asString(smallest));
      if (!others.isEmpty()) {
        sb.append("\nother falsifying values (").append(others.size()).append("):");
        others.stream()
            .limit(OTHERS_SHOWN)
            .forEach(o -> sb.append("\n").append(toString.asString(o)));
      }
      return sb.toString();
    }
  }
}
