package org.pgetl;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.pgetl.model.TableName;

/**
 * Which published tables get an initial copy. A table without a copy still goes through the sync
 * states (its destination gets the {@code Finish} barrier, so it can create the table) and then
 * streams its changes from that point on.
 */
public final class TableCopySelection {
  private enum Mode {
    ALL,
    NONE,
    ONLY,
    EXCEPT
  }

  private static final TableCopySelection ALL = new TableCopySelection(Mode.ALL, Set.of());
  private static final TableCopySelection NONE = new TableCopySelection(Mode.NONE, Set.of());

  private final Mode mode;
  private final Set<TableName> tables;

  private TableCopySelection(Mode mode, Set<TableName> tables) {
    this.mode = mode;
    this.tables = tables;
  }

  /**
   * Copies every table (the default).
   *
   * @return the selection
   */
  public static TableCopySelection all() {
    return ALL;
  }

  /**
   * Copies no table: only changes from now on are replicated.
   *
   * @return the selection
   */
  public static TableCopySelection none() {
    return NONE;
  }

  /**
   * Copies only these tables.
   *
   * @param tables the tables to copy
   * @return the selection
   */
  public static TableCopySelection only(List<TableName> tables) {
    return new TableCopySelection(Mode.ONLY, Set.copyOf(tables));
  }

  /**
   * Copies every table but these.
   *
   * @param tables the tables not to copy
   * @return the selection
   */
  public static TableCopySelection except(List<TableName> tables) {
    return new TableCopySelection(Mode.EXCEPT, Set.copyOf(tables));
  }

  /**
   * Returns true when the table gets an initial copy.
   *
   * @param table the published table
   * @return whether to copy it
   */
  public boolean shouldCopy(TableName table) {
    Objects.requireNonNull(table, "table");
    return switch (mode) {
      case ALL -> true;
      case NONE -> false;
      case ONLY -> tables.contains(table);
      case EXCEPT -> !tables.contains(table);
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TableCopySelection s && mode == s.mode && tables.equals(s.tables);
  }

  @Override
  public int hashCode() {
    return Objects.hash(mode, tables);
  }

  @Override
  public String toString() {
    return switch (mode) {
      case ALL -> "all";
      case NONE -> "none";
      case ONLY -> "only" + tables;
      case EXCEPT -> "except" + tables;
    };
  }
}
