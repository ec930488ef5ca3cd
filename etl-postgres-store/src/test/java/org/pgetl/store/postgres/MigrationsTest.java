package org.pgetl.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class MigrationsTest {

  private static String v1() throws IOException {
    try (InputStream in =
        MigrationsTest.class.getResourceAsStream("/db/pgetl/V1__pipeline_store.sql")) {
      assertThat(in).as("V1 migration in the jar").isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void theVersionsAnUpToDateStoreHoldsAreTheJarsMigrations() throws IOException {
    // the fast open of an up-to-date store compares the history with this list: a new migration
    // must be added to it, or stores would skip it
    java.util.Set<String> inJar = new java.util.TreeSet<>();
    try (java.util.stream.Stream<java.nio.file.Path> files =
        java.nio.file.Files.list(java.nio.file.Path.of("src/main/resources/db/pgetl"))) {
      files.forEach(
          f -> {
            Matcher m = Pattern.compile("V(\\d+)__.*\\.sql").matcher(f.getFileName().toString());
            assertThat(m.matches()).as(f.toString()).isTrue();
            inJar.add(m.group(1));
          });
    }
    assertThat(inJar).isNotEmpty().isEqualTo(new java.util.TreeSet<>(Migrations.VERSIONS));
  }

  @Test
  void theLockKeyIsStablePerSchema() {
    // Processes of different versions must agree on the key: it is part of the on-disk contract.
    assertThat(Migrations.lockKey("etl")).isEqualTo(0x7067_6574_0000_0000L | 0xbe0a_4158L);
    assertThat(Migrations.lockKey("etl")).isNotEqualTo(Migrations.lockKey("ETL"));
  }

  @Test
  void everyObjectOfTheFirstMigrationIsInTheConfiguredSchema() throws IOException {
    String sql = v1();
    Matcher m =
        Pattern.compile(
                "(?i)\\b(CREATE (?:UNIQUE )?(?:TABLE|INDEX)|REFERENCES|ON|COMMENT ON (?:TABLE|COLUMN))\\s+(\\S+)")
            .matcher(sql.replaceAll("--[^\n]*", ""));
    int tables = 0;
    while (m.find()) {
      String kind = m.group(1).toUpperCase();
      String target = m.group(2);
      if (kind.startsWith("CREATE") && kind.endsWith("INDEX")) {
        continue; // an index lives in its table's schema
      }
      if (kind.equals("ON") && !target.startsWith("${")) {
        continue; // ON CONFLICT, ON DELETE
      }
      assertThat(target).as(m.group()).startsWith("${pgetl_schema}.");
      if (kind.endsWith("TABLE") && kind.startsWith("CREATE")) {
        tables++;
      }
    }
    assertThat(tables).isEqualTo(6);
  }
}
