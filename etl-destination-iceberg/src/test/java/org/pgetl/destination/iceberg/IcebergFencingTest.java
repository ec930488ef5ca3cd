package org.pgetl.destination.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.catalog.TableIdentifier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyBatchId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.model.Event;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.testkit.destination.InMemoryDestinationContext;
import org.pgetl.testkit.destination.SchemaBuilder;
import org.pgetl.testkit.destination.Transactions;

/**
 * Two instances of one pipeline over one warehouse: once the instance with the newer lease epoch
 * committed to a table, the older one's commits are refused (its writes answered {@code
 * shutdown()}, the pipeline asked to stop) and nothing it wrote afterwards reaches the table.
 */
@Timeout(60)
class IcebergFencingTest {
  private static final ReplicatedTableSchema ITEMS =
      SchemaBuilder.table(16501, "public.items").key("id", "int8").column("v", "text").build();

  @TempDir Path dir;

  private IcebergDestination started(InMemoryDestinationContext ctx) {
    IcebergDestination d =
        IcebergDestination.hadoop(dir).commitInterval(Duration.ofMillis(20)).build();
    d.startup(ctx);
    return d;
  }

  private static Outcome answer(AsyncResult r) throws InterruptedException {
    return r.await(Duration.ofSeconds(20)).orElseThrow();
  }

  private static Outcome write(IcebergDestination d, List<Event> events) throws Exception {
    AsyncResult r = AsyncResult.create();
    d.writeEvents(StreamId.APPLY, events, WriteDurability.REQUIRE_DURABLE, r);
    return answer(r);
  }

  @Test
  void anInstanceWithAnOlderEpochCannotCommitAfterTheNewerOneDid() throws Exception {
    InMemoryDestinationContext oldCtx = new InMemoryDestinationContext("fenced");
    oldCtx.setEpoch(1);
    IcebergDestination old = started(oldCtx);
    UUID attempt = UUID.randomUUID();
    AsyncResult drop = AsyncResult.create();
    old.dropTableForCopy(ITEMS, attempt, drop);
    assertThat(answer(drop).kind()).isEqualTo(Outcome.Kind.DURABLE);
    AsyncResult batch = AsyncResult.create();
    old.writeTableRows(
        ITEMS,
        new TableCopyWrite.Batch(new TableCopyBatchId(attempt, 0), List.of(TableRow.of(1L, "a"))),
        batch);
    answer(batch);
    AsyncResult finish = AsyncResult.create();
    old.writeTableRows(ITEMS, new TableCopyWrite.Finish(attempt, 1, 1), finish);
    assertThat(answer(finish).kind()).isEqualTo(Outcome.Kind.DURABLE);

    // a takeover: the new instance has epoch 2 and commits first
    InMemoryDestinationContext newCtx = new InMemoryDestinationContext("fenced");
    newCtx.setEpoch(2);
    IcebergDestination fresh = started(newCtx);
    Transactions log = new Transactions();
    assertThat(write(fresh, log.begin().relation(ITEMS).insert(ITEMS, 2L, "new").commit()).kind())
        .isEqualTo(Outcome.Kind.DURABLE);

    // the old instance, still running, writes: refused, and asked to stop
    Outcome refused = write(old, log.begin().insert(ITEMS, 3L, "old").commit());
    assertThat(refused.kind()).isEqualTo(Outcome.Kind.SHUTDOWN);
    assertThat(oldCtx.shutdownRequests()).isPositive();
    assertThat(write(old, log.begin().insert(ITEMS, 4L, "old").commit()).kind())
        .as("every later write of the fenced instance")
        .isEqualTo(Outcome.Kind.SHUTDOWN);

    List<List<@Nullable Object>> rows = IcebergReader.hadoop(dir).rows(ITEMS);
    assertThat(rows).containsExactlyInAnyOrder(List.of(1L, "a"), List.of(2L, "new"));
    assertThat(
            IcebergReader.hadoop(dir)
                .table(TableIdentifier.of("public", "items"))
                .properties()
                .get(IcebergTable.EPOCH))
        .isEqualTo("2");
    old.shutdown();
    fresh.shutdown();
  }
}
