package org.pgetl.engine;

import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.testkit.TestDatabase;

/** The engine's integration tests with the {@link MemoryStore}. */
class MemoryStorePipelineIT extends PipelineSuite {
  @Override
  protected PipelineStore newStore(TestDatabase db, String pipelineId) {
    return new MemoryStore(pipelineId);
  }
}
