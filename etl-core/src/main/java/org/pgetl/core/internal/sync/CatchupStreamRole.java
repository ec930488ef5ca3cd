package org.pgetl.core.internal.sync;

import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.apply.StreamRole;
import org.pgetl.destination.StreamId;
import org.pgetl.model.Lsn;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.PipelineStore.ProgressKey;
import org.pgetl.store.TableState;

/**
 * The role of a table-sync worker's stream after the copy: apply the table's changes from the
 * copy's consistent point until the position the apply worker asked for ({@code Catchup(lsn)}),
 * then store {@code SyncDone} once that is durable.
 */
final class CatchupStreamRole implements StreamRole {
  private final TableStateMachine tables;
  private final TableId table;
  private final TableName name;
  private final StreamId streamId;

  CatchupStreamRole(TableStateMachine tables, TableId table, TableName name, UUID copyAttempt) {
    this.tables = tables;
    this.table = table;
    this.name = name;
    this.streamId = StreamId.tableSync(table, copyAttempt);
  }

  @Override
  public String describe() {
    return "table sync of " + name;
  }

  @Override
  public StreamId streamId() {
    return streamId;
  }

  @Override
  public ProgressKey progressKey() {
    return ProgressKey.tableSync(table);
  }

  @Override
  public boolean owns(TableId t, Lsn commitLsn) {
    return table.equals(t);
  }

  @Override
  public boolean deliversMessages() {
    return false;
  }

  @Override
  public void afterCommit(Lsn commitEndLsn, java.time.Instant commitTime, Control control) {
    Lsn target = target();
    if (target != null && commitEndLsn.compareTo(target) >= 0) {
      control.completeAfterThisTransaction();
    }
  }

  @Override
  public void afterDurable(Lsn durableLsn, Control control) {
    tryComplete(durableLsn, control);
  }

  @Override
  public void whenIdle(Lsn lastReceived, Control control) {
    tryComplete(lastReceived, control);
  }

  @Override
  public boolean wantsDurabilityBarrier(Lsn lastReceived) {
    Lsn target = target();
    return target != null && lastReceived.compareTo(target) >= 0;
  }

  private void tryComplete(Lsn position, Control control) {
    Lsn target = target();
    if (target != null && position.compareTo(target) >= 0) {
      tables.syncDone(table, position);
      control.finish();
    }
  }

  private @Nullable Lsn target() {
    return tables.get(table) instanceof TableState.Catchup c ? c.lsn() : null;
  }
}
