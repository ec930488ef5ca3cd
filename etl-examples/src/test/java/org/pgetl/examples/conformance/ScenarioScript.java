package org.pgetl.examples.conformance;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One conformance scenario read from {@code conformance/<name>.sql} on the test class path: the
 * publisher-side statements of one of PostgreSQL's subscription tests, with directives that say
 * which publication pgetl reads and what the mirror must hold where it differs from the source.
 *
 * <p>The format, line by line:
 *
 * <pre>
 * --! publication NAME        the publication the pipeline reads (required)
 * --! binary                  pgoutput in binary mode
 * --! streaming 64kB          logical_decoding_work_mem of the source database; the apply slot
 *                             must have streamed at least one in-progress transaction
 * --! streaming immediate     debug_logical_replication_streaming = immediate instead
 * --@ setup                   the statements after it run before the pipeline starts
 * --@ workload                the statements after it run while the pipeline runs
 * --@ on N                    the statements after it run on session N (1 by default)
 * --@ kill                    the killed pass kills the pipeline's process here
 * --@ expect SQL => TEXT      after the mirror caught up, SQL on the mirror yields TEXT
 *                             (columns joined by |, rows by ;)
 * --@ differs TABLE WHY       TABLE is left out of the final mirror-equals-source comparison
 * --@ absent TABLE            the mirror has no table of this name
 * </pre>
 *
 * <p>Other lines are SQL; a statement ends at a line ending in {@code ;} outside a {@code $$} body,
 * and each statement runs on its own (in its own transaction unless it is inside an explicit {@code
 * BEGIN}), as {@code psql} runs a script.
 */
final class ScenarioScript {
  /** One step of the workload, in order. */
  sealed interface Step permits Sql, Kill, Expect {}

  /** A statement and the session that runs it. */
  record Sql(int session, String text) implements Step {}

  /** Where the killed pass kills the pipeline's process. */
  record Kill() implements Step {}

  /** A query on the mirror and its expected text, checked once the mirror caught up. */
  record Expect(String sql, String expected) implements Step {}

  final String name;
  final String publication;
  final boolean binary;
  final String streaming; // null, "64kB" or "immediate"
  final List<String> setup;
  final List<Step> workload;
  final Map<String, String> differs;
  final List<String> absent;

  private ScenarioScript(
      String name,
      String publication,
      boolean binary,
      String streaming,
      List<String> setup,
      List<Step> workload,
      Map<String, String> differs,
      List<String> absent) {
    this.name = name;
    this.publication = publication;
    this.binary = binary;
    this.streaming = streaming;
    this.setup = setup;
    this.workload = workload;
    this.differs = differs;
    this.absent = absent;
  }

  /** Reads {@code conformance/<name>.sql} from the class path. */
  static ScenarioScript load(String name) throws IOException {
    String resource = "/conformance/" + name + ".sql";
    try (InputStream in = ScenarioScript.class.getResourceAsStream(resource)) {
      Objects.requireNonNull(in, resource);
      return parse(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  static ScenarioScript parse(String name, String text) {
    String publication = null;
    boolean binary = false;
    String streaming = null;
    List<String> setup = new ArrayList<>();
    List<Step> workload = new ArrayList<>();
    Map<String, String> differs = new LinkedHashMap<>();
    List<String> absent = new ArrayList<>();
    boolean inWorkload = false;
    int session = 1;
    StringBuilder statement = new StringBuilder();
    int lineNo = 0;
    for (String line : text.split("\n", -1)) {
      lineNo++;
      String t = line.strip();
      if (statement.length() == 0 && (t.startsWith("--!") || t.startsWith("--@"))) {
        String[] words = t.substring(3).strip().split("\\s+", 2);
        String rest = words.length > 1 ? words[1].strip() : "";
        switch (words[0]) {
          case "publication" -> publication = rest;
          case "binary" -> binary = true;
          case "streaming" -> streaming = rest;
          case "setup" -> inWorkload = false;
          case "workload" -> inWorkload = true;
          case "on" -> session = Integer.parseInt(rest);
          case "kill" -> workload.add(new Kill());
          case "expect" -> {
            int arrow = rest.lastIndexOf("=>");
            if (arrow < 0) {
              throw new IllegalArgumentException(name + ":" + lineNo + ": expect needs =>");
            }
            workload.add(
                new Expect(rest.substring(0, arrow).strip(), rest.substring(arrow + 2).strip()));
          }
          case "differs" -> {
            String[] p = rest.split("\\s+", 2);
            differs.put(p[0], p.length > 1 ? p[1] : "");
          }
          case "absent" -> absent.add(rest);
          default ->
              throw new IllegalArgumentException(
                  name + ":" + lineNo + ": unknown directive " + words[0]);
        }
        continue;
      }
      if (statement.length() == 0 && (t.isEmpty() || t.startsWith("--"))) {
        continue;
      }
      statement.append(line).append('\n');
      if (t.endsWith(";") && dollarQuotesClosed(statement)) {
        String sql = statement.toString().strip();
        statement.setLength(0);
        if (inWorkload) {
          workload.add(new Sql(session, sql));
        } else {
          setup.add(sql);
        }
      }
    }
    if (statement.length() > 0) {
      throw new IllegalArgumentException(name + ": statement without ; at the end: " + statement);
    }
    if (publication == null) {
      throw new IllegalArgumentException(name + ": no --! publication");
    }
    return new ScenarioScript(
        name, publication, binary, streaming, setup, workload, differs, absent);
  }

  private static boolean dollarQuotesClosed(CharSequence s) {
    int count = 0;
    for (int i = s.toString().indexOf("$$"); i >= 0; i = s.toString().indexOf("$$", i + 2)) {
      count++;
    }
    return count % 2 == 0;
  }

  /** Tells whether the workload names a kill point. */
  boolean hasKillPoint() {
    return workload.stream().anyMatch(s -> s instanceof Kill);
  }

  @Override
  public String toString() {
    return name;
  }
}
