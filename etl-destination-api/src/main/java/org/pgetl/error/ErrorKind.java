package org.pgetl.error;

/**
 * The kind of an {@link EtlException}: where the failure comes from and, through {@link
 * #directive()}, whether the pipeline retries it.
 *
 * <p>Kinds are grouped by {@link Group}. A destination reports its own failures with the {@code
 * DESTINATION_*} kinds; the engine uses the others. The mapping from kind to retry directive and
 * operator hint lives in one switch of this enum and nowhere else.
 */
public enum ErrorKind {
  // --- source: the PostgreSQL server we replicate from
  /** The source connection could not be opened or was lost (network, walsender terminated). */
  SOURCE_CONNECTION_FAILED(Group.SOURCE),
  /** A query on the source failed for a reason not covered by a more precise kind. */
  SOURCE_QUERY_FAILED(Group.SOURCE),
  /** A lock on the source could not be taken within {@code lock_timeout}. */
  SOURCE_LOCK_TIMEOUT(Group.SOURCE),
  /** The source cancelled a statement ({@code statement_timeout} or an operator cancel). */
  SOURCE_OPERATION_CANCELED(Group.SOURCE),
  /** The source is shutting down or crashed. */
  SOURCE_DATABASE_SHUTDOWN(Group.SOURCE),
  /** The source is starting up or in recovery and does not accept the operation yet. */
  SOURCE_DATABASE_IN_RECOVERY(Group.SOURCE),
  /** A table or column the pipeline relies on does not exist or has an unexpected shape. */
  SOURCE_SCHEMA_ERROR(Group.SOURCE),
  /** A table's replica identity does not allow the operation (for example NOTHING). */
  SOURCE_REPLICA_IDENTITY_ERROR(Group.SOURCE),
  /** The exported snapshot is too old or no longer exists. */
  SOURCE_SNAPSHOT_TOO_OLD(Group.SOURCE),
  /** A server limit was reached ({@code max_replication_slots}, {@code max_wal_senders}, ...). */
  SOURCE_CONFIGURATION_LIMIT_EXCEEDED(Group.SOURCE),
  /** A serialization failure or a deadlock on the source (SQLSTATE 40001, 40P01). */
  SOURCE_TRANSACTION_CONFLICT(Group.SOURCE),
  /** The source's {@code wal_level} is not {@code logical}: no logical replication is possible. */
  SOURCE_WAL_LEVEL_NOT_LOGICAL(Group.SOURCE),
  /** Any other source failure. */
  SOURCE_ERROR(Group.SOURCE),

  // --- destination: the system a Destination writes to
  /** The destination could not be reached. */
  DESTINATION_CONNECTION_FAILED(Group.DESTINATION),
  /** The destination did not answer in time. */
  DESTINATION_TIMEOUT(Group.DESTINATION),
  /** The destination rejected an atomic batch for a reason that a retry can clear. */
  DESTINATION_ATOMIC_BATCH_RETRYABLE(Group.DESTINATION),
  /** A query or request on the destination failed. */
  DESTINATION_QUERY_FAILED(Group.DESTINATION),
  /** The destination's tables do not match what the pipeline expects. */
  DESTINATION_SCHEMA_ERROR(Group.DESTINATION),
  /** The destination holds a newer schema than the one the pipeline replays. */
  DESTINATION_SCHEMA_REWIND(Group.DESTINATION),
  /** The destination cannot store a value (for example NULL inside an array). */
  UNSUPPORTED_VALUE_IN_DESTINATION(Group.DESTINATION),
  /**
   * The destination broke the acknowledgement contract, for example by answering {@code accepted}
   * to a write that required durability.
   */
  DESTINATION_CONTRACT_VIOLATION(Group.DESTINATION),
  /** Any other destination failure. */
  DESTINATION_ERROR(Group.DESTINATION),

  // --- replication: slots, the replication protocol
  /** A replication slot the pipeline needs does not exist. */
  REPLICATION_SLOT_NOT_FOUND(Group.REPLICATION),
  /** A replication slot to be created already exists. */
  REPLICATION_SLOT_ALREADY_EXISTS(Group.REPLICATION),
  /** A replication slot could not be created. */
  REPLICATION_SLOT_NOT_CREATED(Group.REPLICATION),
  /** The slot was invalidated by the server ({@code wal_status = 'lost'}): WAL is gone. */
  REPLICATION_SLOT_INVALIDATED(Group.REPLICATION),
  /** A slot could not be dropped because its walsender did not go away in time. */
  REPLICATION_SLOT_DELETION_TIMEOUT(Group.REPLICATION),
  /** The replication stream broke the protocol (unexpected message order or content). */
  REPLICATION_PROTOCOL_ERROR(Group.REPLICATION),

  // --- state: the pipeline's own state and workers
  /** Another instance of the pipeline holds its lease (and this one was told to fail fast). */
  PIPELINE_RUNNING_ELSEWHERE(Group.STATE),
  /** The pipeline reached a state it should not be in (a bug, or concurrent tampering). */
  INVALID_STATE(Group.STATE),
  /** The state store could not be read or written. */
  STATE_STORE_ERROR(Group.STATE),
  /** A table state could not be rolled back (no earlier state). */
  STATE_ROLLBACK_ERROR(Group.STATE),
  /** A worker thread died of an unexpected exception. */
  WORKER_PANIC(Group.STATE),

