package org.pgetl.core.internal.pg;

import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * A PostgreSQL server version, as {@code server_version_num} gives it (for example 170006), and
 * what the replication protocol of that version supports.
 *
 * @param number the {@code server_version_num} value
 */
public record ServerVersion(int number) implements Comparable<ServerVersion> {
  /** The oldest major version pgetl supports (the first with {@code wal_status} and pubviaroot). */
  public static final int MIN_SUPPORTED_MAJOR = 13;

  /** The first major version with failover slots ({@code CREATE_REPLICATION_SLOT ... FAILOVER}). */
  public static final int FAILOVER_SLOTS_MAJOR = 17;

  /**
   * Returns the version of a major release, for comparisons: {@code ServerVersion.ofMajor(15)}.
   *
   * @param major the major version, 10 or later
   * @return the version {@code major}.0
   */
  public static ServerVersion ofMajor(int major) {
    return new ServerVersion(major * 10000);
  }

  /**
   * Returns the major version, for example 17.
   *
   * @return the major version
   */
  public int major() {
    return number / 10000;
  }

  /**
   * Returns true when this version is {@code major} or later.
   *
   * @param major a major version
   * @return whether this server is at least that major version
   */
  public boolean atLeast(int major) {
    return major() >= major;
  }

  /**
   * Returns the highest {@code pgoutput} protocol version this server speaks: 1 before 14, 2 on 14
   * (streaming of large transactions), 3 on 15 (two-phase commit), 4 from 16 on (parallel
   * streaming).
   *
   * @return the protocol version
   */
  public int maxProtoVersion() {
    int major = major();
    if (major >= 16) {
      return 4;
    } else if (major == 15) {
      return 3;
    } else if (major == 14) {
      return 2;
    }
    return 1;
  }

  /**
   * Returns true when {@code pgoutput} accepts the {@code binary} and {@code messages} options
   * (PostgreSQL 14 and later).
   *
   * @return whether binary tuples and logical messages are available
   */
  public boolean supportsBinaryAndMessages() {
    return atLeast(14);
  }

  /**
   * Returns true when publications carry row filters and column lists (PostgreSQL 15 and later).
   *
   * @return whether row filters and column lists exist
   */
  public boolean supportsRowFiltersAndColumnLists() {
    return atLeast(15);
  }

  /**
   * Returns true when logical slots can be created as failover slots, which a physical standby with
   * {@code sync_replication_slots} keeps in step (PostgreSQL 17 and later): {@code
   * CREATE_REPLICATION_SLOT ... (FAILOVER)}, {@code ALTER_REPLICATION_SLOT}, and the {@code
   * failover} column of {@code pg_replication_slots}.
   *
   * @return whether failover slots exist
   */
  public boolean supportsFailoverSlots() {
    return atLeast(FAILOVER_SLOTS_MAJOR);
  }

  /**
   * Fails when failover slots are asked for and this server has none.
   *
   * @param requested whether the pipeline's {@code failoverSlots} setting is on
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} naming the setting and the version
   */
  public void requireFailoverSlots(boolean requested) {
    if (requested && !supportsFailoverSlots()) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "failoverSlots needs PostgreSQL "
              + FAILOVER_SLOTS_MAJOR
              + " or later, but the source runs PostgreSQL "
              + this,
          "turn failoverSlots off, or upgrade the source: before 17 a promoted standby has no copy"
              + " of the apply slot");
    }
  }

  /**
   * Returns whether the apply slot is a failover slot on this server under a pipeline's settings:
   * {@code ON} always (failing before 17), {@code OFF} never, {@code AUTO} on 17+ unless the slots
   * are temporary (the server refuses a temporary failover slot).
   *
   * @param setting the pipeline's {@code failoverSlots} setting
   * @param temporarySlots the pipeline's {@code temporarySlots} setting
   * @return whether the apply slot is a failover slot
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} for {@code ON} before 17
   */
  public boolean failoverSlots(
      org.pgetl.PipelineConfig.FailoverSlots setting, boolean temporarySlots) {
    return switch (setting) {
      case ON -> {
        requireFailoverSlots(true);
        yield true;
      }
      case OFF -> false;
      case AUTO -> supportsFailoverSlots() && !temporarySlots;
    };
  }

  @Override
  public int compareTo(ServerVersion other) {
    return Integer.compare(number, other.number);
  }

  /**
   * Returns the version as {@code major.minor}, for example {@code 17.6}.
   *
   * @return the readable version
   */
  @Override
  public String toString() {
    return major() + "." + (number % 10000);
  }
}
