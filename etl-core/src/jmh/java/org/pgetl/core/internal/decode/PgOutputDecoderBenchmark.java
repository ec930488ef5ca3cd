package org.pgetl.core.internal.decode;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.pgetl.model.Lsn;

/**
 * Messages per second through {@link PgOutputDecoder} alone (no value conversion), for a
 * representative mix of pgoutput data messages on a 6-column table {@code (id int8, qty int4, name
 * text, price numeric, created timestamptz, attrs jsonb)}: 60% Inserts, 20% Updates without old
 * values, 20% Updates with the old key, built beforehand as byte arrays in text or binary tuple
 * form. One operation decodes one message.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class PgOutputDecoderBenchmark {
  private static final int MESSAGES = 1024;
  private static final Lsn WAL_START = Lsn.parse("0/16B3748");

  /** The tuple form: {@code text} (the default) or {@code binary} (pgoutput option binary). */
  @Param({"text", "binary"})
  public String format;

  private ByteBuffer[] messages;
  private PgOutputDecoder decoder;
  private int next;

  /** Builds the messages and the decoder. */
  @Setup
  public void setUp() {
    messages = BenchmarkMessages.mix(format.equals("binary"), MESSAGES);
    decoder = new PgOutputDecoder(1, StreamingMode.OFF);
  }

  /**
   * Decodes the next message of the mix.
   *
   * @return the message, consumed by JMH
   */
  @Benchmark
  public PgOutputMessage decode() {
    ByteBuffer m = messages[next];
    next = (next + 1) & (MESSAGES - 1);
    return decoder.decode(m, WAL_START);
  }
}
