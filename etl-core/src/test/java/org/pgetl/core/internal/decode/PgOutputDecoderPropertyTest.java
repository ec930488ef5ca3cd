package org.pgetl.core.internal.decode;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.statistics.Statistics;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

/**
 * Damaged messages never escape the decoder as anything but {@link EtlException}: random
 * truncations and byte flips of a valid message of every type either decode (and then every tuple
 * value lies inside the message) or raise {@code INVALID_DATA} / {@code
 * REPLICATION_PROTOCOL_ERROR}.
 *
 * <p>Each property runs for at most {@link #BUDGET} (tries past the budget return at once); jqwik
 * prints the seed of every run in its report, and {@code @Property(seed = "...")} replays it.
 */
class PgOutputDecoderPropertyTest {
  private static final Duration BUDGET = Duration.ofSeconds(4);
  private static final int PAD = 8;
  private static final Lsn WAL = Lsn.parse("1/2345");

  private long deadline;

  @BeforeProperty
  void startClock() {
    deadline = System.nanoTime() + BUDGET.toNanos();
  }

  private boolean overBudget() {
    return System.nanoTime() - deadline > 0;
  }

  @Property(tries = 200_000)
  void truncatedMessagesRaiseOnlyEtlException(@ForAll("truncations") Damage damage) {
    if (overBudget()) {
      return;
    }
    decodeOrEtlException(damage);
  }

  @Property(tries = 200_000)
  void flippedBytesRaiseOnlyEtlException(@ForAll("flips") Damage damage) {
    if (overBudget()) {
      return;
    }
    decodeOrEtlException(damage);
  }

  @Provide
  Arbitrary<Damage> truncations() {
    return Arbitraries.of(Samples.all())
        .flatMap(
            s ->
                Arbitraries.integers()
                    .between(0, s.bytes().length - 1)
                    .map(len -> new Damage(s, Arrays.copyOf(s.bytes(), len))));
  }

  @Provide
  Arbitrary<Damage> flips() {
    return Arbitraries.of(Samples.all())
        .flatMap(
            s -> {
              Arbitrary<Integer> index = Arbitraries.integers().between(0, s.bytes().length - 1);
              Arbitrary<Byte> value = Arbitraries.bytes();
              Arbitrary<List<int[]>> edits =
                  Combinators.combine(index, value)
                      .as((i, v) -> new int[] {i, v})
                      .list()
                      .ofMinSize(1)
                      .ofMaxSize(4);
              Arbitrary<Integer> keep = Arbitraries.integers().between(0, s.bytes().length);
              return Combinators.combine(edits, keep, Arbitraries.integers().between(0, 3))
                  .as(
                      (list, cut, mode) -> {
                        byte[] b = s.bytes().clone();
                        for (int[] e : list) {
                          b[e[0]] = (byte) e[1];
                        }
                        // a quarter of the flipped messages are also cut short
                        return new Damage(s, mode == 0 ? Arrays.copyOf(b, cut) : b);
                      });
            });
  }

  private static void decodeOrEtlException(Damage damage) {
    byte[] bytes = damage.bytes();
    // the message sits inside a larger array, as in pgjdbc's buffers: reading past its end would
    // read the padding instead of failing, so a successful decode must stay inside the message
    byte[] frame = new byte[bytes.length + 2 * PAD];
    Arrays.fill(frame, (byte) 0x55);
    System.arraycopy(bytes, 0, frame, PAD, bytes.length);
    ByteBuffer buffer = ByteBuffer.wrap(frame, PAD, bytes.length).slice();
    PgOutputDecoder decoder = damage.sample().decoder();
    try {
      PgOutputMessage m = decoder.decode(buffer, WAL);
      assertInside(m, PAD, PAD + bytes.length);
      Statistics.collect("decoded");
    } catch (EtlException e) {
      assertThat(e.kind()).isIn(ErrorKind.INVALID_DATA, ErrorKind.REPLICATION_PROTOCOL_ERROR);
      assertThat(e.getMessage()).contains("pgoutput");
      Statistics.collect(e.kind().name());
    }
  }

  private static void assertInside(PgOutputMessage m, int from, int to) {
    if (m instanceof PgOutputMessage.Insert i) {
      assertInside(i.newTuple(), from, to);
    } else if (m instanceof PgOutputMessage.Update u) {
      if (u.oldTuple() != null) {
        assertInside(u.oldTuple(), from, to);
      }
      assertInside(u.newTuple(), from, to);
    } else if (m instanceof PgOutputMessage.Delete d) {
      assertInside(d.oldTuple(), from, to);
    } else if (m instanceof PgOutputMessage.LogicalMessage lm) {
      assertThat(lm.content().length()).isLessThanOrEqualTo(to - from);
    }
  }

  private static void assertInside(TupleData t, int from, int to) {
    for (int i = 0; i < t.columnCount(); i++) {
      if (t.hasValue(i)) {
        assertThat(t.offset(i)).isBetween(from, to);
        assertThat(t.offset(i) + t.length(i)).isBetween(from, to);
      }
    }
  }

  /** A damaged copy of a sample message. */
  record Damage(Samples.Sample sample, byte[] bytes) {
    @Override
    public String toString() {
      return sample.name() + " " + Arrays.toString(bytes);
    }
  }
}
