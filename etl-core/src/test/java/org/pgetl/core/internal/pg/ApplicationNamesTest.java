package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.pgetl.model.TableId;

class ApplicationNamesTest {
  @Test
  void namesFollowTheRoleScheme() {
    assertThat(ApplicationNames.apply("p1")).isEqualTo("pgetl:apply:p1");
    assertThat(ApplicationNames.tableSync("p1", new TableId(16384)))
        .isEqualTo("pgetl:sync:p1:16384");
    assertThat(ApplicationNames.copy("p1", new TableId(16384), 3))
        .isEqualTo("pgetl:copy:p1:16384:3");
    assertThat(ApplicationNames.catalog("p1")).isEqualTo("pgetl:catalog:p1");
  }

  @Test
  void shortNamesAreKept() {
    String name = "x".repeat(63);
    assertThat(ApplicationNames.clamp(name)).isSameAs(name);
  }

  @Test
  void longAsciiNameIsCutTo63Bytes() {
    assertThat(ApplicationNames.clamp("a".repeat(100))).hasSize(63);
  }

  @Test
  void cutNeverSplitsAMultiByteCharacter() {
    // 61 ASCII bytes + "é" (2 bytes) = 63: fits. One more "é" would make 65.
    String fits = "a".repeat(61) + "é";
    assertThat(ApplicationNames.clamp(fits + "é")).isEqualTo(fits);
    // 62 ASCII bytes + "é": the "é" would end at byte 64, so it is dropped whole.
    assertThat(ApplicationNames.clamp("a".repeat(62) + "é")).isEqualTo("a".repeat(62));
    // A 4-byte character (surrogate pair) at the boundary is dropped whole too.
    String clamped = ApplicationNames.clamp("a".repeat(60) + "😀" + "b");
    assertThat(clamped).isEqualTo("a".repeat(60));
    assertThat(clamped.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(63);
    String threeByte = ApplicationNames.clamp("€".repeat(30));
    assertThat(threeByte).isEqualTo("€".repeat(21));
  }
}