  // --- data: values and messages
  /** Bytes from the server could not be decoded (malformed message or value). */
  INVALID_DATA(Group.DATA),
  /** A well-formed value could not be converted to its Java type. */
  CONVERSION_ERROR(Group.DATA),
  /** A value broke a rule the pipeline checks. */
  VALIDATION_ERROR(Group.DATA),

  // --- config
  /** The configuration is invalid. */
  CONFIG_ERROR(Group.CONFIG),
  /** The publication does not exist or publishes no table. */
  PUBLICATION_NOT_FOUND(Group.CONFIG),

  // --- security
  /** The source rejected the credentials. */
  SOURCE_AUTHENTICATION_ERROR(Group.SECURITY),
  /** The destination rejected the credentials. */
  DESTINATION_AUTHENTICATION_ERROR(Group.SECURITY),
  /** The role lacks a privilege the operation needs. */
  PERMISSION_DENIED(Group.SECURITY),
  /** TLS could not be established or the server certificate did not verify. */
  TLS_ERROR(Group.SECURITY);

  /** The family a kind belongs to. */
  public enum Group {
    /** The source PostgreSQL server. */
    SOURCE,
    /** The destination. */
    DESTINATION,
    /** Replication slots and the replication protocol. */
    REPLICATION,
    /** The pipeline's own state and workers. */
    STATE,
    /** Values and messages. */
    DATA,
    /** Configuration. */
    CONFIG,
    /** Credentials, privileges and TLS. */
    SECURITY
  }

  private final Group group;

  ErrorKind(Group group) {
    this.group = group;
  }

  /**
   * Returns the family of this kind.
   *
   * @return the group, never null
   */
  public Group group() {
    return group;
  }

  /**
   * Returns what the pipeline does after a failure of this kind. This enum is the one place that
   * decides it: only transient infrastructure failures are retried automatically; everything that
   * needs a human (bad data, schema, credentials, a broken contract) waits for an operator.
   *
   * @return the directive, never null
   */
  public RetryDirective directive() {
    return policy().directive();
  }

  /**
   * Returns one sentence that tells an operator what to do about a failure of this kind.
   *
   * @return the hint, never null
   */
  public String hint() {
    return policy().hint();
  }

  /** The directive and the hint of a kind, decided together. */
  private record Policy(RetryDirective directive, String hint) {}

