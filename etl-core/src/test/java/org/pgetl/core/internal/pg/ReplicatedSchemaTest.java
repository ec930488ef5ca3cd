package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.core.internal.decode.ReplicaIdentity;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.ColumnSchema;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.model.TableSchema;

class ReplicatedSchemaTest {
  // attnum 2 was dropped: attnums are 1, 3, 4
  private static final TableSchema ORDERS =
      new TableSchema(
          new TableId(16400),
          new TableName("public", "orders"),
          List.of(
              new ColumnSchema("tenant", 23, -1, "integer", 1, 2, false, null),
              new ColumnSchema("id", 20, -1, "bigint", 3, 1, false, null),
              new ColumnSchema("note", 25, -1, "text", 4, 0, true, "'x'::text")),
          Lsn.ZERO);

  @Test
  void everyColumnWithPrimaryKeyInKeyOrder() {
    ReplicatedTableSchema r =
        PgCatalog.replicated(
            ORDERS,
            new TableIdentity(ReplicaIdentity.DEFAULT, IdentityKind.PRIMARY_KEY, List.of(3, 1)),
            null);
    assertThat(r.columnCount()).isEqualTo(3);
    assertThat(r.identity()).isEqualTo(IdentityKind.PRIMARY_KEY);
    assertThat(r.identityColumnIndexes()).containsExactly(1, 0);
  }

  @Test
  void columnListMasksColumnsAndShiftsIdentityIndexes() {
    ReplicatedTableSchema r =
        PgCatalog.replicated(
            ORDERS,
            new TableIdentity(ReplicaIdentity.INDEX, IdentityKind.INDEX, List.of(3)),
            List.of("id", "note"));
    assertThat(r.columns()).extracting(ColumnSchema::name).containsExactly("id", "note");
    assertThat(r.replicationMask()).containsExactly(false, true, true);
    assertThat(r.identityColumnIndexes()).containsExactly(0);
  }

  @Test
  void fullAndNothingHaveNoKeyColumns() {
    assertThat(
            PgCatalog.replicated(
                    ORDERS,
                    new TableIdentity(ReplicaIdentity.FULL, IdentityKind.FULL, List.of()),
                    null)
                .identityColumnIndexes())
        .isEmpty();
    assertThat(
            PgCatalog.replicated(
                    ORDERS,
                    new TableIdentity(ReplicaIdentity.NOTHING, IdentityKind.NOTHING, List.of()),
                    null)
                .identity())
        .isEqualTo(IdentityKind.NOTHING);
  }

  @Test
  void columnListWithoutTheKeyIsAReplicaIdentityError() {
    assertThatThrownBy(
            () ->
                PgCatalog.replicated(
                    ORDERS,
                    new TableIdentity(
                        ReplicaIdentity.DEFAULT, IdentityKind.PRIMARY_KEY, List.of(3, 1)),
                    List.of("tenant", "note")))
        .isInstanceOf(EtlException.class)
        .satisfies(
            e ->
                assertThat(((EtlException) e).kind())
                    .isEqualTo(ErrorKind.SOURCE_REPLICA_IDENTITY_ERROR))
        .hasMessageContaining("public.orders");
  }

  @Test
  void unknownColumnInListIsASchemaError() {
    assertThatThrownBy(
            () ->
                PgCatalog.replicated(
                    ORDERS,
                    new TableIdentity(ReplicaIdentity.FULL, IdentityKind.FULL, List.of()),
                    List.of("missing")))
        .hasMessageContaining("names column 'missing'");
  }

  @Test
  void parsesInt2Vector() {
    assertThat(PgCatalog.parseInt2Vector("3 1")).containsExactly(3, 1);
    assertThat(PgCatalog.parseInt2Vector("")).isEmpty();
  }
}
