package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.sql.SQLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

class PgErrorsTest {
  /** A server error as pgjdbc builds it from the wire: fields separated by NUL. */
  static PSQLException server(String state, String message, String detail) {
    String raw = "SERROR\0C" + state + "\0M" + message + (detail == null ? "" : "\0D" + detail);
    return new PSQLException(new ServerErrorMessage(raw));
  }

  @ParameterizedTest
  @CsvSource({
    "08006, connection failure, SOURCE_CONNECTION_FAILED",
    "08001, could not connect, SOURCE_CONNECTION_FAILED",
    "28P01, password authentication failed for user \"etl\", SOURCE_AUTHENTICATION_ERROR",
    "28000, no pg_hba.conf entry, SOURCE_AUTHENTICATION_ERROR",
    "57P01, terminating connection due to administrator command, SOURCE_DATABASE_SHUTDOWN",
    "57P02, crash shutdown, SOURCE_DATABASE_SHUTDOWN",
    "57P03, the database system is starting up, SOURCE_DATABASE_IN_RECOVERY",
    "53400, all replication slots are in use, SOURCE_CONFIGURATION_LIMIT_EXCEEDED",
    "53300, too many connections, SOURCE_CONFIGURATION_LIMIT_EXCEEDED",
    "55P03, could not obtain lock, SOURCE_LOCK_TIMEOUT",
    "40001, could not serialize access, SOURCE_TRANSACTION_CONFLICT",
    "40P01, deadlock detected, SOURCE_TRANSACTION_CONFLICT",
    "57014, canceling statement due to statement timeout, SOURCE_OPERATION_CANCELED",
    "42501, permission denied for table t, PERMISSION_DENIED",
    "42P01, relation \"t\" does not exist, SOURCE_SCHEMA_ERROR",
    "42703, column \"c\" does not exist, SOURCE_SCHEMA_ERROR",
    "42704, type \"x\" does not exist, SOURCE_SCHEMA_ERROR",
    "22P02, invalid input syntax for type integer, CONVERSION_ERROR",
    "22023, invalid snapshot identifier: \"0-1\", SOURCE_SNAPSHOT_TOO_OLD",
    "42704, snapshot \"00000003-00000002-1\" does not exist, SOURCE_SNAPSHOT_TOO_OLD",
    "42710, replication slot \"s\" already exists, REPLICATION_SLOT_ALREADY_EXISTS",
    "42710, publication \"p\" already exists, SOURCE_QUERY_FAILED",
    "42704, replication slot \"s\" does not exist, REPLICATION_SLOT_NOT_FOUND",
    "55000, can no longer get changes from replication slot \"s\", REPLICATION_SLOT_INVALIDATED",
    "55000, logical decoding requires wal_level >= logical, SOURCE_QUERY_FAILED",
    "42601, syntax error at or near \"x\", SOURCE_QUERY_FAILED",
  })
  void mapsSqlStates(String state, String message, ErrorKind expected) {
    EtlException e = PgErrors.map(server(state, message, null), "doing something");
    assertThat(e.kind()).isEqualTo(expected);
    assertThat(e.description()).isEqualTo("doing something");
    assertThat(e.detail()).startsWith("SQLSTATE " + state + ": ").contains(message);
  }

  /**
   * What heals by itself is retried on a timer; what needs a person waits for one (the error table
   * of docs/operations.md).
   */
  @ParameterizedTest
  @CsvSource({
    "08006, connection failure, TIMED",
    "57P01, terminating connection due to administrator command, TIMED",
    "57P03, the database system is in recovery mode, TIMED",
    "40001, could not serialize access due to concurrent update, TIMED",
    "40P01, deadlock detected, TIMED",
    "55P03, could not obtain lock, TIMED",
    "53300, too many connections, TIMED",
    "53400, all replication slots are in use, TIMED",
    "42501, permission denied for table t, MANUAL",
    "42P01, relation \"t\" does not exist, MANUAL",
    "22P02, invalid input syntax for type integer, MANUAL",
    "28P01, password authentication failed, MANUAL",
  })
  void sqlStatesThatHealByThemselvesAreRetriedOnATimer(
      String state, String message, org.pgetl.error.RetryDirective expected) {
    assertThat(PgErrors.map(server(state, message, null), "x").directive()).isEqualTo(expected);
  }

