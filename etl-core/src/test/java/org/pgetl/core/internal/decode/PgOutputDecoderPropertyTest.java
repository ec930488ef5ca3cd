package org.pgetl.core.internal.decode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Damaged messages never escape the decoder as anything but {@link EtlException}: truncations and
 * random byte flips of a valid message of every type either decode (and then every tuple value lies
 * inside the message) or raise {@code INVALID_DATA} / {@code REPLICATION_PROTOCOL_ERROR}.
 *
 * <p>Every truncation of every sample is tried (there are a few hundred). Flips are drawn at random
 * for at most {@link #BUDGET}; a failure prints its seed, which {@code -Dpgetl.seed=...} replays.
 */
class PgOutputDecoderPropertyTest {
  private static final Duration BUDGET = Duration.ofSeconds(4);
  private static final int PAD = 8;
  private static final Lsn WAL = Lsn.parse("1/2345");

  @Test
  void truncatedMessagesRaiseOnlyEtlException() {
    Map<String, Integer> outcomes = new TreeMap<>();
    for (Samples.Sample s : Samples.all()) {
      for (int len = 0; len < s.bytes().length; len++) {
        Damage damage = new Damage(s, Arrays.copyOf(s.bytes(), len));
        try {
          decodeOrEtlException(damage, outcomes);
        } catch (AssertionError | RuntimeException e) {
          throw new AssertionError("truncated to " + len + " bytes: " + damage, e);
        }
      }
    }
    assertThat(outcomes).containsKey(ErrorKind.INVALID_DATA.name());
  }

  @Test
  void flippedBytesRaiseOnlyEtlException() {
    Map<String, Integer> outcomes = new TreeMap<>();
    Theories.qt(200_000, BUDGET)
        .forAll(flips())
        .checkAssert(damage -> decodeOrEtlException(damage, outcomes));
    // the flips are neither all harmless nor all fatal
    assertThat(outcomes).containsKeys("decoded", ErrorKind.INVALID_DATA.name());
  }

  private static Gen<Damage> flips() {
    return Generate.pick(Samples.all()).flatMap(PgOutputDecoderPropertyTest::flipsOf);
  }

  /** One to four bytes of the sample set to random values; a quarter of them also cut short. */
  private static Gen<Damage> flipsOf(Samples.Sample s) {
    int n = s.bytes().length;
    Gen<int[]> edit =
        integers()
            .between(0, n - 1)
            .zip(
                Generate.bytes(Byte.MIN_VALUE, Byte.MAX_VALUE, (byte) 0),
                (i, v) -> new int[] {i, v});
    return lists()
        .of(edit)
        .ofSizeBetween(1, 4)
        .zip(
            integers().between(0, n),
            integers().between(0, 3),
            (list, cut, mode) -> {
              byte[] b = s.bytes().clone();
              for (int[] e : list) {
                b[e[0]] = (byte) e[1];
              }
              return new Damage(s, mode == 0 ? Arrays.copyOf(b, cut) : b);
            });
  }

  private static void decodeOrEtlException(Damage damage, Map<String, Integer> outcomes) {
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
      outcomes.merge("decoded", 1, Integer::sum);
    } catch (EtlException e) {
      assertThat(e.kind()).isIn(ErrorKind.INVALID_DATA, ErrorKind.REPLICATION_PROTOCOL_ERROR);
      assertThat(e.getMessage()).contains("pgoutput");
      outcomes.merge(e.kind().name(), 1, Integer::sum);
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
