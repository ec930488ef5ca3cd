package org.pgetl.core.internal.pg;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Names the standby that holds a logical walsender back. With {@code synchronized_standby_slots}
 * set (PostgreSQL 17+), a walsender of a failover slot sends a change only once every physical slot
 * listed there has confirmed it: a stopped standby stops the pipeline, which then shows nothing but
 * a growing lag. The walsender waits with the wait event {@value #EVENT}; this class reads the
 * listed slots to say which standby it waits for.
 */
public final class StandbyWait {
  /** The wait event of a walsender waiting for the standbys of synchronized_standby_slots. */
  public static final String EVENT = "WaitForStandbyConfirmation";

  private StandbyWait() {}

  /**
   * One slot listed in {@code synchronized_standby_slots}, as {@code pg_replication_slots} shows
   * it.
   *
   * @param name the slot's name
   * @param exists whether the slot exists
   * @param active whether a standby streams through it
   * @param walStatus its {@code wal_status}, or null
   */
  public record ListedSlot(
      String name, boolean exists, boolean active, @Nullable String walStatus) {
    /** Whether the standby of this slot can confirm WAL now. */
    boolean confirming() {
      return exists && active && !"lost".equals(walStatus);
    }
  }

  /**
   * Reads the slots listed in {@code synchronized_standby_slots} (none before PostgreSQL 17, or
   * when the setting is empty).
   *
   * @param c a plain connection to the primary
   * @return the listed slots, in the setting's order
   * @throws SQLException when the catalog cannot be read
   */
  public static List<ListedSlot> listedSlots(Connection c) throws SQLException {
    List<ListedSlot> out = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT n.name, s.slot_name IS NOT NULL, coalesce(s.active, false), s.wal_status"
                    + " FROM unnest(string_to_array(coalesce(current_setting("
                    + "'synchronized_standby_slots', true), ''), ',')) WITH ORDINALITY"
                    + " AS l(raw, ord)"
                    + " CROSS JOIN LATERAL (SELECT btrim(l.raw, ' \"') AS name) n"
                    + " LEFT JOIN pg_replication_slots s ON s.slot_name = n.name"
                    + " WHERE n.name <> '' ORDER BY l.ord")) {
      while (rs.next()) {
        out.add(
            new ListedSlot(rs.getString(1), rs.getBoolean(2), rs.getBoolean(3), rs.getString(4)));
      }
    }
    return out;
  }

  /**
   * Describes what a walsender waiting with {@value #EVENT} waits for: the listed slots whose
   * standby does not confirm (not streaming, missing, invalidated), or all of them when each
   * streams but is slow.
   *
   * @param c a plain connection to the primary
   * @return one sentence naming the standby slots and the setting
   */
  public static String describe(Connection c) {
    List<ListedSlot> listed;
    try {
      listed = listedSlots(c);
    } catch (SQLException e) {
      listed = List.of();
    }
    List<String> stopped = new ArrayList<>();
    List<String> all = new ArrayList<>();
    for (ListedSlot s : listed) {
      all.add(s.name());
      if (!s.confirming()) {
        stopped.add(
            s.name()
                + (!s.exists()
                    ? " (missing)"
                    : "lost".equals(s.walStatus()) ? " (invalidated)" : " (no standby streams)"));
      }
    }
    if (all.isEmpty()) {
      return "held by synchronized_standby_slots: the apply stream waits for a standby to confirm"
          + " the WAL";
    }
    if (!stopped.isEmpty()) {
      return "held by standby slot "
          + String.join(", ", stopped)
          + " of synchronized_standby_slots: changes reach the destination only once that standby"
          + " has them; start the standby, or remove its slot from synchronized_standby_slots";
    }
    return "held by standby slot "
        + String.join(", ", all)
        + " of synchronized_standby_slots: the apply stream waits for that standby to confirm the"
        + " WAL";
  }
}
