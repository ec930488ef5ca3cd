package org.pgetl.store.postgres;

import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;

/** The store contract against {@link MemoryStore}, the reference semantics. */
class MemoryStoreContractTest extends PipelineStoreContract {

  @Override
  protected PipelineStore openStore(String pipelineId) {
    return new MemoryStore(pipelineId);
  }

  @Override
  protected void writeLifecycleAsOperator(
      PipelineStore store, String destinationName, String rawState) {
    ((MemoryStore) store).setLifecycleAsOperator(destinationName, rawState, "by hand", "operator");
  }
}
