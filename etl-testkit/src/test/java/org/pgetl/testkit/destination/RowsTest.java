package org.pgetl.testkit.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.pgetl.testkit.destination.Rows.row;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.model.PgArray;
import org.pgetl.model.PgNumeric;
import org.pgetl.model.TableRow;

class RowsTest {

  @Test
  void bytesCompareByContentAlsoInsideArrays() {
    List<Object> a = row(1L, new byte[] {1, 2}, PgArray.ofList(17, List.of(new byte[] {3})));
    List<Object> b = row(1L, new byte[] {1, 2}, PgArray.ofList(17, List.of(new byte[] {3})));

    assertThat(a).isEqualTo(b);
    assertThat(a.hashCode()).isEqualTo(b.hashCode());
    assertThat(a)
        .isNotEqualTo(row(1L, new byte[] {1, 3}, PgArray.ofList(17, List.of(new byte[] {3}))));
    assertThat(a)
        .isNotEqualTo(row(1L, new byte[] {1, 2}, PgArray.ofList(17, List.of(new byte[] {4}))));
  }

  @Test
  void rowsWithoutArraysEqualPlainLists() {
    assertThat(row(1L, null, "x")).isEqualTo(Arrays.asList(1L, null, "x"));
    assertThat(row(1L, null, "x").hashCode()).isEqualTo(Arrays.asList(1L, null, "x").hashCode());
    assertThat(Rows.of(TableRow.of(1L, "x"))).isEqualTo(List.of(1L, "x"));
  }

  @Test
  void sortedOrdersColumnByColumnWithNullsFirst() {
    List<List<Object>> sorted =
        Rows.sorted(
            List.of(
                row(2L, "a"), row(1L, "b"), row(1L, null), row((Object) null, "z"), row(1L, "a")));

    assertThat(sorted)
        .containsExactly(row(null, "z"), row(1L, null), row(1L, "a"), row(1L, "b"), row(2L, "a"));
  }

  @Test
  void orderHandlesBytesNumericsAndArrays() {
    assertThat(Rows.order().compare(row(new byte[] {(byte) 0xff}), row(new byte[] {1})))
        .isPositive();
    assertThat(Rows.order().compare(row(PgNumeric.NAN), row(PgNumeric.parse("1e9")))).isPositive();
    assertThat(
            Rows.order()
                .compare(
                    row(PgArray.ofList(23, List.of(1, 2))), row(PgArray.ofList(23, List.of(1, 3)))))
        .isNegative();
    assertThat(Rows.order().compare(row(1L), row(1L, "x"))).isNegative();
  }

  @Test
  void toStringShowsBytesAsHex() {
    assertThat(row(1L, new byte[] {0x0a, (byte) 0xff})).hasToString("[1, \\x0aff]");
  }
}
