package org.pgetl.core.internal.pg;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.pgetl.model.TableId;

/**
 * The {@code application_name} of every connection pgetl opens, so that an operator can tell them
 * apart in {@code pg_stat_activity} and {@code pg_stat_replication}: {@code pgetl:<role>:<pipeline
 * id>[:<table oid>[:<n>]]}.
 *
 * <p>PostgreSQL keeps at most 63 bytes of a name; {@link #clamp(String)} cuts longer names itself,
 * on a UTF-8 character boundary, so that the server never sees half a character.
 */
public final class ApplicationNames {
  /** The longest name PostgreSQL keeps, in bytes ({@code NAMEDATALEN - 1}). */
  public static final int MAX_BYTES = 63;

  private ApplicationNames() {}

  /**
   * Returns the name of the apply worker's replication connection.
   *
   * @param pipelineId the pipeline id
   * @return {@code pgetl:apply:<pipeline>}
   */
  public static String apply(String pipelineId) {
    return clamp("pgetl:apply:" + Objects.requireNonNull(pipelineId, "pipelineId"));
  }

  /**
   * Returns the name of a table-sync worker's replication connection.
   *
   * @param pipelineId the pipeline id
   * @param table the table being copied
   * @return {@code pgetl:sync:<pipeline>:<table oid>}
   */
  public static String tableSync(String pipelineId, TableId table) {
    return clamp("pgetl:sync:" + Objects.requireNonNull(pipelineId, "pipelineId") + ":" + table);
  }

  /**
   * Returns the name of one copy connection of a table.
   *
   * @param pipelineId the pipeline id
   * @param table the table being copied
   * @param worker the copy worker's number, from 0
   * @return {@code pgetl:copy:<pipeline>:<table oid>:<worker>}
   */
  public static String copy(String pipelineId, TableId table, int worker) {
    return clamp(
        "pgetl:copy:"
            + Objects.requireNonNull(pipelineId, "pipelineId")
            + ":"
            + table
            + ":"
            + worker);
  }

  /**
   * Returns the name of a connection that reads catalogs and manages slots for a pipeline.
   *
   * @param pipelineId the pipeline id
   * @return {@code pgetl:catalog:<pipeline>}
   */
  public static String catalog(String pipelineId) {
    return clamp("pgetl:catalog:" + Objects.requireNonNull(pipelineId, "pipelineId"));
  }

  /**
   * Cuts a name to at most {@value #MAX_BYTES} UTF-8 bytes without splitting a character.
   *
   * @param name the name
   * @return the name itself when short enough, else its longest prefix that fits
   */
  public static String clamp(String name) {
    Objects.requireNonNull(name, "name");
    if (name.length() * 3 <= MAX_BYTES
        || name.getBytes(StandardCharsets.UTF_8).length <= MAX_BYTES) {
      return name;
    }
    int bytes = 0;
    int i = 0;
    while (i < name.length()) {
      int cp = name.codePointAt(i);
      int len = utf8Length(cp);
      if (bytes + len > MAX_BYTES) {
        break;
      }
      bytes += len;
      i += Character.charCount(cp);
    }
    return name.substring(0, i);
  }

  private static int utf8Length(int cp) {
    if (cp < 0x80) {
      return 1;
    } else if (cp < 0x800) {
      return 2;
    } else if (cp < 0x10000) {
      // A lone surrogate encodes as '?' (1 byte) in Java; counting 3 only cuts earlier.
      return 3;
    }
    return 4;
  }
}
