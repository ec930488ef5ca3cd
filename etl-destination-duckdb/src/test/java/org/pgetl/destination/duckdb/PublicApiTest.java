package org.pgetl.destination.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.pgetl.testing.PublicTypes;

/**
 * The public API of this module is its destination type alone: its configuration is the
 * constructor's arguments and everything else is package-private, so that the module can change its
 * internals in any release. A public type added fails this test until it is listed here on purpose.
 */
class PublicApiTest {
  @Test
  void theDestinationIsTheOnlyPublicType() throws Exception {
    assertThat(PublicTypes.of(DuckDbDestination.class))
        .containsExactly("org.pgetl.destination.duckdb.DuckDbDestination");
  }

  @Test
  void noInternalTypeLeaksThroughAPublicSignature() throws Exception {
    assertThat(PublicTypes.internalLeaks(DuckDbDestination.class)).isEmpty();
  }
}
