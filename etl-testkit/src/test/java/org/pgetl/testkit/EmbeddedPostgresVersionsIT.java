package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every supported major starts, decodes a change through pgoutput and stops without a trace. */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class EmbeddedPostgresVersionsIT {

  @ParameterizedTest(name = "PostgreSQL {0}")
  @ValueSource(ints = {14, 15, 16, 17, 18})
  void startsDecodesAndStops(int major) throws Exception {
    Path dataDir;
    long pid;
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().version(major).start()) {
      dataDir = pg.dataDirectory();
      pid = pg.pid();
      assertThat(pg.serverVersionNum() / 10000).isEqualTo(major);
      assertThat(pg.isRunning()).isTrue();
      assertThat(Files.isDirectory(dataDir)).isTrue();

      try (Connection c = pg.connect("postgres");
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE items (id bigint PRIMARY KEY, name text)");
        s.execute("CREATE PUBLICATION pub FOR TABLE items");
        s.execute("SELECT pg_create_logical_replication_slot('slot_" + major + "', 'pgoutput')");
        s.execute("INSERT INTO items VALUES (1, 'first')");
        List<Character> kinds = new ArrayList<>();
        try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT data FROM pg_logical_slot_peek_binary_changes(?, NULL, NULL,"
                    + " 'proto_version', '1', 'publication_names', 'pub')")) {
          ps.setString(1, "slot_" + major);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              kinds.add((char) rs.getBytes(1)[0]);
            }
          }
        }
        assertThat(kinds).containsSubsequence('B', 'R', 'I', 'C');
        s.execute("SELECT pg_drop_replication_slot('slot_" + major + "')");
      }
    }
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    assertThat(dataDir).doesNotExist();
    assertThat(dataDir.getParent()).doesNotExist();
  }
}
