package org.pgetl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.internal.WireDecoder;
import org.pgetl.destination.internal.WireRows;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableRow.WireFormat;

class TableRowWireTest {
  /** Text values, counting its decodes; "bad" does not decode. */
  private static final class Counting implements WireDecoder {
    final AtomicInteger decodes = new AtomicInteger();

    @Override
    public WireFormat format(int column) {
      return WireFormat.TEXT;
    }

    @Override
    public Object decode(int column, byte[] buf, int off, int len) {
      decodes.incrementAndGet();
      String s = new String(buf, off, len, StandardCharsets.UTF_8);
      if (s.equals("bad")) {
        throw new EtlException(ErrorKind.INVALID_DATA, "column " + column + ": not a value");
      }
      return s;
    }
  }

  private static TableRow row(Counting decoder, String... values) {
    StringBuilder all = new StringBuilder();
    long[] spans = new long[values.length];
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        spans[i] = WireRows.NULL;
      } else {
        spans[i] = WireRows.span(all.length(), values[i].length());
        all.append(values[i]);
      }
    }
    return WireRows.row(all.toString().getBytes(StandardCharsets.UTF_8), spans, decoder, 100);
  }

  @Test
  void aValueIsDecodedAtItsFirstReadOnlyAndKept() {
    Counting decoder = new Counting();
    TableRow r = row(decoder, "ab", null, "cde");
    assertThat(r.size()).isEqualTo(3);
    assertThat(r.isNull(1)).isTrue();
    assertThat(r.isNull(0)).isFalse();
    assertThat(r.wireFormat(2)).isEqualTo(WireFormat.TEXT);
    assertThat(r.wireFormat(1)).isNull();
    ByteBuffer b = r.wireValue(2);
    assertThat(StandardCharsets.UTF_8.decode(b).toString()).isEqualTo("cde");
    assertThat(decoder.decodes).hasValue(0);

    Object first = r.get(0);
    assertThat(first).isEqualTo("ab");
    assertThat(r.getString(0)).isSameAs(first);
    assertThat(r.get(1)).isNull();
    assertThat(decoder.decodes).hasValue(1);
    assertThat(r.values()).containsExactly("ab", null, "cde");
    assertThat(decoder.decodes).hasValue(2);
    assertThat(r)
        .isEqualTo(TableRow.of("ab", null, "cde"))
        .hasSameHashCodeAs(TableRow.of("ab", null, "cde"));
    assertThat(decoder.decodes).hasValue(2);
  }

  @Test
  void theWireValueIsAReadOnlyViewOfTheValueAlone() {
    TableRow r = row(new Counting(), "xy", "z");
    ByteBuffer b = r.wireValue(1);
    assertThat(b.position()).isZero();
    assertThat(b.remaining()).isEqualTo(1);
    assertThat(b.get(0)).isEqualTo((byte) 'z');
    assertThatThrownBy(() -> b.put(0, (byte) 'q')).isInstanceOf(ReadOnlyBufferException.class);
    assertThat(r.getString(1)).isEqualTo("z");
  }

  @Test
  void rowsOfJavaValuesHaveNoWireForm() {
    TableRow r = TableRow.of(1L, "a");
    assertThat(r.wireFormat(0)).isNull();
    assertThat(r.wireValue(1)).isNull();
  }

  @Test
  void aValueThatCannotBeDecodedFailsTheReadThatAsksForIt() {
    Counting decoder = new Counting();
    TableRow r = row(decoder, "ok", "bad");
    assertThat(r.getString(0)).isEqualTo("ok");
    assertThatThrownBy(() -> r.get(1))
        .isInstanceOf(EtlException.class)
        .extracting(e -> ((EtlException) e).kind())
        .isEqualTo(ErrorKind.INVALID_DATA);
    assertThat(r.wireValue(1)).isNotNull();
  }

  @Test
  void threadsReadingTheSameValueGetOneInstance() throws Exception {
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 200; round++) {
        TableRow r = row(new Counting(), "shared value " + round);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Object>> reads = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          reads.add(
              pool.submit(
                  () -> {
                    go.await();
                    return r.get(0);
                  }));
        }
        go.countDown();
        Object first = reads.get(0).get();
        assertThat(first).isEqualTo("shared value " + round);
        for (Future<Object> f : reads) {
          assertThat(f.get()).isSameAs(first);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
