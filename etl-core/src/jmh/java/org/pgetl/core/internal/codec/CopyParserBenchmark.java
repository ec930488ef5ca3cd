package org.pgetl.core.internal.codec;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Rows per second of the COPY row parsers, text format against binary format, on one thread and
 * without I/O: 1024 rows of (int8, int4, text, numeric(12,2), timestamptz, jsonb) as PostgreSQL 17
 * sent them (captured by {@link CopyCapture}), each decoded into an {@code Object[]} of Java
 * values. One operation is one row.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 10, time = 1)
@Fork(1)
public class CopyParserBenchmark {
  static final int ROWS = 1024;
  private static final int[] TYPES = {20, 23, 25, 1700, 1184, 3802};

  private byte[][] textRows;
  private byte[][] binaryRows;
  private CopyTextParser textParser;
  private CopyBinaryParser binaryParser;

  /** Loads the captured messages and primes the binary parser with the file header. */
  @Setup
  public void load() throws IOException {
    TypeRegistry registry = new TypeRegistry();
    textParser = new CopyTextParser(registry.codecs(TYPES));
    binaryParser = new CopyBinaryParser(registry.codecs(TYPES));
    textRows = messages("copy-text.bin").toArray(new byte[0][]);
    List<byte[]> binary = messages("copy-binary.bin");
    // the first message is the 19-byte file header followed by the first row
    byte[] first = binary.get(0);
    byte[] header = java.util.Arrays.copyOf(first, 19);
    binaryParser.parseRow(header, 0, header.length);
    binary.set(0, java.util.Arrays.copyOfRange(first, 19, first.length));
    binary.remove(binary.size() - 1); // the trailer
    binaryRows = binary.toArray(new byte[0][]);
    if (textRows.length != ROWS || binaryRows.length != ROWS) {
      throw new IllegalStateException("expected " + ROWS + " rows of each format");
    }
    // both captures must decode to the same rows, or the comparison means nothing
    for (int i = 0; i < ROWS; i++) {
      Object[] t = textParser.parseRow(textRows[i], 0, textRows[i].length);
      Object[] b = binaryParser.parseRow(binaryRows[i], 0, binaryRows[i].length);
      if (!java.util.Arrays.equals(t, b) || t[0] == null || t[5] == null) {
        throw new IllegalStateException("row " + i + " decodes differently from text and binary");
      }
    }
  }

  private static List<byte[]> messages(String name) throws IOException {
    List<byte[]> list = new ArrayList<>();
    try (InputStream in = CopyParserBenchmark.class.getResourceAsStream(name);
        DataInputStream data = new DataInputStream(in)) {
      while (true) {
        int len;
        try {
          len = data.readInt();
        } catch (EOFException end) {
          return list;
        }
        byte[] m = new byte[len];
        data.readFully(m);
        list.add(m);
      }
    }
  }

  /** Parses every row of the text capture. */
  @Benchmark
  @OperationsPerInvocation(ROWS)
  public void copyText(Blackhole bh) {
    for (byte[] m : textRows) {
      bh.consume(textParser.parseRow(m, 0, m.length));
    }
  }

  /** Parses every row of the binary capture. */
  @Benchmark
  @OperationsPerInvocation(ROWS)
  public void copyBinary(Blackhole bh) {
    for (byte[] m : binaryRows) {
      bh.consume(binaryParser.parseRow(m, 0, m.length));
    }
  }
}
