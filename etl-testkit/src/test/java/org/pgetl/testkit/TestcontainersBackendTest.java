package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TestcontainersBackendTest {

  @Test
  void withoutTestcontainersOnTheClasspathSaysWhatToAdd() {
    assertThat(
            TestcontainersBackend.class
                .getClassLoader()
                .getResource("org/testcontainers/DockerClientFactory.class"))
        .as("this module's tests run without Testcontainers")
        .isNull();

    assertThatThrownBy(() -> TestcontainersBackend.start(PostgresVersion.parse("17")))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("org.testcontainers:testcontainers-postgresql")
        .hasMessageContaining("unset PGETL_TEST_POSTGRES");
  }
}
