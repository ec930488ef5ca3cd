package org.pgetl.destination.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.IdentityKind;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.testkit.destination.SchemaBuilder;

/**
 * What the destination refuses at a pipeline's start ({@code checkTables}), before anything exists:
 * the tables a mode cannot hold, each named with its reason; every other table passes, whatever its
 * column types.
 */
class IcebergTableCheckTest {
  private static final ReplicatedTableSchema ITEMS =
      SchemaBuilder.table(16501, "public.items")
          .key("id", "int8")
          .column("v", "text")
          .column("price", "numeric")
          .column("tags", "_text")
          .column("at", "timestamptz")
          .build();
  private static final ReplicatedTableSchema FLOAT_KEY =
      SchemaBuilder.table(16502, "public.readings").key("x", "float8").column("v", "text").build();
  private static final ReplicatedTableSchema REAL_KEY =
      SchemaBuilder.table(16503, "public.points").key("p", "float4").build();
  private static final ReplicatedTableSchema CHANGELOG_NAME =
      SchemaBuilder.table(16504, "public.audit")
          .key("id", "int4")
          .column("_pgetl_op", "text")
          .build();

  @TempDir Path dir;

  private IcebergDestination destination(IcebergDestination.Mode mode) {
    return IcebergDestination.hadoop(dir).mode(mode).build();
  }

  @Test
  void upsertRefusesAFloatingPointKeyNamingTheTableAndTheWayOut() {
    assertThatThrownBy(
            () ->
                destination(IcebergDestination.Mode.UPSERT).checkTables(List.of(ITEMS, FLOAT_KEY)))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(ErrorKind.DESTINATION_SCHEMA_ERROR);
              assertThat(e.description())
                  .isEqualTo("table public.readings has a key column of a floating-point type: x");
              assertThat(e.detail()).contains("use changelog mode");
            });
  }

  @Test
  void severalRefusedTablesAreNamedInOneError() {
    assertThatThrownBy(
            () ->
                destination(IcebergDestination.Mode.UPSERT)
                    .checkTables(List.of(FLOAT_KEY, ITEMS, REAL_KEY)))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.description())
                  .startsWith("2 tables cannot be held in upsert mode: ")
                  .contains("public.readings")
                  .contains("public.points");
              assertThat(e.getSuppressed()).hasSize(1);
            });
  }

  @Test
  void changelogHoldsAFloatKeyButNotAColumnNamedAsItsOwnColumns() {
    IcebergDestination changelog = destination(IcebergDestination.Mode.CHANGELOG);
    changelog.checkTables(List.of(ITEMS, FLOAT_KEY, REAL_KEY));
    assertThatThrownBy(() -> changelog.checkTables(List.of(CHANGELOG_NAME)))
        .isInstanceOfSatisfying(
            EtlException.class,
            e -> {
              assertThat(e.description())
                  .isEqualTo("table public.audit has a column named _pgetl_op");
              assertThat(e.detail()).contains("rename the column");
            });
    destination(IcebergDestination.Mode.UPSERT).checkTables(List.of(CHANGELOG_NAME));
  }

  @Test
  void aFloatColumnOutsideTheKeyAndATableWithoutAKeyPass() {
    ReplicatedTableSchema noKey =
        SchemaBuilder.table(16505, "public.events")
            .column("x", "float8")
            .identity(IdentityKind.NOTHING)
            .build();
    ReplicatedTableSchema full =
        SchemaBuilder.table(16506, "public.full_rows")
            .column("x", "float8")
            .identity(IdentityKind.FULL)
            .build();
    destination(IcebergDestination.Mode.UPSERT)
        .checkTables(
            List.of(
                noKey,
                full,
                SchemaBuilder.table(16507, "public.m")
                    .key("id", "int8")
                    .column("x", "float8")
                    .build()));
  }
}
