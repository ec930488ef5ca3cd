package org.pgetl.core.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.decode.PgOutputMessage;
import org.pgetl.core.internal.pg.Attribute;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.ReplicatedTableSchema;

/**
 * Finds the attnum of each column of a RELATION message, which names columns but does not number
 * them, from the schema version in effect before the message and the catalog's rows of the table as
 * they are now (dropped columns included).
 *
 * <h2>What is known</h2>
 *
 * A RELATION lists the published, non-dropped, non-generated columns in attnum order. Attnums are
 * never reused; ADD COLUMN takes an attnum above every earlier one; RENAME COLUMN and ALTER COLUMN
 * TYPE keep it. So the message's columns map to strictly increasing attnums: first columns of the
 * previous version (each possibly renamed or retyped since), then added ones. The previous version
 * says what each attnum was called before the message; the catalog says which attnums exist (a
 * dropped one keeps its row, without name or type) and what the living ones are called now. The
 * catalog may be ahead of the message (WAL decoded late, or replayed after a restart), so neither
 * names nor types identify a column on their own.
 *
 * <h2>The rule</h2>
 *
 * Every monotone assignment of the message's columns to attnums (those of the previous version,
 * those in the catalog, and invented ones above all of them) is an explanation of how the table got
 * from the previous version to the message and from the message to today's catalog. Each
 * explanation is charged one per event it needs: a rename, a type change, a drop, an add, a column
 * that left or joined the publication's column list (charged 2: rarer than a rename). The alignment
 * picks the explanation with the fewest events; among those, the one with the fewest events
 * <em>after</em> the message (the catalog is assumed as close to the message as the evidence
 * allows). Hard facts are charged so much that they decide whenever they can: a column of the
 * previous version that is alive in the catalog existed when the message was sent; an attnum the
 * catalog does not have (when it is known) never existed; a living attnum added after the message
 * rules out every higher one. A dynamic program over (attnum, message column) finds the cheapest
 * explanation in O(attnums × columns).
 *
 * <h2>Limits</h2>
 *
 * The rule cannot tell histories apart that leave the same traces. When the catalog is ahead of the
 * message and a column was both dropped and re-added under the same name and type around the
 * message, the cheaper reading wins: a change from before the drop, decoded for the first time
 * after the re-add, is attributed to the new column. Without a catalog (the table is gone) and
 * without a previous version, added columns get the lowest attnums that fit, which is exact unless
 * columns were added and dropped in between.
 */
final class ColumnAlignment {
  /** The cost of something that cannot have happened; large enough to lose to any history. */
  static final long IMPOSSIBLE = 1_000;

  /** Weight of the total, so that the events after the message only break ties. */
  private static final long TOTAL_WEIGHT = 10_000_000L;

  private ColumnAlignment() {}

  /** One attnum that a message column may map to, with what is known about it. */
  private static final class Slot {
    final int attnum;
    @Nullable ColumnSchema previous;
    boolean previousPublished;
    @Nullable Attribute catalog;
    boolean invented;

    Slot(int attnum) {
      this.attnum = attnum;
    }
  }

