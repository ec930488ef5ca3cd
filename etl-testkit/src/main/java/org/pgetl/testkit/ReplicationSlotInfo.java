package org.pgetl.testkit;

import org.jspecify.annotations.Nullable;

/**
 * One row of {@code pg_replication_slots}, as a test sees it.
 *
 * @param slotName the slot name
 * @param plugin the output plugin ({@code pgoutput}), null for a physical slot
 * @param slotType {@code logical} or {@code physical}
 * @param active whether a walsender streams the slot right now
 * @param activePid the pid of that walsender, or null
 * @param restartLsn {@code restart_lsn} as text (for example {@code 0/1A2B3C8}), or null
 * @param confirmedFlushLsn {@code confirmed_flush_lsn} as text, or null
 * @param walStatus {@code wal_status}: {@code reserved}, {@code extended}, {@code unreserved} or
 *     {@code lost}; null when {@code restart_lsn} is null
 */
public record ReplicationSlotInfo(
    String slotName,
    @Nullable String plugin,
    String slotType,
    boolean active,
    @Nullable Integer activePid,
    @Nullable String restartLsn,
    @Nullable String confirmedFlushLsn,
    @Nullable String walStatus) {}
