package org.pgetl.core.internal.pg;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.sql.SQLException;
import java.util.Locale;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * The one place that turns a {@link SQLException} from the source server into an {@link
 * EtlException}: the SQLSTATE decides the {@link ErrorKind}, and the detail keeps the SQLSTATE and
 * the server's message, detail and hint.
 *
 * <p>A few slot errors share their SQLSTATE with unrelated errors (42710 duplicate object, 42704
 * undefined object, 55000 object not in prerequisite state); they are told apart by the server's
 * English message text, so a server with a translated {@code lc_messages} gets the generic kind for
 * them. Messages never carry the password: the server never echoes it, and pgjdbc's own messages do
 * not either; {@link #map(SQLException, String, String)} still scrubs a given secret.
 */
public final class PgErrors {
  private PgErrors() {}

  /**
   * Maps a failure of a statement or a connection to an {@code EtlException}.
   *
   * @param e the failure
   * @param description what pgetl was doing, naming the table, slot or LSN (no secrets)
   * @return the exception to throw
   */
  public static EtlException map(SQLException e, String description) {
    return map(e, description, null);
  }

  /**
   * Maps a failure like {@link #map(SQLException, String)}, and removes every occurrence of {@code
   * secret} from the detail (used while connecting, where the password is at hand).
   *
   * @param e the failure
   * @param description what pgetl was doing (no secrets)
   * @param secret a text that must not appear in the result, or null
   * @return the exception to throw
   */
  public static EtlException map(SQLException e, String description, @Nullable String secret) {
    String state = e.getSQLState();
    String message = messageOf(e);
    ErrorKind kind = kindOf(state, message, e);
    return new EtlException(kind, description, Secrets.scrub(detailOf(e, state), secret), e);
  }

  /**
   * Returns the kind for a SQLSTATE and the server's primary message.
   *
   * @param state the SQLSTATE, or null when the failure has none
   * @param message the primary message, or null
   * @param e the failure, whose cause chain reveals TLS and I/O errors
   * @return the kind
   */
  static ErrorKind kindOf(@Nullable String state, @Nullable String message, Throwable e) {
    String msg = message == null ? "" : message.toLowerCase(Locale.ROOT);
    if (isTlsFailure(e, msg)) {
      return ErrorKind.TLS_ERROR;
    }
    if (state == null || state.isEmpty()) {
      return ErrorKind.SOURCE_CONNECTION_FAILED;
    }
    if (state.startsWith("08")) {
      // pgjdbc reports a missing password with 08004 before the server says anything.
      if (msg.contains("password") && msg.contains("authentication")) {
        return ErrorKind.SOURCE_AUTHENTICATION_ERROR;
      }
      return ErrorKind.SOURCE_CONNECTION_FAILED;
    }
    if (state.startsWith("28")) {
      return ErrorKind.SOURCE_AUTHENTICATION_ERROR;
    }
    if (state.startsWith("22")) {
      if (state.equals("22023") && msg.contains("snapshot")) {
        // "invalid snapshot identifier": the exporting transaction ended.
        return ErrorKind.SOURCE_SNAPSHOT_TOO_OLD;
      }
      return ErrorKind.CONVERSION_ERROR;
    }
    return switch (state) {
      case "57P01", "57P02" -> ErrorKind.SOURCE_DATABASE_SHUTDOWN;
      case "57P03" -> ErrorKind.SOURCE_DATABASE_IN_RECOVERY;
      // invalid_catalog_name: the configured database does not exist
      case "3D000" -> ErrorKind.CONFIG_ERROR;
      case "53400", "53300" -> ErrorKind.SOURCE_CONFIGURATION_LIMIT_EXCEEDED;
      case "55P03" -> ErrorKind.SOURCE_LOCK_TIMEOUT;
      case "40001", "40P01" -> ErrorKind.SOURCE_TRANSACTION_CONFLICT;
      case "57014" -> ErrorKind.SOURCE_OPERATION_CANCELED;
      case "42501" -> ErrorKind.PERMISSION_DENIED;
      case "72000" -> ErrorKind.SOURCE_SNAPSHOT_TOO_OLD;
      case "42710" ->
          msg.contains("replication slot")
              ? ErrorKind.REPLICATION_SLOT_ALREADY_EXISTS
              : ErrorKind.SOURCE_QUERY_FAILED;
      case "42704" -> {
        if (msg.contains("replication slot") && msg.contains("does not exist")) {
          yield ErrorKind.REPLICATION_SLOT_NOT_FOUND;
        }
        // 'snapshot "..." does not exist': the exporting transaction or command has ended.
        if (msg.startsWith("snapshot ") && msg.contains("does not exist")) {
          yield ErrorKind.SOURCE_SNAPSHOT_TOO_OLD;
        }
        yield ErrorKind.SOURCE_SCHEMA_ERROR;
      }
      case "42P01", "42703" -> ErrorKind.SOURCE_SCHEMA_ERROR;
      case "55000" ->
          msg.contains("can no longer get changes from replication slot")
                  || (msg.contains("replication slot") && msg.contains("invalidated"))
                  || msg.contains("cannot read from logical replication slot")
              ? ErrorKind.REPLICATION_SLOT_INVALIDATED
              : ErrorKind.SOURCE_QUERY_FAILED;
      default -> {
        if (hasCause(e, IOException.class)) {
          yield ErrorKind.SOURCE_CONNECTION_FAILED;
        }
        yield ErrorKind.SOURCE_QUERY_FAILED;
      }
    };
  }

  private static boolean isTlsFailure(Throwable e, String msg) {
    if (hasCause(e, SSLException.class) || hasCause(e, GeneralSecurityException.class)) {
      return true;
    }
    // pgjdbc: "The server does not support SSL." and "SSL error: ..." (its own texts, English).
    return msg.startsWith("ssl error") || msg.contains("does not support ssl");
  }

  private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e == null ? null : e.getCause(); t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private static @Nullable String messageOf(SQLException e) {
    if (e instanceof PSQLException p) {
      ServerErrorMessage sem = p.getServerErrorMessage();
      if (sem != null && sem.getMessage() != null) {
        String m = sem.getMessage();
        // The slot invalidation reason is in the detail on PostgreSQL 13 to 15.
        return sem.getDetail() == null ? m : m + " " + sem.getDetail();
      }
    }
    return e.getMessage();
  }

  private static String detailOf(SQLException e, @Nullable String state) {
    StringBuilder sb = new StringBuilder();
    sb.append("SQLSTATE ").append(state == null || state.isEmpty() ? "none" : state);
    if (e instanceof PSQLException p && p.getServerErrorMessage() != null) {
      ServerErrorMessage sem = p.getServerErrorMessage();
      sb.append(": ").append(sem.getMessage());
      if (sem.getDetail() != null) {
        sb.append("; detail: ").append(sem.getDetail());
      }
      if (sem.getHint() != null) {
        sb.append("; hint: ").append(sem.getHint());
      }
    } else {
      sb.append(": ").append(e.getMessage());
      Throwable cause = e.getCause();
      if (cause != null && cause.getMessage() != null) {
        sb.append("; cause: ").append(cause.getClass().getSimpleName()).append(": ");
        sb.append(cause.getMessage());
      }
    }
    return sb.toString();
  }
}
