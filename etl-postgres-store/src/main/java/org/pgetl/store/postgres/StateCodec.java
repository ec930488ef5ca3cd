package org.pgetl.store.postgres;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.error.RetryDirective;
import org.pgetl.model.Lsn;
import org.pgetl.store.TableState;

/**
 * Maps a {@link TableState} to a row of {@code replication_state} and back: the type to the {@code
 * state} column, its fields to the {@code metadata} jsonb.
 *
 * <p>The JSON is built and taken apart by PostgreSQL ({@code jsonb_build_object}, {@code ->>}), so
 * no value is ever escaped by hand. Shape of {@code metadata}:
 *
 * <pre>
 * sync_done: {"lsn": "0/16B3748"}
 * errored:   {"error_kind": "SOURCE_ERROR", "reason": "...", "hint": "...",
 *             "retry": {"policy": "timed", "next_retry": "2025-01-01T00:00:00Z", "attempts": 2}}
 *            (policy none or manual carries no next_retry/attempts)
 * others:    {}
 * </pre>
 *
 * The retry time is kept as ISO-8601 text, so it round-trips to the nanosecond.
 */
final class StateCodec {

  /** The SQL expression that builds {@code metadata}; bind it with {@link #bindMetadata}. */
  static final String METADATA_EXPRESSION =
      "jsonb_strip_nulls(jsonb_build_object("
          + "'lsn', ?::text, 'error_kind', ?::text, 'reason', ?::text, 'hint', ?::text, "
          + "'retry', CASE WHEN ?::text IS NULL THEN NULL ELSE jsonb_build_object("
          + "'policy', ?::text, 'next_retry', ?::text, 'attempts', ?::integer) END))";

  /** The select list that {@link #read} takes apart, as 8 columns. */
  static final String SELECT_LIST =
      "state, metadata->>'lsn', metadata->>'error_kind', metadata->>'reason', metadata->>'hint',"
          + " metadata->'retry'->>'policy', metadata->'retry'->>'next_retry',"
          + " metadata->'retry'->>'attempts'";

  private StateCodec() {}

  /**
   * Returns the value of the {@code state} column for a state type.
   *
   * @param type a persisted type
   * @return {@code init}, {@code data_sync}, {@code finished_copy}, {@code sync_done}, {@code
   *     ready} or {@code errored}
   */
  static String dbValue(TableState.Type type) {
    return switch (type) {
      case INIT -> "init";
      case DATA_SYNC -> "data_sync";
      case FINISHED_COPY -> "finished_copy";
      case SYNC_DONE -> "sync_done";
      case READY -> "ready";
      case ERRORED -> "errored";
      case SYNC_WAIT, CATCHUP ->
          throw new IllegalArgumentException(type + " is a memory-only state");
    };
  }

  /**
   * Binds the 8 parameters of {@link #METADATA_EXPRESSION}.
   *
   * @param ps the statement
   * @param index the index of the first parameter
   * @param state the state
   * @return the index of the parameter after the last one bound
   */
  static int bindMetadata(PreparedStatement ps, int index, TableState state) throws SQLException {
    String lsn = null;
    String kind = null;
    String reason = null;
    String hint = null;
    String policy = null;
    String nextRetry = null;
    Integer attempts = null;
    if (state instanceof TableState.SyncDone syncDone) {
      lsn = syncDone.lsn().toString();
    } else if (state instanceof TableState.Errored e) {
      kind = e.kind().name();
      reason = withoutNul(e.reason());
      hint = withoutNul(e.hint());
      switch (e.retry()) {
        case TIMED -> {
          policy = "timed";
          nextRetry =
              Objects.requireNonNull(e.nextRetry(), "a timed retry names its time").toString();
          attempts = e.attempts();
        }
        case MANUAL -> policy = "manual";
        case NONE -> policy = "none";
      }
    }
    ps.setString(index++, lsn);
    ps.setString(index++, kind);
    ps.setString(index++, reason);
    ps.setString(index++, hint);
    ps.setString(index++, policy);
    ps.setString(index++, policy);
    ps.setString(index++, nextRetry);
    if (attempts == null) {
      ps.setNull(index++, Types.INTEGER);
    } else {
      ps.setInt(index++, attempts);
    }
    return index;
  }

  /**
   * Reads a state from the 8 columns of {@link #SELECT_LIST}.
   *
   * @param rs the result set, on a row
   * @param index the index of the {@code state} column
   * @return the state
   * @throws EtlException of kind {@code INVALID_STATE} when the row does not describe a state this
   *     version knows
   */
  static TableState read(ResultSet rs, int index) throws SQLException {
    String state = rs.getString(index);
    try {
      return switch (state) {
        case "init" -> TableState.INIT;
        case "data_sync" -> TableState.DATA_SYNC;
        case "finished_copy" -> TableState.FINISHED_COPY;
        case "ready" -> TableState.READY;
        case "sync_done" ->
            new TableState.SyncDone(Lsn.parse(required(rs.getString(index + 1), "lsn")));
        case "errored" ->
            errored(
                ErrorKind.valueOf(required(rs.getString(index + 2), "error_kind")),
                required(rs.getString(index + 3), "reason"),
                required(rs.getString(index + 4), "hint"),
                rs.getString(index + 5),
                rs.getString(index + 6),
                rs.getString(index + 7));
        default -> throw new IllegalArgumentException("unknown state '" + state + "'");
      };
    } catch (IllegalArgumentException | DateTimeParseException e) {
      throw unreadable(state, e);
    } catch (EtlException e) {
      throw unreadable(state, e);
    }
  }

  private static TableState.Errored errored(
      ErrorKind kind,
      String reason,
      String hint,
      String policy,
      String nextRetry,
      String attempts) {
    return switch (required(policy, "retry.policy")) {
      case "none" -> new TableState.Errored(kind, reason, hint, RetryDirective.NONE);
      case "manual" -> new TableState.Errored(kind, reason, hint, RetryDirective.MANUAL);
      case "timed" ->
          new TableState.Errored(
              kind,
              reason,
              hint,
              RetryDirective.TIMED,
              Instant.parse(required(nextRetry, "retry.next_retry")),
              Integer.parseInt(required(attempts, "retry.attempts")));
      default -> throw new IllegalArgumentException("unknown retry policy '" + policy + "'");
    };
  }

  private static String required(String value, String field) {
    if (value == null) {
      throw new IllegalArgumentException("metadata." + field + " is missing");
    }
    return value;
  }

  private static EtlException unreadable(String state, Exception cause) {
    return new EtlException(
        ErrorKind.INVALID_STATE,
        "a stored table state of type '" + state + "' cannot be read by this version of pgetl",
        cause.getMessage(),
        cause);
  }

  // PostgreSQL text cannot hold NUL; a reason quoting raw bytes must still be storable.
  private static String withoutNul(String s) {
    return s.indexOf('\0') < 0 ? s : s.replace('\0', '\uFFFD');
  }
}
