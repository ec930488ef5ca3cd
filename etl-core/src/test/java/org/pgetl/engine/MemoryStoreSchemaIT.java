package org.pgetl.engine;

import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.testkit.TestDatabase;

/** The engine's schema integration tests with the {@link MemoryStore}. */
class MemoryStoreSchemaIT extends SchemaSuite {
  @Override
  protected PipelineStore newStore(TestDatabase db, String pipelineId) {
    return new MemoryStore(pipelineId);
  }
}
