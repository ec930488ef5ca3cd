package org.pgetl.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
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
 * <p>Every random property in the build starts here ({@link #qt}, {@link #checkSequence}). A
 * replayed seed lifts the time budget, so the replay reaches the failing example however slow the
 * machine is; run one property with {@code -Dtest=Class#method} (or {@code -Dit.test=...} for an
 * IT) to replay it alone.
 *
 * <p>QuickTheories' own {@code QT_*} system properties are not read: the example count and the
 * budget of each property are part of its code.
 */
public final class Theories {
  /** The system property that replays a seed: {@code -Dpgetl.seed=-4206387620822802130}. */
  public static final String SEED_PROPERTY = "pgetl.seed";

  /**
   * Shrink attempts when a property does not say: QuickTheories' own default is a hundred per
   * example, which for a property of 200,000 examples would shrink for hours; a shrink attempt that
   * makes no progress is as costly as one that does, and attempts past a few thousand rarely find a
   * smaller value.
   */
  private static final int SHRINKS = 10_000;

  /** Draws per example when a generator filters its values: QuickTheories' own default. */
  private static final int GENERATE_ATTEMPTS = 10;

  private Theories() {}

  /**
   * A property run of at most {@code examples} examples and at most {@code budget} of wall time,
   * shrinking a failure for up to 10,000 attempts.
   */
  public static QuickTheory qt(int examples, Duration budget) {
    return qt(examples, budget, SHRINKS);
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
                new SeedReporter(seed),
                prng -> new NoGuidance()));
  }

  /**
   * The seed of a run: the replayed one when {@code -Dpgetl.seed} is set, a fresh one otherwise.
   */
  static long seed() {
    Long replay = replaySeed();
    return replay != null ? replay : ThreadLocalRandom.current().nextLong();
  }

  /** Whether this run replays a seed (and so runs without a time budget). */
  static boolean replaying() {
    return replaySeed() != null;
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

  /** How many candidate sequences {@link #checkSequence} tries when it removes steps. */
  private static final int STEP_REMOVALS = 20_000;

  /**
   * Checks {@code property} for every sequence of {@code steps} and value of {@code other}, as
   * {@code qt.forAll(steps, other).checkAssert(property)} does; when it fails, removes steps from
   * the smallest failing sequence for as long as it still fails. QuickTheories shortens a list only
   * from its end, so without this a failing schedule keeps steps that play no part in the failure.
   * The removal is deterministic: a replayed seed reports the same sequence.
   */
  public static <T, A> void checkSequence(
      QuickTheory qt, Gen<List<T>> steps, Gen<A> other, BiConsumer<List<T>, A> property) {
    AtomicReference<Failing<T, A>> smallest = new AtomicReference<>();
    try {
      qt.forAll(steps, other)
          .checkAssert(
              (s, a) -> {
                try {
                  property.accept(s, a);
                } catch (Throwable t) {
                  // QuickTheories keeps the last failing example as the smallest
                  smallest.set(new Failing<>(new ArrayList<>(s), a));
                  throw t;
                }
              });
    } catch (AssertionError e) {
      Failing<T, A> found = smallest.get();
      if (found == null) {
        throw e;
      }
      List<T> fewer = removeSteps(found.steps(), found.other(), property);
      Throwable cause = failureOf(fewer, found.other(), property);
      if (fewer.size() == found.steps().size() || cause == null) {
        throw e;
      }
      AssertionError shorter =
          new AssertionError(
              e.getMessage()
                  + "\nwith steps removed ("
                  + fewer.size()
                  + " of "
                  + found.steps().size()
                  + " left):\n"
                  + fewer
                  + ", "
                  + found.other(),
              cause);
      throw shorter;
    }
  }

  private record Failing<T, A>(List<T> steps, A other) {}

  /** Removes runs of steps, halving the run length, while the sequence still fails. */
  private static <T, A> List<T> removeSteps(
      List<T> failing, A other, BiConsumer<List<T>, A> property) {
    List<T> current = failing;
    int tries = 0;
    for (int run = Math.max(1, current.size() / 2); run >= 1; run /= 2) {
      boolean removed = true;
      while (removed) {
        removed = false;
        for (int from = 0; from + run <= current.size() && current.size() > run; ) {
          if (++tries > STEP_REMOVALS) {
            return current;
          }
          List<T> candidate = new ArrayList<>(current.subList(0, from));
          candidate.addAll(current.subList(from + run, current.size()));
          if (failureOf(candidate, other, property) != null) {
            current = candidate;
            removed = true;
          } else {
            from += run;
          }
        }
      }
    }
    return current;
  }

  private static <T, A> Throwable failureOf(
      List<T> steps, A other, BiConsumer<List<T>, A> property) {
    try {
      property.accept(steps, other);
      return null;
    } catch (Throwable t) {
      return t;
    }
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
    private final long seed;

    SeedReporter(long seed) {
      this.seed = seed;
    }

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
              + " example(s) met the generators' assumptions, seed "
              + seed
              + replayHint(seed));
    }

    /** The smallest falsifying value, and the first one found (before shrinking). */
    private static String message(
        long seed, int count, Object smallest, List<Object> larger, AsString<Object> toString) {
      StringBuilder sb = new StringBuilder();
      sb.append("Property falsified after ")
          .append(count)
          .append(" example(s), seed ")
          .append(seed)
          .append(replayHint(seed))
          .append("\nsmallest falsifying value:\n")
          .append(toString.asString(smallest));
      if (!larger.isEmpty()) {
        sb.append("\nfirst falsifying value found (")
            .append(larger.size())
            .append(" shrink step(s) before):\n")
            .append(toString.asString(larger.get(larger.size() - 1)));
      }
      return sb.toString();
    }
  }
}
