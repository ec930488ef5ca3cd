package org.pgetl.core.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.pgetl.core.internal.decode.PgOutputMessage.Relation.Column;
import org.pgetl.core.internal.pg.Attribute;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;

/**
 * The attnum of each RELATION column, from the version before the message and today's catalog:
 * {@link ColumnAlignment}'s rule, case by case, without a server.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ColumnAlignmentTest {
  private static final int INT4 = 23;
  private static final int INT8 = 20;
  private static final int TEXT = 25;

  /** A previous version: "name:type@attnum", every column published. */
  private static ReplicatedTableSchema previous(String... columns) {
    return ReplicatedTableSchema.allColumns(table(columns));
  }

  private static TableSchema table(String... columns) {
    List<ColumnSchema> cols = new ArrayList<>();
    for (String c : columns) {
      String[] nameRest = c.split(":");
      String[] typeAttnum = nameRest[1].split("@");
      cols.add(
          new ColumnSchema(
              nameRest[0],
              type(typeAttnum[0]),
              -1,
              typeAttnum[0],
              Integer.parseInt(typeAttnum[1]),
              0,
              true,
              null));
    }
    return new TableSchema(new TableId(1), new TableName("public", "t"), cols, Lsn.ZERO);
  }

  /** The message's columns: "name:type". */
  private static List<Column> relation(String... columns) {
    List<Column> out = new ArrayList<>();
    for (String c : columns) {
      String[] p = c.split(":");
      out.add(new Column(0, p[0], type(p[1]), -1));
    }
    return out;
  }

  /** Today's catalog: "name:type@attnum" for a living column, "-@attnum" for a dropped one. */
  private static List<Attribute> catalog(String... columns) {
    List<Attribute> out = new ArrayList<>();
    for (String c : columns) {
      if (c.startsWith("-@")) {
        int attnum = Integer.parseInt(c.substring(2));
        out.add(
            new Attribute(
                attnum, true, false, "........pg.dropped." + attnum, 0, -1, null, false, null, 0));
      } else {
        String[] nameRest = c.split(":");
        String[] typeAttnum = nameRest[1].split("@");
        out.add(
            new Attribute(
                Integer.parseInt(typeAttnum[1]),
                false,
                false,
                nameRest[0],
                type(typeAttnum[0]),
                -1,
                typeAttnum[0],
                false,
                null,
                0));
      }
    }
    return out;
  }

  private static int type(String name) {
    return switch (name) {
      case "int4" -> INT4;
      case "int8" -> INT8;
      case "text" -> TEXT;
      default -> throw new IllegalArgumentException(name);
    };
  }

  private static int[] align(ReplicatedTableSchema before, List<Column> r, List<Attribute> now) {
    return ColumnAlignment.align(before, r, now);
  }

  @Test
  void anUnchangedTableKeepsItsAttnums() {
    assertThat(
            align(
                previous("id:int4@1", "v:text@3"),
                relation("id:int4", "v:text"),
                catalog("id:int4@1", "-@2", "v:text@3")))
        .containsExactly(1, 3);
  }

  @Test
  void aRenamedColumnBetweenTwoOthersKeepsItsAttnum() {
    assertThat(
            align(
                previous("id:int4@1", "v:text@2", "w:text@3"),
                relation("id:int4", "x:text", "w:text"),
                catalog("id:int4@1", "x:text@2", "w:text@3")))
        .containsExactly(1, 2, 3);
  }

  @Test
  void aRenamedLastColumnKeepsItsAttnumEvenWhenTheCatalogRenamedItAgain() {
    assertThat(
            align(
                previous("id:int4@1", "v:text@2"),
                relation("id:int4", "w:text"),
                catalog("id:int4@1", "x:text@2")))
        .containsExactly(1, 2);
  }

  @Test
  void aMessageFromBeforeARenameKeepsItsAttnumOnReplay() {
    // decoded after a restart, when the catalog already has the new name
    assertThat(
            align(
                previous("id:int4@1", "v:text@2"),
                relation("id:int4", "v:text"),
                catalog("id:int4@1", "renamed:text@2")))
        .containsExactly(1, 2);
  }

  @Test
  void aRetypedColumnKeepsItsAttnumEvenWhenTheCatalogRetypedItAgain() {
    assertThat(
            align(
                previous("id:int4@1", "v:int4@2"),
                relation("id:int4", "v:int8"),
                catalog("id:int4@1", "v:text@2")))
        .containsExactly(1, 2);
  }

  @Test
  void swappedNamesKeepTheirAttnums() {
    assertThat(
            align(
                previous("id:int4@1", "a:text@2", "b:text@3"),
                relation("id:int4", "b:text", "a:text"),
                catalog("id:int4@1", "b:text@2", "a:text@3")))
        .containsExactly(1, 2, 3);
  }

  @Test
  void aColumnDroppedAndAddedUnderTheSameNameGetsTheNewAttnum() {
    assertThat(
            align(
                previous("id:int4@1", "v:int4@2"),
                relation("id:int4", "v:int4"),
                catalog("id:int4@1", "-@2", "v:int4@3")))
        .containsExactly(1, 3);
  }

  @Test
  void aLastColumnDroppedAndAnotherAddedGetsTheNewAttnum() {
    assertThat(
            align(
                previous("id:int4@1", "v:text@2"),
                relation("id:int4", "w:text"),
                catalog("id:int4@1", "-@2", "w:text@3")))
        .containsExactly(1, 3);
  }

  @Test
  void aDroppedColumnLeavesAGap() {
    assertThat(
            align(
                previous("id:int4@1", "a:text@2", "b:text@3"),
                relation("id:int4", "b:text"),
                catalog("id:int4@1", "-@2", "b:text@3")))
        .containsExactly(1, 3);
  }

  @Test
  void aColumnDroppedAfterTheMessageStillGetsItsAttnum() {
    assertThat(
            align(
                previous("id:int4@1", "v:text@2"),
                relation("id:int4", "v:text"),
                catalog("id:int4@1", "-@2")))
        .containsExactly(1, 2);
  }

  @Test
  void anAddedColumnGetsItsAttnumFromTheCatalog() {
    assertThat(
            align(
                previous("id:int4@1", "a:text@2"),
                relation("id:int4", "a:text", "c:int4"),
                catalog("id:int4@1", "a:text@2", "-@3", "c:int4@4")))
        .containsExactly(1, 2, 4);
  }

  @Test
  void addsAndDropsDecodedLateAreTakenApartByAttnum() {
    // id, a, b; then ADD c, DROP b; the first message (still with b) is decoded after both
    ReplicatedTableSchema copied = previous("id:int4@1", "a:text@2", "b:text@3");
    List<Attribute> now = catalog("id:int4@1", "a:text@2", "-@3", "c:int4@4");
    int[] first = align(copied, relation("id:int4", "a:text", "b:text"), now);
    assertThat(first).containsExactly(1, 2, 3);
    ReplicatedTableSchema afterFirst = previous("id:int4@1", "a:text@2", "b:text@3");
    assertThat(align(afterFirst, relation("id:int4", "a:text", "c:int4"), now))
        .containsExactly(1, 2, 4);
  }

  @Test
  void aLivingColumnAddedAfterTheMessageRulesOutEveryHigherAttnum() {
    // ADD x (2); the message; RENAME x TO y; ADD x (3)
    assertThat(
            align(
                previous("id:int4@1"),
                relation("id:int4", "x:text"),
                catalog("id:int4@1", "y:text@2", "x:text@3")))
        .containsExactly(1, 2);
  }

  @Test
  void withoutACatalogAnAddedColumnTakesTheNextAttnum() {
    assertThat(
            align(previous("id:int4@1", "v:text@4"), relation("id:int4", "w:text", "n:int8"), null))
        .containsExactly(1, 4, 5);
  }

  @Test
  void withoutAPreviousVersionTheCatalogDecides() {
    assertThat(align(null, relation("id:int4", "v:int4"), catalog("id:int4@1", "-@2", "v:int4@3")))
        .containsExactly(1, 3);
  }

  @Test
  void withNeitherTheColumnsAreNumberedInOrder() {
    assertThat(align(null, relation("a:int4", "b:int4"), List.of())).containsExactly(1, 2);
  }

  @Test
  void aColumnLeftOutOfTheColumnListIsSkippedAndKeepsItsAttnumWhenItJoins() {
    TableSchema t = table("id:int4@1", "secret:text@2", "v:text@3");
    ReplicatedTableSchema withoutSecret =
        ReplicatedTableSchema.of(
            t, new boolean[] {true, false, true}, org.pgetl.model.IdentityKind.NOTHING, new int[0]);
    List<Attribute> now = catalog("id:int4@1", "secret:text@2", "v:text@3");
    assertThat(align(withoutSecret, relation("id:int4", "v:text"), now)).containsExactly(1, 3);
    assertThat(align(withoutSecret, relation("id:int4", "secret:text", "v:text"), now))
        .containsExactly(1, 2, 3);
  }

  @Test
  void limitAChangeFromBeforeADropDecodedAfterTheSameColumnWasAddedAgainGoesToTheNewOne() {
    // The documented limit: the catalog cannot tell this history from a drop and add before the
    // message, which needs no event after the message and so wins.
    assertThat(
            align(
                previous("id:int4@1", "v:int4@2"),
                relation("id:int4", "v:int4"),
                catalog("id:int4@1", "-@2", "v:int4@3")))
        .containsExactly(1, 3);
  }
}
