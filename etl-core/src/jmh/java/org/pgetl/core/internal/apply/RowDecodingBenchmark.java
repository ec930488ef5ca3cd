package org.pgetl.core.internal.apply;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
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
import org.pgetl.core.internal.codec.TypeRegistry;
import org.pgetl.core.internal.codec.ValueCodec;
import org.pgetl.core.internal.decode.BenchmarkMessages;
import org.pgetl.core.internal.decode.PgOutputDecoder;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;

/**
 * Rows per second decoded from pgoutput messages into the model's rows: the decoder plus the value
 * codecs (what the apply loop does per change, excluding I/O and batching), for the mix of {@link
 * BenchmarkMessages} in text and binary tuple form. One operation turns one message into a row (an
 * Insert's {@code TableRow}, an Update's new row and old key).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RowDecodingBenchmark {
  private static final int MESSAGES = 1024;
  private static final Lsn WAL_START = Lsn.parse("0/16B3748");

  /** The tuple form: {@code text} (the default) or {@code binary} (pgoutput option binary). */
  @Param({"text", "binary"})
  public String format;

  private ByteBuffer[] messages;
  private PgOutputDecoder decoder;
  private RelationCache.Entry entry;
  private int next;

  /** Builds the messages, the decoder and the relation's codecs. */
  @Setup
  public void setUp() {
    messages = BenchmarkMessages.mix(format.equals("binary"), MESSAGES);
    decoder = new PgOutputDecoder(1, StreamingMode.OFF);
    PgOutputMessage.Relation r = BenchmarkMessages.relation();
    TypeRegistry types = new TypeRegistry();
    int[] oids = r.columns().stream().mapToInt(PgOutputMessage.Relation.Column::typeOid).toArray();
    List<ValueCodec> codecs = types.codecs(oids);
    List<org.pgetl.model.ColumnSchema> cols =
        r.columns().stream()
            .map(
                c ->
                    new org.pgetl.model.ColumnSchema(
                        c.name(),
                        c.typeOid(),
                        c.typeModifier(),
                        "t",
                        1,
                        c.isKey() ? 1 : 0,
                        true,
                        null))
            .toList();
    boolean[] mask = new boolean[cols.size()];
    Arrays.fill(mask, true);
    ReplicatedTableSchema schema =
        ReplicatedTableSchema.of(
            new TableSchema(
                new TableId(r.relationId()), new TableName("public", "orders"), cols, Lsn.ZERO),
            mask,
            IdentityKind.PRIMARY_KEY,
            new int[] {0});
    entry = new RelationCache.Entry(schema.id(), schema, codecs);
  }

  /**
   * Decodes the next message of the mix and converts its tuples into rows.
   *
   * @return the new row, consumed by JMH
   */
  @Benchmark
  public Object decodeRow() {
    ByteBuffer m = messages[next];
    next = (next + 1) & (MESSAGES - 1);
    PgOutputMessage msg = decoder.decode(m, WAL_START);
    if (msg instanceof PgOutputMessage.Insert ins) {
      return RowConverter.full(entry, ins.newTuple(), "Insert");
    }
    PgOutputMessage.Update up = (PgOutputMessage.Update) msg;
    Object row = RowConverter.updated(entry, up.newTuple(), up.oldTuple());
    Object old = RowConverter.old(entry, up.oldTupleKind(), up.oldTuple(), "Update");
    return old == null ? row : old;
  }
}
