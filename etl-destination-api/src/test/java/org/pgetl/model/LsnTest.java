package org.pgetl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;

class LsnTest {
  private static final Duration BUDGET = Duration.ofSeconds(5);

  /** Any 64-bit value, with the ones where a half or the sign changes mixed in. */
  private static Gen<Long> values() {
    return Theories.withEdges(
        longs().all(),
        0L,
        1L,
        -1L,
        Long.MIN_VALUE,
        Long.MAX_VALUE,
        0xFFFF_FFFFL,
        0x1_0000_0000L,
        0x7FFF_FFFF_FFFF_FFFFL,
        0x8000_0000_0000_0000L);
  }

  @Test
  void textFormRoundTrips() {
    Theories.qt(5000, BUDGET)
        .forAll(values())
        .checkAssert(
            value -> {
              Lsn lsn = Lsn.of(value);
              assertThat(Lsn.parse(lsn.toString())).isEqualTo(lsn);
              assertThat(Lsn.parse(lsn.toString().toLowerCase(java.util.Locale.ROOT)))
                  .isEqualTo(lsn);
            });
  }

  @Test
  void orderIsUnsignedAndMatchesTheTextOrderOfTheHalves() {
    Theories.qt(5000, BUDGET)
        .forAll(values(), values())
        .checkAssert(
            (a, b) -> {
              int expected = Long.compareUnsigned(a, b);
              assertThat(Integer.signum(Lsn.of(a).compareTo(Lsn.of(b))))
                  .isEqualTo(Integer.signum(expected));
              assertThat(Lsn.max(Lsn.of(a), Lsn.of(b)).value()).isEqualTo(expected >= 0 ? a : b);
            });
  }

  @Test
  void orderCrossesTheSignedBoundary() {
    Lsn below = Lsn.parse("7FFFFFFF/FFFFFFFF");
    Lsn above = Lsn.parse("80000000/0");
    assertThat(above).isGreaterThan(below);
    assertThat(Lsn.MAX).isGreaterThan(above);
    assertThat(Lsn.ZERO).isLessThan(below);
    assertThat(Lsn.MAX.toString()).isEqualTo("FFFFFFFF/FFFFFFFF");
    assertThat(above.bytesSince(below)).isEqualTo(1);
    assertThat(below.bytesSince(above)).isZero();
  }

  @Test
  void printsLikePostgres() {
    assertThat(Lsn.of(0x16B3748L).toString()).isEqualTo("0/16B3748");
    assertThat(Lsn.parse("16/B374D848").value()).isEqualTo(0x16B374D848L);
  }

  @Test
  void parseRejectsWhatIsNotAnLsn() {
    for (String bad :
        new String[] {
          "",
          "/",
          "0/",
          "/0",
          "0",
          "0//0",
          "0/0/0",
          "g/0",
          "0/-1",
          "+1/0",
          "123456789/0",
          "0/123456789",
          " 0/0",
          "0/0 ",
          "０/0"
        }) {
      assertThatThrownBy(() -> Lsn.parse(bad))
          .as("'%s'", bad)
          .isInstanceOf(EtlException.class)
          .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.INVALID_DATA));
    }
    assertThatThrownBy(() -> Lsn.parse(null)).isInstanceOf(EtlException.class);
  }
}
