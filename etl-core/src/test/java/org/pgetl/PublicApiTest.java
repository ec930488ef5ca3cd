package org.pgetl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.Destination;
import org.pgetl.testing.PublicTypes;

/**
 * The public API of etl-core and etl-destination-api is the list in {@code api/public-types.txt}:
 * every public top-level type outside {@code org.pgetl.core.internal}. A type added or removed
 * fails this test until the list is changed with it, so that the API grows only on purpose; and the
 * list holds at most {@value #MAX_PUBLIC_TYPES} types, so that it grows by making room.
 */
class PublicApiTest {
  /** The most top-level public types etl-core and etl-destination-api may have together. */
  static final int MAX_PUBLIC_TYPES = 40;

  @Test
  void thePublicTopLevelTypesAreExactlyTheListedOnes() throws Exception {
    assertThat(actualPublicTypes())
        .as(
            "public top-level types of etl-core and etl-destination-api; a change of the API"
                + " updates src/test/resources/api/public-types.txt on purpose")
        .containsExactlyElementsOf(new TreeSet<>(listedPublicTypes()));
  }

  @Test
  void thereAreAtMostFortyPublicTopLevelTypes() throws Exception {
    assertThat(actualPublicTypes())
        .as(
            "public top-level types of etl-core and etl-destination-api; at most %d: nest a small"
                + " value type in the type it belongs to, or make room on purpose",
            MAX_PUBLIC_TYPES)
        .hasSizeLessThanOrEqualTo(MAX_PUBLIC_TYPES);
    assertThat(listedPublicTypes()).hasSizeLessThanOrEqualTo(MAX_PUBLIC_TYPES);
  }

  private static TreeSet<String> actualPublicTypes() throws Exception {
    TreeSet<String> actual = new TreeSet<>();
    actual.addAll(PublicTypes.of(Pipeline.class));
    actual.addAll(PublicTypes.of(Destination.class));
    return actual;
  }

  private static List<String> listedPublicTypes() throws IOException {
    try (InputStream in = PublicApiTest.class.getResourceAsStream("/api/public-types.txt")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .lines()
          .map(String::trim)
          .filter(l -> !l.isEmpty() && !l.startsWith("#"))
          .toList();
    }
  }

  @Test
  void noInternalTypeLeaksThroughAPublicSignature() throws Exception {
    List<String> leaks = new ArrayList<>(PublicTypes.internalLeaks(Pipeline.class));
    leaks.addAll(PublicTypes.internalLeaks(Destination.class));
    assertThat(leaks).isEmpty();
  }
}
