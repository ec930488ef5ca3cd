package org.pgetl.testkit.destination;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableName;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;

/**
 * Builds change events the way a replication stream numbers them, for tests that call a destination
 * without a pipeline: increasing commit LSNs, ordinals from 0 (BEGIN) inside each transaction, and
 * {@code Relation} events sharing the sequence key of the change they precede.
 *
 * <pre>{@code
 * Transactions log = new Transactions();
 * List<Event> tx1 = log.begin().relation(orders).insert(orders, 1L, "a").insert(orders, 2L, "b")
 *     .commit();
 * List<Event> tx2 = log.begin().update(orders, 1L, "A").delete(orders, 2L).commit();
 * }</pre>
 *
 * <p>Not thread-safe: build the events on one thread, then deliver them from any.
 */
public final class Transactions {
  private static final long EVENT_SPACING = 0x40;
  private static final Instant FIRST_COMMIT_TIME = Instant.parse("2024-01-01T00:00:00Z");

  private long nextLsn;
  private long nextXid = 1000;
  private int transactions;

  /** Starts at LSN {@code 0/1000000}. */
  public Transactions() {
    this(Lsn.of(0x1000000L));
  }

  /**
   * Starts at an LSN.
   *
   * @param firstLsn where the first transaction's BEGIN starts
   */
  public Transactions(Lsn firstLsn) {
    this.nextLsn = firstLsn.value();
  }

  /**
   * Starts the next transaction; its commit LSN is fixed when it is committed, after the
   * transactions begun before it were.
   *
   * @return the transaction
   */
  public Tx begin() {
    return new Tx();
  }

  /** One transaction under construction; {@link #commit()} numbers its events. */
  public final class Tx {
    private interface Spec {
      Event make(Lsn start, Lsn commit, long ordinal);
    }

    private final List<Spec> specs = new ArrayList<>();
    private final List<Boolean> isRelation = new ArrayList<>();
    private @Nullable List<Event> events; // null until committed

    private Tx() {}

    private Tx add(boolean relation, Spec spec) {
      if (events != null) {
        throw new IllegalStateException("transaction already committed");
      }
      specs.add(spec);
      isRelation.add(relation);
      return this;
    }

    /**
     * Adds the schema of a table (sent before its first change in a stream, and after a change).
     *
     * @param table the schema
     * @return this transaction
     */
    public Tx relation(ReplicatedTableSchema table) {
      return add(true, (s, c, o) -> new Event.Relation(s, c, o, table));
    }

    /**
     * Adds an insert.
     *
     * @param table the table
     * @param values the new row, in column order
     * @return this transaction
     */
    public Tx insert(ReplicatedTableSchema table, @Nullable Object... values) {
      TableRow row = TableRow.of(values);
      return add(false, (s, c, o) -> new Event.Insert(s, c, o, table, row));
    }

    /**
     * Adds an update that keeps the key (no old row).
     *
     * @param table the table
     * @param newValues the new row, in column order
     * @return this transaction
     */
    public Tx update(ReplicatedTableSchema table, @Nullable Object... newValues) {
      UpdatedRow row = new UpdatedRow.Full(TableRow.of(newValues));
      return add(false, (s, c, o) -> new Event.Update(s, c, o, table, row, null));
    }

    /**
     * Adds an update that changes the key: the old row carries the old key's values.
     *
     * @param table the table
     * @param oldKey the old identity values, in identity order
     * @param newValues the new row, in column order
     * @return this transaction
     */
    public Tx updateKey(
        ReplicatedTableSchema table, List<?> oldKey, @Nullable Object... newValues) {
      UpdatedRow row = new UpdatedRow.Full(TableRow.of(newValues));
      OldRow old = new OldRow.Key(TableRow.ofList(oldKey));
      return add(false, (s, c, o) -> new Event.Update(s, c, o, table, row, old));
    }

    /**
     * Adds an update of a REPLICA IDENTITY FULL table: the old row carries every old value.
     *
     * @param table the table
     * @param oldValues the old row, in column order
     * @param newValues the new row, in column order
     * @return this transaction
     */
    public Tx updateFull(
        ReplicatedTableSchema table, List<?> oldValues, @Nullable Object... newValues) {
      UpdatedRow row = new UpdatedRow.Full(TableRow.of(newValues));
      OldRow old = new OldRow.Full(TableRow.ofList(oldValues));
      return add(false, (s, c, o) -> new Event.Update(s, c, o, table, row, old));
    }

