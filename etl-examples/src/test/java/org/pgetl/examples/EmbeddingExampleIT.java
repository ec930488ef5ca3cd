package org.pgetl.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.testkit.TestDatabase;
import org.pgetl.testkit.WithPostgres;

/** The README's embedding example, run as a process: it copies, streams, and drains on SIGTERM. */
@WithPostgres
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class EmbeddingExampleIT {

  @Test
  void copiesThenStreamsUntilSigterm(TestDatabase db, @TempDir Path dir) throws Exception {
    db.execute(
        "CREATE TABLE orders (id int PRIMARY KEY, item text)",
        "INSERT INTO orders VALUES (1, 'first')",
        "CREATE PUBLICATION shop FOR TABLE orders");
    String url = db.jdbcUrl() + "?user=" + db.user() + "&password=" + db.password();
    ChildJvm example = ChildJvm.start(dir, EmbeddingExample.class, List.of(url));
    assertThat(example.awaitLine(l -> l.contains("\"first\""), 2)).as(example.text()).isTrue();
    db.execute("INSERT INTO orders VALUES (2, 'second')");
    assertThat(example.awaitLine(l -> l.contains("\"second\""), 1)).as(example.text()).isTrue();
    example.terminate();
    example.waitFor(2);
    assertThat(example.text()).doesNotContain("Exception");
    assertThat(db.replicationSlots())
        .extracting(s -> s.slotName())
        .containsExactly("pgetl_apply_shop");
  }
}
