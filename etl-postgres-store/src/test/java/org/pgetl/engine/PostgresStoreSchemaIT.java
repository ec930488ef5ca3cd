package org.pgetl.engine;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.postgres.PostgresStore;
import org.pgetl.testkit.TestDatabase;

/**
 * The engine's schema integration tests with the {@link PostgresStore} in the source database; a
 * restart opens a new store instance over the same database, as a new process would.
 */
class PostgresStoreSchemaIT extends SchemaSuite {
  private final List<PostgresStore> opened = new ArrayList<>();

  @Override
  protected PipelineStore newStore(TestDatabase db, String pipelineId) {
    PostgresStore store =
        PostgresStore.builder()
            .connection(PipelineHarness.source(db))
            .pipelineId(pipelineId)
            .build();
    opened.add(store);
    return store;
  }

  @Override
  protected PipelineStore reopen(PipelineStore old, TestDatabase db) {
    old.close();
    return newStore(db, old.pipelineId());
  }

  @AfterEach
  void closeStores() {
    opened.forEach(PostgresStore::close);
    opened.clear();
  }
}