    /**
     * Adds an update whose new row misses some columns (unchanged TOAST values), keeping the key.
     *
     * @param table the table
     * @param missingColumns the missing column indexes, ascending
     * @param presentValues the values of the other columns, in column order
     * @return this transaction
     */
    public Tx updatePartial(
        ReplicatedTableSchema table, int[] missingColumns, @Nullable Object... presentValues) {
      UpdatedRow row =
          new UpdatedRow.Partial(
              table.columnCount(), TableRow.of(presentValues), missingColumns.clone());
      return add(false, (s, c, o) -> new Event.Update(s, c, o, table, row, null));
    }

    /**
     * Adds a delete by key.
     *
     * @param table the table
     * @param keyValues the identity values, in identity order
     * @return this transaction
     */
    public Tx delete(ReplicatedTableSchema table, @Nullable Object... keyValues) {
      OldRow old = new OldRow.Key(TableRow.of(keyValues));
      return add(false, (s, c, o) -> new Event.Delete(s, c, o, table, old));
    }

    /**
     * Adds a delete from a REPLICA IDENTITY FULL table: the old row carries every value.
     *
     * @param table the table
     * @param values the deleted row, in column order
     * @return this transaction
     */
    public Tx deleteFull(ReplicatedTableSchema table, @Nullable Object... values) {
      OldRow old = new OldRow.Full(TableRow.of(values));
      return add(false, (s, c, o) -> new Event.Delete(s, c, o, table, old));
    }

    /**
     * Adds a truncate of one or more tables.
     *
     * @param tables the truncated tables
     * @return this transaction
     */
    public Tx truncate(ReplicatedTableSchema... tables) {
      List<ReplicatedTableSchema> list = List.copyOf(Arrays.asList(tables));
      return add(false, (s, c, o) -> new Event.Truncate(s, c, o, list, 0));
    }

    /**
     * Adds a transactional logical message.
     *
     * @param prefix the prefix
     * @param content the content
     * @return this transaction
     */
    public Tx message(String prefix, byte[] content) {
      byte[] copy = content.clone();
      return add(false, (s, c, o) -> new Event.Message(s, c, o, true, prefix, copy));
    }

    /**
     * Numbers the events and returns them: BEGIN, the changes, COMMIT. Idempotent.
     *
     * @return the events
     */
    public List<Event> commit() {
      if (events != null) {
        return events;
      }
      long begin = nextLsn;
      long commit = begin + EVENT_SPACING * (specs.size() + 1);
      Lsn commitLsn = Lsn.of(commit);
      Lsn endLsn = Lsn.of(commit + EVENT_SPACING);
      Instant time = FIRST_COMMIT_TIME.plusSeconds(transactions++);
      List<Event> out = new ArrayList<>(specs.size() + 2);
      out.add(new Event.Begin(Lsn.of(begin), commitLsn, 0, time, nextXid++));
      long ordinal = 1;
      for (int i = 0; i < specs.size(); i++) {
        Lsn start = Lsn.of(begin + EVENT_SPACING * (i + 1));
        out.add(specs.get(i).make(start, commitLsn, ordinal));
        if (!isRelation.get(i)) {
          ordinal++;
        }
      }
      out.add(new Event.Commit(commitLsn, commitLsn, ordinal, endLsn, time, 0));
      nextLsn = endLsn.value();
      events = List.copyOf(out);
      return events;
    }

    /**
     * Returns the committed events that a stream owning only these tables would deliver: BEGIN,
     * their changes (and relations), COMMIT. Commits the transaction first if needed.
     *
     * @param tables the tables the stream owns
     * @return the events
     */
    public List<Event> commitFor(TableName... tables) {
      List<TableName> owned = Arrays.asList(tables);
      List<Event> out = new ArrayList<>();
      for (Event e : commit()) {
        if (e.kind() == Event.Kind.BEGIN || e.kind() == Event.Kind.COMMIT) {
          out.add(e);
        } else {
          for (TableName t : owned) {
            if (Events.concerns(e, Objects.requireNonNull(t))) {
              out.add(e);
              break;
            }
          }
        }
      }
      return List.copyOf(out);
    }
  }
}
