package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableId;

class SlotNamesTest {
  @Test
  void buildsApplyAndTableSyncNames() {
    assertThat(SlotNames.apply("42")).isEqualTo("pgetl_apply_42");
    assertThat(SlotNames.tableSync("42", new TableId(16390))).isEqualTo("pgetl_sync_42_16390");
  }

  @Test
  void rejectsInvalidCharactersAndLength() {
    assertThatThrownBy(() -> SlotNames.validate("Upper"))
        .isInstanceOf(EtlException.class)
        .satisfies(e -> assertThat(((EtlException) e).kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
        .hasMessageContaining("only a-z, 0-9 and _");
    assertThatThrownBy(() -> SlotNames.validate("a-b")).hasMessageContaining("only a-z");
    assertThatThrownBy(() -> SlotNames.validate("")).hasMessageContaining("must not be empty");
    assertThat(SlotNames.validate("a".repeat(63))).hasSize(63);
    assertThatThrownBy(() -> SlotNames.validate("a".repeat(64)))
        .hasMessageContaining("at most 63 bytes, was 64");
    assertThatThrownBy(() -> SlotNames.apply("My-Pipeline")).hasMessageContaining("pipelineId");
    // pgetl_sync_ (11) + id + _ (1) + 4294967295 (10) must fit in 63: ids up to 41 characters.
    assertThat(SlotNames.tableSync("p".repeat(41), new TableId(4294967295L))).hasSize(63);
    assertThatThrownBy(() -> SlotNames.tableSync("p".repeat(42), new TableId(4294967295L)))
        .hasMessageContaining("at most 63 bytes");
  }

  @Test
  void parsesTheTableOfATableSyncSlotWithoutAmbiguity() {
    assertThat(SlotNames.parseTableSync("pgetl_sync_a_1_2", "a_1")).contains(new TableId(2));
    assertThat(SlotNames.parseTableSync("pgetl_sync_a_1_2", "a")).isEmpty();
    assertThat(SlotNames.parseTableSync("pgetl_apply_a", "a")).isEmpty();
    assertThat(SlotNames.parseTableSync("pgetl_sync_a_", "a")).isEmpty();
    assertThat(SlotNames.parseTableSync("pgetl_sync_a_99999999999", "a")).isEmpty();
    assertThat(SlotNames.parseTableSync("pgetl_sync_a_0", "a")).isEmpty();
  }
}
