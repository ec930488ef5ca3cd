package org.pgetl.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.PgConnectionConfig;
import org.pgetl.Pipeline;
import org.pgetl.PipelineConfig;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.TableState;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PipelineSmokeIT {

  @Test
  void copiesThenStreams(TestDatabase db) throws Exception {
    db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(10,2))",
        "INSERT INTO items SELECT g, 'item ' || g, g * 1.5 FROM generate_series(1, 1000) g",
        "CREATE PUBLICATION pub FOR TABLE items");
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId("smoke")
            .publication("pub")
            .source(
                PgConnectionConfig.builder()
                    .host(db.host())
                    .port(db.port())
                    .database(db.name())
                    .user(db.user())
                    .password(db.password())
                    .build())
            .build();
    MemoryStore store = new MemoryStore("smoke");
    SimpleDestination dest = new SimpleDestination();
    try (Pipeline p = Pipeline.create(config, store, dest)) {
      p.start();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  store.tableStates().values().stream()
                      .allMatch(s -> s.type() == TableState.Type.READY));
      assertThat(dest.tables.get("public.items")).hasSize(1000);
      db.execute(
          "INSERT INTO items VALUES (1001, 'new', 2.50)",
          "UPDATE items SET name = 'changed' WHERE id = 5",
          "DELETE FROM items WHERE id = 6");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> dest.tables.get("public.items").containsKey(1001));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> !dest.tables.get("public.items").containsKey(6));
      assertThat(dest.tables.get("public.items").get(5).get(1)).isEqualTo("changed");
    }
    assertThat(db.replicationSlots())
        .extracting(s -> s.slotName())
        .containsExactly("pgetl_apply_smoke");
  }
}
