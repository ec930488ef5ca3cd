package org.pgetl.kafka.connect;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * A Connect distributed worker in a child JVM ({@code ConnectDistributed} on the test class path),
 * so that a test can kill it with SIGKILL ({@link Process#destroyForcibly()}) while its task runs.
 */
final class ConnectWorkerProcess implements AutoCloseable {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final Process process;
  private final int port;

  private ConnectWorkerProcess(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /**
   * Starts a worker of the Connect cluster {@code group} on the broker, with {@code extra} worker
   * properties; its log goes to {@code log}.
   */
  static ConnectWorkerProcess start(
      String bootstrapServers, String group, Map<String, String> extra, Path log)
      throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", bootstrapServers);
    p.setProperty("group.id", group);
    p.setProperty("config.storage.topic", group + "-configs");
    p.setProperty("offset.storage.topic", group + "-offsets");
    p.setProperty("status.storage.topic", group + "-status");
    p.setProperty("config.storage.replication.factor", "1");
    p.setProperty("offset.storage.replication.factor", "1");
    p.setProperty("status.storage.replication.factor", "1");
    p.setProperty("key.converter", "org.apache.kafka.connect.json.JsonConverter");
    p.setProperty("value.converter", "org.apache.kafka.connect.json.JsonConverter");
    p.setProperty("plugin.discovery", "service_load");
    p.setProperty("listeners", "http://localhost:" + port);
    p.setProperty("offset.flush.interval.ms", "1000");
    // a killed worker leaves the group after the session timeout, its task moves a second later
    p.setProperty("session.timeout.ms", "6000");
    p.setProperty("heartbeat.interval.ms", "1000");
    p.setProperty("scheduled.rebalance.max.delay.ms", "1000");
    // a rebalance does not wait a minute for the killed member to rejoin
    p.setProperty("rebalance.timeout.ms", "8000");
    extra.forEach(p::setProperty);
    Path file = Files.createTempFile("pgetl-worker", ".properties");
    try (var out = Files.newBufferedWriter(file)) {
      p.store(out, null);
    }
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder b =
        new ProcessBuilder(
            List.of(
                java.toString(),
                "-Xmx768m",
                "-cp",
                classPath,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "org.apache.kafka.connect.cli.ConnectDistributed",
                file.toString()));
    b.redirectErrorStream(true);
    b.redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
    return new ConnectWorkerProcess(b.start(), port);
  }

  /** Whether the worker's REST server answers. */
  boolean ready() {
    try {
      return get("/connectors").statusCode() == 200;
    } catch (IOException e) {
      return false;
    }
  }

  /** Whether the worker still runs. */
  boolean alive() {
    return process.isAlive();
  }

  /** Creates or updates a connector. */
  void putConnector(String name, Map<String, String> config) throws IOException {
    String body =
        config.entrySet().stream()
            .map(e -> quote(e.getKey()) + ":" + quote(e.getValue()))
            .collect(Collectors.joining(",", "{", "}"));
    HttpResponse<String> r =
        send(
            HttpRequest.newBuilder(url("/connectors/" + name + "/config"))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body))
                .build());
    if (r.statusCode() / 100 != 2) {
      throw new IllegalStateException("PUT connector " + name + ": " + r.statusCode() + r.body());
    }
  }

  /** The connector's status document, or null while the worker cannot tell. */
  String status(String name) {
    try {
      HttpResponse<String> r = get("/connectors/" + name + "/status");
      return r.statusCode() == 200 ? r.body() : null;
    } catch (IOException e) {
      return null;
    }
  }

  /** SIGKILL: no shutdown hook, no final offset commit, no transaction abort. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
        kill();
      }
    }
  }

  private HttpResponse<String> get(String path) throws IOException {
    return send(HttpRequest.newBuilder(url(path)).GET().build());
  }

  private HttpResponse<String> send(HttpRequest request) throws IOException {
    try {
      return HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  private URI url(String path) {
    return URI.create("http://localhost:" + port + path);
  }

  private static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        default -> sb.append(c);
      }
    }
    return sb.append('"').toString();
  }
}
