package org.pgetl.testkit.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.Event;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.ReplicatedTableSchema;

class TransactionsTest {
  static final ReplicatedTableSchema A =
      SchemaBuilder.table(30001, "s.a").key("id", "int8").column("v", "text").build();
  static final ReplicatedTableSchema B =
      SchemaBuilder.table(30002, "s.b").key("id", "int8").build();

  @Test
  void eventsAreNumberedLikeAStream() {
    Transactions log = new Transactions();
    List<Event> tx = log.begin().relation(A).insert(A, 1L, "x").delete(A, 1L).commit();

    assertThat(tx)
        .extracting(Event::kind)
        .containsExactly(
            Event.Kind.BEGIN,
            Event.Kind.RELATION,
            Event.Kind.INSERT,
            Event.Kind.DELETE,
            Event.Kind.COMMIT);
    assertThat(tx).extracting(Event::txOrdinal).containsExactly(0L, 1L, 1L, 2L, 3L);
    assertThat(tx).extracting(Event::commitLsn).containsOnly(tx.get(0).commitLsn());
    assertThat(tx.get(1).sequenceKey()).isEqualTo(tx.get(2).sequenceKey());
    for (int i = 1; i < tx.size(); i++) {
      assertThat(tx.get(i).startLsn()).isGreaterThan(tx.get(i - 1).startLsn());
    }
    Event.Commit commit = (Event.Commit) tx.get(4);
    assertThat(commit.endLsn()).isGreaterThan(commit.commitLsn());
    assertThat(log.begin().commit().get(0).commitLsn()).isGreaterThan(commit.endLsn());
  }

  @Test
  void commitLsnsFollowCommitOrder() {
    Transactions log = new Transactions();
    Transactions.Tx first = log.begin().insert(A, 1L, "x");
    Transactions.Tx second = log.begin().insert(A, 2L, "y");

    List<Event> s = second.commit();
    List<Event> f = first.commit();

    assertThat(f.get(0).commitLsn()).isGreaterThan(s.get(0).commitLsn());
    assertThat(first.commit()).isSameAs(f);
    assertThatThrownBy(() -> first.insert(A, 3L, "z")).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void commitForKeepsMarkersAndTheOwnedTablesEvents() {
    Transactions.Tx tx =
        new Transactions()
            .begin()
            .relation(A)
            .insert(A, 1L, "x")
            .relation(B)
            .insert(B, 1L)
            .truncate(A, B);

    assertThat(tx.commitFor(B.name()))
        .extracting(Event::kind)
        .containsExactly(
            Event.Kind.BEGIN,
            Event.Kind.RELATION,
            Event.Kind.INSERT,
            Event.Kind.TRUNCATE,
            Event.Kind.COMMIT);
  }

  @Test
  void schemaBuilderKeysIdentitiesAndChanges() {
    assertThat(A.identity()).isEqualTo(IdentityKind.PRIMARY_KEY);
    assertThat(A.identityColumnIndexes()).containsExactly(0);
    assertThat(A.columns()).extracting(ColumnSchema::typeOid).containsExactly(20, 25);
    assertThat(A.columns().get(0).nullable()).isFalse();

    ReplicatedTableSchema changed =
        SchemaBuilder.from(A).dropColumn("v").column("w", "numeric").build();
    assertThat(changed.id()).isEqualTo(A.id());
    assertThat(changed.columns()).extracting(ColumnSchema::name).containsExactly("id", "w");
    assertThat(changed.columns().get(1).ordinalPosition()).isEqualTo(3);
    assertThat(changed.identityColumnIndexes()).containsExactly(0);

    ReplicatedTableSchema full =
        SchemaBuilder.table(30003, "s.c").column("x", "int4").identity(IdentityKind.FULL).build();
    assertThat(full.identity()).isEqualTo(IdentityKind.FULL);
    assertThat(full.identityColumnIndexes()).isEmpty();
    assertThat(SchemaBuilder.table(30004, "s.d").column("x", "int4").build().identity())
        .isEqualTo(IdentityKind.NOTHING);
    assertThatThrownBy(() -> SchemaBuilder.table(1, "s.e").column("x", "money"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
