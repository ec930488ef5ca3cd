package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class SharedServerTest {
  private static final String URL = "jdbc:postgresql://db:5432/postgres?user=u&password=p";

  @Test
  void embeddedByDefault() {
    assertThat(SharedServer.choose(new Properties(), Map.of()).backend())
        .isEqualTo(SharedServer.Backend.EMBEDDED);
  }

  @Test
  void externalUrlWinsOverEverything() {
    SharedServer.Choice choice =
        SharedServer.choose(
            new Properties(),
            Map.of(SharedServer.URL_ENV, URL, SharedServer.BACKEND_ENV, "testcontainers"));
    assertThat(choice.backend()).isEqualTo(SharedServer.Backend.EXTERNAL);
    assertThat(choice.url()).isEqualTo(URL);
    assertThat(choice.source()).isEqualTo("environment variable PGETL_TEST_DATABASE_URL");
  }

  @Test
  void systemPropertyNamesTheExternalServerToo() {
    Properties props = new Properties();
    props.setProperty(SharedServer.URL_PROPERTY, URL);
    assertThat(SharedServer.choose(props, Map.of()).source())
        .isEqualTo("system property pgetl.test.database.url");
  }

  @Test
  void testcontainersOnRequest() {
    assertThat(
            SharedServer.choose(
                    new Properties(), Map.of(SharedServer.BACKEND_ENV, "Testcontainers"))
                .backend())
        .isEqualTo(SharedServer.Backend.TESTCONTAINERS);
  }

  @Test
  void unknownBackendSaysWhatIsUnderstood() {
    assertThatThrownBy(
            () -> SharedServer.choose(new Properties(), Map.of(SharedServer.BACKEND_ENV, "podman")))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("'embedded'")
        .hasMessageContaining("'testcontainers'")
        .hasMessageContaining("PGETL_TEST_DATABASE_URL");
  }
}
