package org.pgetl.core.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.model.PgNumeric;
import org.pgetl.testing.Theories;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * The binary numeric decoding, which builds the unscaled value from the base-10000 digits in a long
 * or by multiply-add on a BigInteger, against a straightforward one that writes every digit out as
 * text and parses it: both must give equal values with equal scales over random headers and digits,
 * including values at the edge of a long, digits cut by the display scale, negative zero and the
 * special values.
 */
class NumericBinaryDecodingTest {
  private static final Duration BUDGET = Duration.ofSeconds(4);
  private static final ValueCodec NUMERIC = new TypeRegistry().codec(1700);

  /** One numeric_send form: its header and base-10000 digits. */
  record Form(int weight, boolean negative, int dscale, int[] digits) {
    byte[] bytes() {
      byte[] b = new byte[8 + 2 * digits.length];
      put16(b, 0, digits.length);
      put16(b, 2, weight);
      put16(b, 4, negative ? 0x4000 : 0);
      put16(b, 6, dscale);
      for (int i = 0; i < digits.length; i++) {
        put16(b, 8 + 2 * i, digits[i]);
      }
      return b;
    }

    @Override
    public String toString() {
      StringBuilder s = new StringBuilder();
      for (int d : digits) {
        s.append(d).append(' ');
      }
      return "weight " + weight + (negative ? " -" : " +") + " dscale " + dscale + " digits " + s;
    }
  }

  private static void put16(byte[] b, int at, int v) {
    b[at] = (byte) (v >> 8);
    b[at + 1] = (byte) v;
  }

  /** The straightforward decoding: every digit as text, then BigInteger and the display scale. */
  private static PgNumeric reference(Form f) {
    if (f.digits().length == 0) {
      return PgNumeric.of(BigDecimal.ZERO.setScale(f.dscale()));
    }
    StringBuilder s = new StringBuilder();
    for (int d : f.digits()) {
      s.append(String.format("%04d", d));
    }
    BigInteger unscaled = new BigInteger(s.toString());
    if (f.negative()) {
      unscaled = unscaled.negate();
    }
    int scale = 4 * (f.digits().length - 1 - f.weight());
    return PgNumeric.of(new BigDecimal(unscaled, scale).setScale(f.dscale(), RoundingMode.DOWN));
  }

  private static PgNumeric decode(Form f) {
    byte[] b = f.bytes();
    return (PgNumeric) NUMERIC.decodeBinary(b, 0, b.length);
  }

  private static Gen<Integer> digit() {
    return Generate.oneOf(
        Generate.range(0, 9999),
        Generate.constant(0),
        Generate.constant(9999),
        Generate.range(0, 9),
        Generate.constant(9223),
        Generate.constant(3720));
  }

  private static Gen<Form> forms() {
    Gen<Integer> count =
        Generate.oneOf(Generate.range(1, 6), Generate.range(1, 6), Generate.range(1, 40));
    Gen<int[]> digits = Generate.intArrays(count, digit());
    return digits
        .zip(
            Generate.range(-12, 24),
            Generate.booleans(),
            Generate.oneOf(Generate.range(0, 8), Generate.range(0, 60)),
            (d, w, neg, scale) -> new Form(w, neg, scale, d))
        .describedAs(Form::toString);
  }

  @Test
  void equalsTheStraightforwardDecodingOverRandomForms() {
    Theories.qt(20_000, BUDGET)
        .forAll(forms())
        .checkAssert(f -> assertThat(decode(f)).as(f.toString()).isEqualTo(reference(f)));
  }

  @Test
  void edgeCases() {
    List<Form> edges = new ArrayList<>();
    // around Long.MAX_VALUE (9223372036854775807) as an integer and with fractions
    edges.add(new Form(4, false, 0, new int[] {922, 3372, 368, 5477, 5807}));
    edges.add(new Form(4, true, 0, new int[] {922, 3372, 368, 5477, 5808}));
    edges.add(new Form(4, false, 0, new int[] {922, 3372, 368, 5477, 5808}));
    edges.add(new Form(4, false, 2, new int[] {9999, 9999, 9999, 9999, 9999}));
    edges.add(new Form(3, false, 0, new int[] {9999, 9999, 9999, 9999}));
    edges.add(new Form(3, false, 4, new int[] {9999, 9999, 9999, 9999, 9999}));
    // negative zero keeps its scale and is zero
    edges.add(new Form(0, true, 2, new int[] {0}));
    edges.add(new Form(0, true, 0, new int[] {}));
    // digits hidden by the display scale are cut, toward zero
    edges.add(new Form(0, true, 2, new int[] {1, 2345}));
    edges.add(new Form(-1, false, 0, new int[] {9999}));
    edges.add(new Form(-5, false, 30, new int[] {1, 2, 3}));
    // a scale far above the digits, and a weight far above them
    edges.add(new Form(0, false, 60, new int[] {7}));
    edges.add(new Form(30, false, 0, new int[] {7}));
    edges.add(new Form(30, false, 5, new int[] {7, 1}));
    for (Form f : edges) {
      assertThat(decode(f)).as(f.toString()).isEqualTo(reference(f));
    }
    assertThat(decode(new Form(4, false, 0, new int[] {922, 3372, 368, 5477, 5807})))
        .isEqualTo(PgNumeric.of(new BigDecimal(Long.MAX_VALUE)));
    assertThat(decode(new Form(4, true, 0, new int[] {922, 3372, 368, 5477, 5808})))
        .isEqualTo(PgNumeric.of(new BigDecimal(Long.MIN_VALUE)));
    assertThat(decode(new Form(0, true, 2, new int[] {0})).toString()).isEqualTo("0.00");
  }

  @Test
  void specialValuesStaySpecial() {
    assertThat(NUMERIC.decodeBinary(new byte[] {0, 0, 0, 0, (byte) 0xC0, 0, 0, 0}, 0, 8))
        .isSameAs(PgNumeric.NAN);
    assertThat(NUMERIC.decodeBinary(new byte[] {0, 0, 0, 0, (byte) 0xD0, 0, 0, 0}, 0, 8))
        .isSameAs(PgNumeric.POSITIVE_INFINITY);
    assertThat(NUMERIC.decodeBinary(new byte[] {0, 0, 0, 0, (byte) 0xF0, 0, 0, 0}, 0, 8))
        .isSameAs(PgNumeric.NEGATIVE_INFINITY);
  }
}
