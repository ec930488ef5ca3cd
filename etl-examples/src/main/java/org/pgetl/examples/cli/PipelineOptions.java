package org.pgetl.examples.cli;

import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.store.PipelineStore;
import picocli.CommandLine.Option;

/**
 * The options that say which pipeline a command is about, shared by {@code replicate} and {@code
 * check}: the source, the publication, the pipeline id, where its state is kept and how many tables
 * are copied at once.
 */
final class PipelineOptions {
  @Option(
      names = "--source-url",
      required = true,
      paramLabel = "URL",
      description =
          "The source database: jdbc:postgresql://host:port/db?user=..&password=.. or"
              + " postgresql://user:password@host:port/db.")
  String sourceUrl;

  @Option(
      names = "--publication",
      required = true,
      paramLabel = "NAME",
      description = "The publication to replicate.")
  String publication;

  @Option(
      names = "--pipeline-id",
      paramLabel = "ID",
      defaultValue = "cli",
      description =
          "The pipeline's id, 1-40 characters of [a-z0-9_]; it names the replication"
              + " slot pgetl_apply_<id> and scopes the stored state (default: ${DEFAULT-VALUE}).")
  String pipelineId;

  @Option(
      names = "--state-store",
      paramLabel = "STORE",
      defaultValue = "source",
      converter = StateStoreSpec.Converter.class,
      description =
          "Where the pipeline keeps its progress: source (schema --store-schema of the"
              + " source database), memory (copies everything again at each start) or a"
              + " jdbc:postgresql:// URL of another database (default: ${DEFAULT-VALUE}).")
  StateStoreSpec stateStore;

  @Option(
      names = "--store-schema",
      paramLabel = "SCHEMA",
      defaultValue = "etl",
      description = "The schema of the state store's tables (default: ${DEFAULT-VALUE}).")
  String storeSchema;

  @Option(
      names = "--max-table-sync-workers",
      paramLabel = "N",
      defaultValue = "" + PipelineConfig.DEFAULT_MAX_TABLE_SYNC_WORKERS,
      description =
          "How many tables are copied at once; each holds a replication slot and a walsender"
              + " while it copies (default: ${DEFAULT-VALUE}).")
  int maxTableSyncWorkers;

  @Option(
      names = "--require-replica-identity",
      description =
          "Make a table without a replica identity (no primary key, REPLICA IDENTITY NOTHING)"
              + " an error of that table, in a publication of UPDATE or DELETE; by default it is"
              + " copied and its INSERTs and TRUNCATEs replicated, as PostgreSQL's own subscriber"
              + " does.")
  boolean requireReplicaIdentity;

  @Option(
      names = "--failover-slots",
      paramLabel = "MODE",
      defaultValue = "auto",
      description =
          "Whether the apply slot is a failover slot, which a physical standby with"
              + " sync_replication_slots = on keeps, so that replication resumes from it after the"
              + " standby's promotion: auto (on for PostgreSQL 17+, off before), on (fails on a"
              + " server before 17) or off (default: ${DEFAULT-VALUE}).")
  PipelineConfig.FailoverSlots failoverSlots;

  @Option(
      names = "--on-missing-slot",
      paramLabel = "WHAT",
      defaultValue = "fail",
      description =
          "What to do when the apply slot is missing (lost in a failover to a standby without"
              + " its copy, dropped by hand) or invalidated: fail (exit, an operator decides) or"
              + " recopy (create a new slot and copy every table again) (default:"
              + " ${DEFAULT-VALUE}).")
  MissingSlot onMissingSlot;

  /** What {@code --on-missing-slot} asks for. */
  enum MissingSlot {
    /** Exit with the error. */
    FAIL,
    /** Copy every table again with a new slot. */
    RECOPY;

    PipelineConfig.InvalidatedSlotBehavior behavior() {
      return this == RECOPY
          ? PipelineConfig.InvalidatedSlotBehavior.RECREATE
          : PipelineConfig.InvalidatedSlotBehavior.FAIL;
    }
  }

  /**
   * Returns the source's connection settings; a URL without a password takes it from {@code
   * PGPASSWORD}.
   *
   * @return the settings
   */
  PgConnectionConfig source() {
    return Connections.config(sourceUrl);
  }

  /**
   * Returns the pipeline's configuration, with the defaults {@code pgetl replicate} uses.
   *
   * @param source the source's settings
   * @return the configuration
   */
  PipelineConfig config(PgConnectionConfig source) {
    return build(builder(source));
  }

  /**
   * Returns a configuration builder holding these options, for a command to add its own.
   *
   * @param source the source's settings
   * @return the builder
   */
  PipelineConfig.Builder builder(PgConnectionConfig source) {
    return PipelineConfig.builder()
        .pipelineId(pipelineId)
        .publication(publication)
        .source(source)
        .maxTableSyncWorkers(maxTableSyncWorkers)
        .requireReplicaIdentity(requireReplicaIdentity)
        .failoverSlots(failoverSlots)
        .invalidatedSlotBehavior(onMissingSlot.behavior());
  }

  /**
   * Builds a configuration; an invalid setting is an input error naming the option.
   *
   * @param b the builder
   * @return the configuration
   */
  static PipelineConfig build(PipelineConfig.Builder b) {
    try {
      return b.build();
    } catch (org.pgetl.error.EtlException e) {
      if (e.kind() != org.pgetl.error.ErrorKind.CONFIG_ERROR) {
        throw e;
      }
      throw new CliException(ReplicateCommand.optionNames(e.description()), Main.EXIT_USAGE);
    }
  }

  /**
   * Opens the state store without creating anything (a PostgreSQL store's schema is created or
   * migrated by the pipeline's start, after its preflight checks).
   *
   * @param source the source's settings
   * @return the open store; close it
   */
  PipelineStore openStore(PgConnectionConfig source) {
    return stateStore.open(source, pipelineId, storeSchema);
  }
}