  @Test
  void invalidationReasonInTheDetailIsRecognised() {
    // PostgreSQL 13 to 15 say why in the detail.
    EtlException e =
        PgErrors.map(
            server(
                "55000",
                "cannot read from logical replication slot \"s\"",
                "This slot has been invalidated because it exceeded the maximum reserved size."),
            "streaming");
    assertThat(e.kind()).isEqualTo(ErrorKind.REPLICATION_SLOT_INVALIDATED);
    assertThat(e.detail()).contains("detail: This slot has been invalidated");
  }

  @Test
  void noSqlStateOrIoCauseIsAConnectionFailure() {
    assertThat(PgErrors.map(new SQLException("boom"), "x").kind())
        .isEqualTo(ErrorKind.SOURCE_CONNECTION_FAILED);
    PSQLException io =
        new PSQLException(
            "Database connection failed when reading from copy",
            PSQLState.UNKNOWN_STATE,
            new IOException("reset"));
    assertThat(PgErrors.map(io, "x").kind()).isEqualTo(ErrorKind.SOURCE_CONNECTION_FAILED);
    PSQLException refused =
        new PSQLException(
            "Connection refused", PSQLState.CONNECTION_UNABLE_TO_CONNECT, new ConnectException());
    assertThat(PgErrors.map(refused, "x").kind()).isEqualTo(ErrorKind.SOURCE_CONNECTION_FAILED);
  }

  @Test
  void tlsFailuresAreTlsErrors() {
    PSQLException handshake =
        new PSQLException(
            "SSL error: PKIX path building failed",
            PSQLState.CONNECTION_FAILURE,
            new SSLHandshakeException("PKIX path building failed"));
    assertThat(PgErrors.map(handshake, "x").kind()).isEqualTo(ErrorKind.TLS_ERROR);
    PSQLException unsupported =
        new PSQLException("The server does not support SSL.", PSQLState.CONNECTION_REJECTED);
    assertThat(PgErrors.map(unsupported, "x").kind()).isEqualTo(ErrorKind.TLS_ERROR);
  }

  @Test
  void missingPasswordReportedByTheDriverIsAnAuthenticationError() {
    PSQLException e =
        new PSQLException(
            "The server requested SCRAM-based authentication, but no password was provided.",
            PSQLState.CONNECTION_REJECTED);
    assertThat(PgErrors.map(e, "x").kind()).isEqualTo(ErrorKind.SOURCE_AUTHENTICATION_ERROR);
  }

  @Test
  void secretIsScrubbedFromTheDetail() {
    SQLException e = new SQLException("failed with password hunter22 somewhere", "08001");
    EtlException mapped = PgErrors.map(e, "connecting", "hunter22");
    assertThat(mapped.getMessage()).doesNotContain("hunter22");
    assertThat(mapped.detail()).contains("***");
  }

  @Test
  void keepsServerDetailAndHint() {
    String raw = "SERROR\0C42501\0Mpermission denied\0Ddetail text\0Hhint text";
    EtlException e = PgErrors.map(new PSQLException(new ServerErrorMessage(raw)), "x");
    assertThat(e.detail())
        .isEqualTo("SQLSTATE 42501: permission denied; detail: detail text; hint: hint text");
  }

  @org.junit.jupiter.api.Test
  void aMissingDatabaseIsAConfigurationErrorNotATableQueryFailure() {
    java.sql.SQLException e =
        new java.sql.SQLException("FATAL: database \"nodb\" does not exist", "3D000");
    org.assertj.core.api.Assertions.assertThat(PgErrors.map(e, "could not connect", null).kind())
        .isEqualTo(org.pgetl.error.ErrorKind.CONFIG_ERROR);
  }
}