  /**
   * Returns the attnum of each column of a RELATION message.
   *
   * @param previous the schema version in effect just before the message, or null when none is
   *     known
   * @param relation the message's columns, in order
   * @param catalog the table's attributes in the catalog now, dropped ones included; null when
   *     unknown (an empty list counts as unknown too: the table is gone)
   * @return one attnum per message column, strictly increasing, never 0
   */
  static int[] align(
      @Nullable ReplicatedTableSchema previous,
      List<PgOutputMessage.Relation.Column> relation,
      List<Attribute> catalog) {
    Objects.requireNonNull(relation, "relation");
    boolean catalogKnown = catalog != null && !catalog.isEmpty();
    TreeMap<Integer, Slot> byAttnum = new TreeMap<>();
    int maxPrevious = 0;
    if (previous != null) {
      List<ColumnSchema> cols = previous.tableSchema().columns();
      for (int i = 0; i < cols.size(); i++) {
        ColumnSchema c = cols.get(i);
        if (c.ordinalPosition() <= 0) {
          continue; // a version stored before attnums were reliable: no evidence
        }
        Slot s = byAttnum.computeIfAbsent(c.ordinalPosition(), Slot::new);
        s.previous = c;
        s.previousPublished = previous.isReplicated(i);
        maxPrevious = Math.max(maxPrevious, c.ordinalPosition());
      }
    }
    boolean hasPrevious = maxPrevious > 0;
    if (catalogKnown) {
      for (Attribute a : catalog) {
        byAttnum.computeIfAbsent(a.attnum(), Slot::new).catalog = a;
      }
    }
    int top = byAttnum.isEmpty() ? 0 : byAttnum.lastKey();
    for (int k = 1; k <= relation.size(); k++) {
      byAttnum.computeIfAbsent(top + k, Slot::new).invented = true;
    }
    List<Slot> slots = new ArrayList<>(byAttnum.values());
    int n = relation.size();
    int m = slots.size();

    // cost[j][f]: the cheapest way to place message columns j.. on slots i.., where f says that
    // a living attnum added after the message was passed (no later slot may be used then).
    long[][] next = new long[n + 1][2];
    long[][] cur = new long[n + 1][2];
    for (int j = 0; j <= n; j++) {
      next[j][0] = next[j][1] = j == n ? 0 : Long.MAX_VALUE;
    }
    // choice[i][j][f]: true when slot i takes column j
    boolean[][][] map = new boolean[m][n + 1][2];
    for (int i = m - 1; i >= 0; i--) {
      Slot s = slots.get(i);
      long skip = skipCost(s, hasPrevious, maxPrevious, catalogKnown);
      boolean setsFlag = addedAfterMessage(s, hasPrevious, maxPrevious, catalogKnown);
      for (int j = 0; j <= n; j++) {
        for (int f = 0; f < 2; f++) {
          long best = add(skip, next[j][setsFlag ? 1 : f]);
          boolean take = false;
          if (j < n) {
            long c = mapCost(s, relation.get(j), hasPrevious, maxPrevious, catalogKnown);
            if (f == 1) {
              c += IMPOSSIBLE * TOTAL_WEIGHT;
            }
            long viaMap = add(c, next[j + 1][f]);
            if (viaMap <= best) {
              best = viaMap;
              take = true;
            }
          }
          cur[j][f] = best;
          map[i][j][f] = take;
        }
      }
      long[][] t = next;
      next = cur;
      cur = t;
    }
    int[] out = new int[n];
    int j = 0;
    int f = 0;
    for (int i = 0; i < m && j < n; i++) {
      Slot s = slots.get(i);
      if (map[i][j][f]) {
        out[j++] = s.attnum;
      } else if (addedAfterMessage(s, hasPrevious, maxPrevious, catalogKnown)) {
        f = 1;
      }
    }
    if (j < n) {
      throw new IllegalStateException("alignment left columns without an attnum");
    }
    return out;
  }

  private static long add(long a, long b) {
    return b == Long.MAX_VALUE ? Long.MAX_VALUE : a + b;
  }

  /** Combines the events before and after the message into one comparable cost. */
  private static long cost(long before, long after) {
    return (before + after) * TOTAL_WEIGHT + after;
  }

  private static int differences(
      String name, int typeOid, int typeModifier, PgOutputMessage.Relation.Column c) {
    return (name.equals(c.name()) ? 0 : 1)
        + (typeOid == c.typeOid() && typeModifier == c.typeModifier() ? 0 : 1);
  }

  private static long mapCost(
      Slot s,
      PgOutputMessage.Relation.Column c,
      boolean hasPrevious,
      int maxPrevious,
      boolean catalogKnown) {
    if (s.invented) {
      // an attnum the catalog would have: only possible when the catalog is unknown
      return cost(1, catalogKnown ? IMPOSSIBLE : 0);
    }
    long before;
    if (!hasPrevious) {
      before = 0;
    } else if (s.previous != null) {
      ColumnSchema p = s.previous;
      before =
          (long) differences(p.name(), p.typeOid(), p.typeModifier(), c)
              + (s.previousPublished ? 0 : 2);
    } else if (s.attnum > maxPrevious) {
      before = 1; // added after the previous version
    } else {
      before = 2; // existed then without being part of it: joined the column list since
    }
    long after;
    Attribute a = s.catalog;
    if (!catalogKnown) {
      after = 0;
    } else if (a == null) {
      after = IMPOSSIBLE; // the catalog keeps a row for every attnum that ever existed
    } else if (a.dropped()) {
      after = 1;
    } else {
      after = differences(a.name(), a.typeOid(), a.typeModifier(), c);
    }
    return cost(before, after);
  }

  private static long skipCost(Slot s, boolean hasPrevious, int maxPrevious, boolean catalogKnown) {
    if (s.invented) {
      return 0;
    }
    long before = hasPrevious && s.previous != null && s.previousPublished ? 1 : 0;
    long after = 0;
    Attribute a = s.catalog;
    if (catalogKnown && a != null && a.alive()) {
      if (s.previous != null) {
        // it existed before the message and still does: only a column-list change hides it
        after = s.previousPublished ? 2 : 0;
      } else if (!hasPrevious || s.attnum > maxPrevious) {
        after = 1; // added after the message (or, without a previous version, not published)
      }
    }
    return cost(before, after);
  }

  /** Whether leaving this slot out means a living column was added after the message. */
  private static boolean addedAfterMessage(
      Slot s, boolean hasPrevious, int maxPrevious, boolean catalogKnown) {
    return hasPrevious
        && catalogKnown
        && s.previous == null
        && !s.invented
        && s.catalog != null
        && s.catalog.alive()
        && s.attnum > maxPrevious;
  }
}