  private Policy policy() {
    return switch (this) {
      case SOURCE_CONNECTION_FAILED ->
          timed(
              "check that the source server is reachable; the pipeline reconnects by itself for as"
                  + " long as it takes");
      case SOURCE_DATABASE_SHUTDOWN ->
          timed("the source server is restarting; the pipeline reconnects when it is back");
      case SOURCE_DATABASE_IN_RECOVERY ->
          timed(
              "the source server is in recovery; the pipeline retries when it accepts connections");
      case SOURCE_LOCK_TIMEOUT ->
          timed("a lock on the source was busy; the pipeline retries" + BOUNDED_RETRIES);
      case SOURCE_OPERATION_CANCELED ->
          timed("a statement was cancelled on the source; the pipeline retries" + BOUNDED_RETRIES);
      case DESTINATION_CONNECTION_FAILED ->
          timed("check that the destination is reachable; the pipeline retries" + BOUNDED_RETRIES);
      case DESTINATION_TIMEOUT ->
          timed("the destination was slow; the pipeline retries" + BOUNDED_RETRIES);
      case DESTINATION_ATOMIC_BATCH_RETRYABLE ->
          timed(
              "the destination asked for the batch to be sent again; the pipeline retries"
                  + BOUNDED_RETRIES);
      case SOURCE_QUERY_FAILED ->
          manual(
              "read the SQL error in the detail, fix its cause on the source, then retry the table (pgetl tables retry)");
      case SOURCE_SCHEMA_ERROR ->
          manual(
              "the table's shape on the source is not what the pipeline expects: fix the table or the"
                  + " publication, then retry the table (pgetl tables retry)");
      case SOURCE_REPLICA_IDENTITY_ERROR ->
          manual(
              "give the table a primary key or set REPLICA IDENTITY (FULL or USING INDEX), then"
                  + " start the pipeline again, or retry a table that failed for it (pgetl tables"
                  + " retry)");
      case SOURCE_SNAPSHOT_TOO_OLD ->
          manual(
              "the copy snapshot expired: raise old_snapshot_threshold or copy with fewer tables at"
                  + " once, then retry the table (pgetl tables retry)");
      case SOURCE_CONFIGURATION_LIMIT_EXCEEDED ->
          timed(
              "the source has no free replication slot, WAL sender or connection: raise"
                  + " max_replication_slots / max_wal_senders / max_connections on the source, or"
                  + " lower maxTableSyncWorkers (a running pipeline retries until one is free; a"
                  + " start fails at once)");
      case SOURCE_TRANSACTION_CONFLICT ->
          timed(
              "a statement lost a serialization or deadlock conflict on the source; the pipeline"
                  + " retries"
                  + BOUNDED_RETRIES);
      case SOURCE_WAL_LEVEL_NOT_LOGICAL ->
          manual(
              "set wal_level = logical on the source (ALTER SYSTEM SET wal_level = logical, or the"
                  + " parameter group of a managed server) and restart the server, then start the"
                  + " pipeline again");
      case SOURCE_ERROR ->
          manual(
              "read the detail for the source error, fix it, then retry the table (pgetl tables retry)");
      case DESTINATION_QUERY_FAILED ->
          manual(
              "read the destination's error in the detail, fix it, then retry the table (pgetl tables retry)");
      case DESTINATION_SCHEMA_ERROR ->
          manual(
              "make the destination table match the source schema, then retry the table (pgetl tables retry)");
      case DESTINATION_SCHEMA_REWIND ->
          manual(
              "the destination holds a newer schema than the replayed data: reset the table to copy it"
                  + " again");
      case UNSUPPORTED_VALUE_IN_DESTINATION ->
          manual(
              "the destination cannot store a value of this table: change the column type or the"
                  + " destination, then retry the table (pgetl tables retry)");
      case DESTINATION_CONTRACT_VIOLATION ->
          manual(
              "the destination broke the acknowledgement contract (see docs/destination-contract.md):"
                  + " fix the destination, then restart");
      case DESTINATION_ERROR ->
          manual(
              "read the destination's error in the detail, fix it, then retry the table (pgetl tables retry)");
      case REPLICATION_SLOT_NOT_FOUND ->
          manual(
              "the replication slot is gone with the changes it held: for the apply slot, set"
                  + " invalidatedSlotBehavior=RECREATE to copy every table again; for a table's"
                  + " slot, resync the table (pgetl tables resync) to copy it again");
      case REPLICATION_SLOT_ALREADY_EXISTS ->
          manual("another process uses this pipeline id: stop it, or drop the slot, then restart");
      case REPLICATION_SLOT_NOT_CREATED ->
          manual("check max_replication_slots and the REPLICATION privilege, then restart");
      case REPLICATION_SLOT_INVALIDATED ->
          manual(
              "the server removed WAL the slot needed (max_slot_wal_keep_size): set"
                  + " invalidatedSlotBehavior=RECREATE to copy every table again");
      case REPLICATION_SLOT_DELETION_TIMEOUT ->
          timed("a walsender still holds the slot; the pipeline tries again");
      case REPLICATION_PROTOCOL_ERROR ->
          manual(
              "the replication stream was not what pgetl expects: report it with the detail, then"
                  + " restart");
      case PIPELINE_RUNNING_ELSEWHERE ->
          none(
              "another instance of this pipeline id runs (see the holder in the message): stop it,"
                  + " or start this one with instanceMode STANDBY to take over when it stops");
      case INVALID_STATE ->
          manual(
              "the pipeline state is inconsistent: report it with the detail; resetting the table"
                  + " copies it again");
      case STATE_STORE_ERROR ->
          timed(
              "the state store could not be read or written: check its connection settings and"
                  + " that its database is reachable (a running pipeline retries by itself for as"
                  + " long as it takes; a start fails at once)");
      case STATE_ROLLBACK_ERROR ->
          manual(
              "the table has no earlier state to roll back to: resync it instead (pgetl tables resync)");
      case WORKER_PANIC ->
          manual(
              "a worker died of an unexpected error: report it with the detail, then roll the table"
                  + " back");
      case INVALID_DATA ->
          manual("bytes from the server could not be decoded: report it with the detail");
      case CONVERSION_ERROR ->
          manual("a value could not be converted: report it with the column type in the detail");
      case VALIDATION_ERROR -> manual("a value broke a rule: see the detail");
      case CONFIG_ERROR ->
          none(
              "fix the configuration named in the message (for example the database name) and start"
                  + " again");
      case PUBLICATION_NOT_FOUND ->
          none("create the publication (CREATE PUBLICATION ... FOR TABLE ...) or fix its name");
      case SOURCE_AUTHENTICATION_ERROR ->
          manual("check the source user and password (pg_hba.conf, password), then restart");
      case DESTINATION_AUTHENTICATION_ERROR ->
          manual("check the destination credentials, then restart");
      case PERMISSION_DENIED ->
          manual(
              "grant the privilege named in the message (see docs/operations.md for the minimal"
                  + " grants), then start the pipeline again, or retry a table that failed for it"
                  + " (pgetl tables retry)");
      case TLS_ERROR -> manual("check sslmode, the root certificate and the server certificate");
    };
  }

  private static final String BOUNDED_RETRIES =
      " with a growing delay, retryMaxAttempts times in a row (a table's copy then waits for an"
          + " operator; the apply stream stops the pipeline: restart it once the cause is fixed)";

  private static Policy timed(String hint) {
    return new Policy(RetryDirective.TIMED, hint);
  }

  private static Policy manual(String hint) {
    return new Policy(RetryDirective.MANUAL, hint);
  }

  private static Policy none(String hint) {
    return new Policy(RetryDirective.NONE, hint);
  }
}
