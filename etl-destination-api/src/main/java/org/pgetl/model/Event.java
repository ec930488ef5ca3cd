package org.pgetl.model;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A change event from the replication stream, delivered to {@code Destination.writeEvents}.
 *
 * <p>Every event carries the LSN where its message starts in the WAL ({@link #startLsn()}), the
 * commit LSN of its transaction ({@link #commitLsn()}) and its ordinal inside that transaction
 * ({@link #txOrdinal()}, BEGIN is 0). {@link #sequenceKey()} combines the last two into a key that
 * is unique per event and ordered in commit order: the key to deduplicate on after a restart.
 *
 * <p>The permitted types are records. Java 17 has no pattern matching in {@code switch}; switch on
 * {@link #kind()} or use an {@code instanceof} chain.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public sealed interface Event
    permits Event.Begin,
        Event.Commit,
        Event.Relation,
        Event.Insert,
        Event.Update,
        Event.Delete,
        Event.Truncate,
        Event.Message {

  /** The type of an event, for exhaustive switches. */
  enum Kind {
    /** {@link Begin}. */
    BEGIN,
    /** {@link Commit}. */
    COMMIT,
    /** {@link Relation}. */
    RELATION,
    /** {@link Insert}. */
    INSERT,
    /** {@link Update}. */
    UPDATE,
    /** {@link Delete}. */
    DELETE,
    /** {@link Truncate}. */
    TRUNCATE,
    /** {@link Message}. */
    MESSAGE
  }

  /**
   * Returns the type of this event.
   *
   * @return the kind
   */
  Kind kind();

  /**
   * Returns the WAL position where this event's message starts.
   *
   * @return the start LSN
   */
  Lsn startLsn();

  /**
   * Returns the commit LSN of this event's transaction (for a non-transactional message, its own
   * LSN).
   *
   * @return the commit LSN
   */
  Lsn commitLsn();

  /**
   * Returns the zero-based ordinal of this event inside its transaction; BEGIN is 0.
   *
   * @return the ordinal
   */
  long txOrdinal();

  /**
   * Returns the key to deduplicate and order events on.
   *
   * @return the sequence key
   */
  default EventSequenceKey sequenceKey() {
    return new EventSequenceKey(commitLsn(), txOrdinal());
  }

  /**
   * Returns the table this event is about, or null for BEGIN, COMMIT, TRUNCATE (which may name
   * several tables) and MESSAGE.
   *
   * @return the table's replicated schema, or null
   */
  default @Nullable ReplicatedTableSchema table() {
    return null;
  }

  /**
   * The start of a transaction.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN
   * @param txOrdinal always 0
   * @param commitTime the commit time of the transaction
   * @param xid the transaction id
   */
  record Begin(Lsn startLsn, Lsn commitLsn, long txOrdinal, Instant commitTime, long xid)
      implements Event {
    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN
     * @param txOrdinal always 0
     * @param commitTime the commit time of the transaction
     * @param xid the transaction id
     */
    public Begin {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(commitTime, "commitTime");
    }

    @Override
    public Kind kind() {
      return Kind.BEGIN;
    }
  }

  /**
   * The commit of a transaction.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN
   * @param txOrdinal the ordinal after the transaction's last change
   * @param endLsn the end LSN of the commit record: the position to confirm once this transaction
   *     is durable
   * @param commitTime the commit time
   * @param flags the commit flags (currently always 0)
   */
  record Commit(
      Lsn startLsn, Lsn commitLsn, long txOrdinal, Lsn endLsn, Instant commitTime, int flags)
      implements Event {
    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN
     * @param txOrdinal the ordinal after the transaction's last change
     * @param endLsn the end LSN of the commit record: the position to confirm once this transaction
     *     is durable
     * @param commitTime the commit time
     * @param flags the commit flags (currently always 0)
     */
    public Commit {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(endLsn, "endLsn");
      Objects.requireNonNull(commitTime, "commitTime");
    }

    @Override
    public Kind kind() {
      return Kind.COMMIT;
    }
  }

  /**
   * The schema of a table, sent before the first change of the table on a stream and again after
   * every schema change. Rows of later events of the table follow this schema.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN
   * @param txOrdinal the ordinal in the transaction
   * @param table the table's schema from this point on
   */
  record Relation(Lsn startLsn, Lsn commitLsn, long txOrdinal, ReplicatedTableSchema table)
      implements Event {
    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN
     * @param txOrdinal the ordinal in the transaction
     * @param table the table's schema from this point on
     */
    public Relation {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(table, "table");
    }

    @Override
    public Kind kind() {
      return Kind.RELATION;
    }
  }

  /**
   * A row inserted.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN
   * @param txOrdinal the ordinal in the transaction
   * @param table the table's schema
   * @param row the new row
   */
  record Insert(
      Lsn startLsn, Lsn commitLsn, long txOrdinal, ReplicatedTableSchema table, TableRow row)
      implements Event {
    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN
     * @param txOrdinal the ordinal in the transaction
     * @param table the table's schema
     * @param row the new row
     */
    public Insert {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(table, "table");
      Objects.requireNonNull(row, "row");
    }

    @Override
    public Kind kind() {
      return Kind.INSERT;
    }
  }

  /**
   * A row updated.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN
   * @param txOrdinal the ordinal in the transaction
   * @param table the table's schema
   * @param row the new row, full or partial (unchanged TOAST values missing)
   * @param oldRow the old row ({@link OldRow.Full} for REPLICA IDENTITY FULL, {@link OldRow.Key}
   *     when a key column changed), or null when PostgreSQL sent none (the key did not change)
   */
  record Update(
      Lsn startLsn,
      Lsn commitLsn,
      long txOrdinal,
      ReplicatedTableSchema table,
      UpdatedRow row,
      @Nullable OldRow oldRow)
      implements Event {
    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN
     * @param txOrdinal the ordinal in the transaction
     * @param table the table's schema
     * @param row the new row, full or partial (unchanged TOAST values missing)
     * @param oldRow the old row ({@link OldRow.Full} for REPLICA IDENTITY FULL, {@link OldRow.Key}
     *     when a key column changed), or null when PostgreSQL sent none (the key did not change)
     */
    public Update {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(table, "table");
      Objects.requireNonNull(row, "row");
    }

    @Override
    public Kind kind() {
      return Kind.UPDATE;
    }
  }

  /**
   * A row deleted.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN
   * @param txOrdinal the ordinal in the transaction
   * @param table the table's schema
   * @param oldRow the deleted row's identity ({@link OldRow.Key}) or whole row ({@link
   *     OldRow.Full})
   */
  record Delete(
      Lsn startLsn, Lsn commitLsn, long txOrdinal, ReplicatedTableSchema table, OldRow oldRow)
      implements Event {
    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN
     * @param txOrdinal the ordinal in the transaction
     * @param table the table's schema
     * @param oldRow the deleted row's identity ({@link OldRow.Key}) or whole row ({@link
     *     OldRow.Full})
     */
    public Delete {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(table, "table");
      Objects.requireNonNull(oldRow, "oldRow");
    }

    @Override
    public Kind kind() {
      return Kind.DELETE;
    }
  }

  /**
   * One or more tables truncated in one statement.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN
   * @param txOrdinal the ordinal in the transaction
   * @param tables the truncated tables that this stream owns
   * @param options the pgoutput option bits: 1 = CASCADE, 2 = RESTART IDENTITY
   */
  record Truncate(
      Lsn startLsn, Lsn commitLsn, long txOrdinal, List<ReplicatedTableSchema> tables, int options)
      implements Event {
    /** The CASCADE option bit. */
    public static final int CASCADE = 1;

    /** The RESTART IDENTITY option bit. */
    public static final int RESTART_IDENTITY = 2;

    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN
     * @param txOrdinal the ordinal in the transaction
     * @param tables the truncated tables that this stream owns
     * @param options the pgoutput option bits: 1 = CASCADE, 2 = RESTART IDENTITY
     */
    public Truncate {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      tables = List.copyOf(tables);
    }

    @Override
    public Kind kind() {
      return Kind.TRUNCATE;
    }

    /**
     * Returns true when the statement had {@code CASCADE}.
     *
     * @return whether CASCADE was given
     */
    public boolean cascade() {
      return (options & CASCADE) != 0;
    }

    /**
     * Returns true when the statement had {@code RESTART IDENTITY}.
     *
     * @return whether RESTART IDENTITY was given
     */
    public boolean restartIdentity() {
      return (options & RESTART_IDENTITY) != 0;
    }
  }

  /**
   * A user logical message, written with {@code pg_logical_emit_message}.
   *
   * @param startLsn where the message starts
   * @param commitLsn the transaction's commit LSN, or the message's own LSN when not transactional
   * @param txOrdinal the ordinal in the transaction (0 when not transactional)
   * @param transactional whether the message was emitted as part of a transaction
   * @param prefix the message prefix
   * @param content the message content
   */
  @SuppressWarnings("ArrayRecordComponent") // copied in and out; equals/hashCode compare contents
  record Message(
      Lsn startLsn,
      Lsn commitLsn,
      long txOrdinal,
      boolean transactional,
      String prefix,
      byte[] content)
      implements Event {
    /**
     * Validates the components.
     *
     * @param startLsn where the message starts
     * @param commitLsn the transaction's commit LSN, or the message's own LSN when not
     *     transactional
     * @param txOrdinal the ordinal in the transaction (0 when not transactional)
     * @param transactional whether the message was emitted as part of a transaction
     * @param prefix the message prefix
     * @param content the message content
     */
    public Message {
      Objects.requireNonNull(startLsn, "startLsn");
      Objects.requireNonNull(commitLsn, "commitLsn");
      Objects.requireNonNull(prefix, "prefix");
      content = content.clone();
    }

    @Override
    public Kind kind() {
      return Kind.MESSAGE;
    }

    /**
     * Returns the content (a copy).
     *
     * @return the bytes
     */
    @Override
    public byte[] content() {
      return content.clone();
    }

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof Message m
          && startLsn.equals(m.startLsn)
          && commitLsn.equals(m.commitLsn)
          && txOrdinal == m.txOrdinal
          && transactional == m.transactional
          && prefix.equals(m.prefix)
          && Arrays.equals(content, m.content);
    }

    @Override
    public int hashCode() {
      return Objects.hash(startLsn, commitLsn, txOrdinal, transactional, prefix)
          + 31 * Arrays.hashCode(content);
    }

    @Override
    public String toString() {
      return "Message[startLsn="
          + startLsn
          + ", commitLsn="
          + commitLsn
          + ", txOrdinal="
          + txOrdinal
          + ", transactional="
          + transactional
          + ", prefix="
          + prefix
          + ", "
          + content.length
          + " bytes]";
    }
  }
}
