package org.pgetl.core.internal.pg;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.Lsn;

/**
 * A replication slot as {@code pg_replication_slots} shows it.
 *
 * @param slotName the slot's name
 * @param plugin the output plugin ({@code pgoutput}), null for a physical slot
 * @param slotType {@code logical} or {@code physical}
 * @param database the database of a logical slot, null for a physical one
 * @param temporary whether the slot goes away with its session
 * @param active whether a process is using the slot now
 * @param activePid the process using it, or 0
 * @param restartLsn the oldest WAL the slot keeps, or null
 * @param confirmedFlushLsn the position the client confirmed, or null (physical slots)
 * @param walStatus {@code reserved}, {@code extended}, {@code unreserved} or {@code lost}; null
 *     when the server does not say
 * @param invalidationReason why the server invalidated the slot (PostgreSQL 17+), else null
 * @param failover whether the slot is a failover slot, kept by standbys that synchronise slots
 *     (PostgreSQL 17+; always false before)
 */
public record SlotInfo(
    String slotName,
    String plugin,
    String slotType,
    String database,
    boolean temporary,
    boolean active,
    int activePid,
    @Nullable Lsn restartLsn,
    @Nullable Lsn confirmedFlushLsn,
    String walStatus,
    String invalidationReason,
    boolean failover) {

  /** Validates the components. */
  public SlotInfo {
    Objects.requireNonNull(slotName, "slotName");
    Objects.requireNonNull(slotType, "slotType");
  }

  /**
   * Returns true when the slot can no longer stream: the WAL it needs is gone ({@code wal_status =
   * 'lost'}) or the server recorded an invalidation reason.
   *
   * @return whether the slot is invalidated
   */
  public boolean isInvalidated() {
    return "lost".equals(walStatus) || invalidationReason != null;
  }

  /**
   * Returns true for a logical slot of the {@code pgoutput} plugin.
   *
   * @return whether pgetl can stream from this slot
   */
  public boolean isPgoutput() {
    return "logical".equals(slotType) && "pgoutput".equals(plugin);
  }
}
