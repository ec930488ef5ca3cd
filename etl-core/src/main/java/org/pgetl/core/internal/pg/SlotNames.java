package org.pgetl.core.internal.pg;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableId;

/**
 * Names of pgetl's replication slots, and the rule every slot name obeys: lower-case letters,
 * digits and underscores, at most 63 bytes.
 *
 * <p>The apply worker's slot is {@code pgetl_apply_<pipelineId>}; the slot of a table copy is
 * {@code pgetl_sync_<pipelineId>_<tableOid>}. The table oid comes last and is all digits, so {@link
 * #parseTableSync(String, String)} finds the table of a leftover slot without ambiguity, even when
 * pipeline ids contain underscores.
 */
public final class SlotNames {
  /** The longest slot name PostgreSQL accepts, in bytes. */
  public static final int MAX_BYTES = 63;

  /** Prefix of apply slots. */
  public static final String APPLY_PREFIX = "pgetl_apply_";

  /** Prefix of table-sync slots. */
  public static final String TABLE_SYNC_PREFIX = "pgetl_sync_";

  private SlotNames() {}

  /**
   * Returns the apply slot name of a pipeline.
   *
   * @param pipelineId the pipeline id: lower-case letters, digits and underscores
   * @return {@code pgetl_apply_<pipelineId>}
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when the name would be invalid
   */
  public static String apply(String pipelineId) {
    return validate(APPLY_PREFIX + checkPipelineId(pipelineId));
  }

  /**
   * Returns the slot name of a table copy.
   *
   * @param pipelineId the pipeline id: lower-case letters, digits and underscores
   * @param table the table
   * @return {@code pgetl_sync_<pipelineId>_<tableOid>}
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when the name would be invalid
   */
  public static String tableSync(String pipelineId, TableId table) {
    Objects.requireNonNull(table, "table");
    return validate(TABLE_SYNC_PREFIX + checkPipelineId(pipelineId) + "_" + table.oid());
  }

  /**
   * Returns the prefix shared by every table-sync slot of a pipeline, for listing them.
   *
   * @param pipelineId the pipeline id
   * @return {@code pgetl_sync_<pipelineId>_}
   */
  public static String tableSyncPrefix(String pipelineId) {
    return TABLE_SYNC_PREFIX + checkPipelineId(pipelineId) + "_";
  }

  /**
   * Returns the table of a table-sync slot of this pipeline, or empty when the slot is not one.
   *
   * @param slotName a slot name, for example from {@code pg_replication_slots}
   * @param pipelineId the pipeline id
   * @return the table whose copy created the slot, or empty
   */
  public static Optional<TableId> parseTableSync(String slotName, String pipelineId) {
    String prefix = tableSyncPrefix(pipelineId);
    if (slotName == null || !slotName.startsWith(prefix)) {
      return Optional.empty();
    }
    String rest = slotName.substring(prefix.length());
    if (rest.isEmpty() || rest.length() > 10 || !rest.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return Optional.empty();
    }
    long oid = Long.parseLong(rest);
    return oid >= 1 && oid <= 0xFFFFFFFFL ? Optional.of(new TableId(oid)) : Optional.empty();
  }

  /**
   * Checks a slot name: 1 to 63 bytes of {@code [a-z0-9_]}.
   *
   * @param name the slot name
   * @return the name
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} naming the rule that failed
   */
  public static String validate(String name) {
    if (name == null || name.isEmpty()) {
      throw new EtlException(ErrorKind.CONFIG_ERROR, "replication slot name must not be empty");
    }
    int bytes = name.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_BYTES) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "replication slot name must be at most "
              + MAX_BYTES
              + " bytes, was "
              + bytes
              + ": '"
              + name
              + "' (use a shorter pipeline id)");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
        throw new EtlException(
            ErrorKind.CONFIG_ERROR,
            "replication slot name must contain only a-z, 0-9 and _, was '" + name + "'");
      }
    }
    return name;
  }

  private static String checkPipelineId(String pipelineId) {
    if (pipelineId == null || pipelineId.isEmpty()) {
      throw new EtlException(ErrorKind.CONFIG_ERROR, "pipelineId must not be empty");
    }
    for (int i = 0; i < pipelineId.length(); i++) {
      char c = pipelineId.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
        throw new EtlException(
            ErrorKind.CONFIG_ERROR,
            "pipelineId must contain only a-z, 0-9 and _ (it names replication slots), was '"
                + pipelineId
                + "'");
      }
    }
    return pipelineId;
  }
}
