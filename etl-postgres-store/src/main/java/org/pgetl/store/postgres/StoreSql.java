package org.pgetl.store.postgres;

import org.pgetl.model.TableName;

/**
 * Every SQL statement of the store, with the schema quoted in. The first parameter of every
 * statement is the pipeline id: no statement reads or writes another pipeline's rows.
 *
 * <p>Table ids are bound as {@code bigint} and cast to {@code oid}; LSNs are bound as text and cast
 * to {@code pg_lsn}, and read back as text.
 */
final class StoreSql {
  // --- replication_state
  final String selectCurrentStates;
  final String selectHistory;
  final String updateState;
  final String rollbackState;
  final String deleteTableStates;
  final String insertInitState;
  final String resetAllStates;
  final String deletePipelineStates;

  // --- replication_progress
  final String selectApplyProgress;
  final String selectTableSyncProgress;
  final String upsertApplyProgress;
  final String upsertTableSyncProgress;
  final String deleteApplyProgress;
  final String deleteTableSyncProgress;
  final String deletePipelineProgress;

  // --- table_schemas, table_columns
  final String selectSchemas;
  final String upsertSchema;
  final String deleteColumns;
  final String insertColumn;
  final String pruneSchemas;
  final String deleteTableSchemas;
  final String deletePipelineSchemas;

  // --- destination_tables_metadata
  final String selectMetadata;
  final String upsertMetadata;
  final String deleteTableMetadata;
  final String deletePipelineMetadata;

  // --- destination_lifecycle
  final String selectLifecycle;
  final String upsertLifecycle;

  // --- table_requests, table_copies
  final String insertRequest;
  final String selectRequests;
  final String deleteRequest;
  final String deleteTableRequests;
  final String deletePipelineRequests;
  final String upsertCopy;
  final String selectCopies;
  final String deleteTableCopy;
  final String deletePipelineCopies;

  StoreSql(String schema) {
    String s = TableName.quoteIdentifier(schema) + ".";
    String state = s + "replication_state";
    String progress = s + "replication_progress";
    String schemas = s + "table_schemas";
    String columns = s + "table_columns";
    String metadata = s + "destination_tables_metadata";
    String lifecycle = s + "destination_lifecycle";
    String requests = s + "table_requests";
    String copies = s + "table_copies";

    selectCurrentStates =
        "SELECT table_id::bigint, "
            + StateCodec.SELECT_LIST
            + " FROM "
            + state
            + " WHERE pipeline_id = ? AND is_current";
    // Follows prev from the current row, so the order is the chain's, whatever the ids.
    selectHistory =
        "WITH RECURSIVE chain AS ("
            + " SELECT id, prev, state, metadata, 0 AS depth FROM "
            + state
            + " WHERE pipeline_id = ? AND table_id = ?::oid AND is_current"
            + " UNION ALL"
            + " SELECT r.id, r.prev, r.state, r.metadata, chain.depth + 1 FROM "
            + state
            + " r JOIN chain ON r.id = chain.prev)"
            + " SELECT "
            + StateCodec.SELECT_LIST
            + " FROM chain ORDER BY depth";
    // One statement: the current row stops being current and becomes the new row's prev.
    updateState =
        "WITH old AS (UPDATE "
            + state
            + " SET is_current = false WHERE pipeline_id = ? AND table_id = ?::oid AND is_current"
            + " RETURNING id)"
            + " INSERT INTO "
            + state
            + " (pipeline_id, table_id, state, metadata, prev)"
            + " SELECT ?, ?::oid, ?, "
            + StateCodec.METADATA_EXPRESSION
            + ", (SELECT id FROM old)";
    // One statement: the current row goes away and its prev is current again; no row when the
    // current row has no prev.
    rollbackState =
        "WITH cur AS (DELETE FROM "
            + state
            + " WHERE pipeline_id = ? AND table_id = ?::oid AND is_current AND prev IS NOT NULL"
            + " RETURNING prev)"
            + " UPDATE "
            + state
            + " SET is_current = true WHERE id = (SELECT prev FROM cur) RETURNING "
            + StateCodec.SELECT_LIST;
    deleteTableStates = "DELETE FROM " + state + " WHERE pipeline_id = ? AND table_id = ?::oid";
    insertInitState =
        "INSERT INTO " + state + " (pipeline_id, table_id, state) VALUES (?, ?::oid, 'init')";
    resetAllStates =
        "WITH old AS (UPDATE "
            + state
            + " SET is_current = false WHERE pipeline_id = ? AND is_current"
            + " RETURNING id, table_id)"
            + " INSERT INTO "
            + state
            + " (pipeline_id, table_id, state, prev)"
            + " SELECT ?, table_id, 'init', id FROM old RETURNING table_id::bigint";
    deletePipelineStates = "DELETE FROM " + state + " WHERE pipeline_id = ?";

    selectApplyProgress =
        "SELECT flush_lsn::text FROM "
            + progress
            + " WHERE pipeline_id = ? AND worker_kind = 'apply'";
    selectTableSyncProgress =
        "SELECT flush_lsn::text FROM "
            + progress
            + " WHERE pipeline_id = ? AND worker_kind = 'table_sync' AND table_id = ?::oid";
    // Monotonic in SQL: concurrent callers serialise on the row, and each gets the stored value.
    upsertApplyProgress =
        "INSERT INTO "
            + progress
            + " AS p (pipeline_id, worker_kind, table_id, flush_lsn) VALUES (?, 'apply', NULL,"
            + " ?::pg_lsn) ON CONFLICT (pipeline_id) WHERE worker_kind = 'apply'"
            + " DO UPDATE SET flush_lsn = GREATEST(p.flush_lsn, EXCLUDED.flush_lsn),"
            + " updated_at = now() RETURNING flush_lsn::text";
    upsertTableSyncProgress =
        "INSERT INTO "
            + progress
            + " AS p (pipeline_id, worker_kind, table_id, flush_lsn) VALUES (?, 'table_sync',"
            + " ?::oid, ?::pg_lsn) ON CONFLICT (pipeline_id, table_id)"
            + " WHERE worker_kind = 'table_sync'"
            + " DO UPDATE SET flush_lsn = GREATEST(p.flush_lsn, EXCLUDED.flush_lsn),"
            + " updated_at = now() RETURNING flush_lsn::text";
    deleteApplyProgress =
        "DELETE FROM " + progress + " WHERE pipeline_id = ? AND worker_kind = 'apply'";
    deleteTableSyncProgress =
        "DELETE FROM "
            + progress
            + " WHERE pipeline_id = ? AND worker_kind = 'table_sync' AND table_id = ?::oid";
    deletePipelineProgress = "DELETE FROM " + progress + " WHERE pipeline_id = ?";

    // A version without columns still has its row, hence the outer join.
    selectSchemas =
        "SELECT v.id, v.schema_name, v.table_name, v.snapshot_lsn::text, c.column_index, c.name,"
            + " c.type_oid::bigint, c.type_modifier, c.type_name, c.ordinal_position,"
            + " c.primary_key_ordinal, c.nullable, c.default_expression, v.identity_kind,"
            + " c.replicated, c.identity_ordinal FROM "
            + schemas
            + " v LEFT JOIN "
            + columns
            + " c ON c.table_schema_id = v.id"
            + " WHERE v.pipeline_id = ? AND v.table_id = ?::oid"
            + " ORDER BY v.snapshot_lsn, c.column_index";
    upsertSchema =
        "INSERT INTO "
            + schemas
            + " (pipeline_id, table_id, schema_name, table_name, snapshot_lsn, identity_kind)"
            + " VALUES (?, ?::oid, ?, ?, ?::pg_lsn, ?)"
            + " ON CONFLICT (pipeline_id, table_id, snapshot_lsn) DO UPDATE SET"
            + " schema_name = EXCLUDED.schema_name, table_name = EXCLUDED.table_name,"
            + " identity_kind = EXCLUDED.identity_kind, created_at = now() RETURNING id";
    deleteColumns = "DELETE FROM " + columns + " WHERE table_schema_id = ?";
    insertColumn =
        "INSERT INTO "
            + columns
            + " (table_schema_id, column_index, name, type_oid, type_modifier, type_name,"
            + " ordinal_position, primary_key_ordinal, nullable, default_expression, replicated,"
            + " identity_ordinal)"
            + " VALUES (?, ?, ?, ?::oid, ?, ?, ?, ?, ?, ?, ?, ?)";
    // Keeps the newest version at or before the durable LSN, and every newer one.
    pruneSchemas =
        "DELETE FROM "
            + schemas
            + " WHERE pipeline_id = ? AND table_id = ?::oid AND snapshot_lsn < ("
            + "SELECT snapshot_lsn FROM "
            + schemas
            + " WHERE pipeline_id = ? AND table_id = ?::oid AND snapshot_lsn <= ?::pg_lsn"
            + " ORDER BY snapshot_lsn DESC LIMIT 1)";
    deleteTableSchemas = "DELETE FROM " + schemas + " WHERE pipeline_id = ? AND table_id = ?::oid";
    deletePipelineSchemas = "DELETE FROM " + schemas + " WHERE pipeline_id = ?";

    selectMetadata =
        "SELECT destination_table_id, snapshot_lsn::text, applied FROM "
            + metadata
            + " WHERE pipeline_id = ? AND table_id = ?::oid";
    upsertMetadata =
        "INSERT INTO "
            + metadata
            + " (pipeline_id, table_id, destination_table_id, snapshot_lsn, applied)"
            + " VALUES (?, ?::oid, ?, ?::pg_lsn, ?)"
            + " ON CONFLICT (pipeline_id, table_id) DO UPDATE SET"
            + " destination_table_id = EXCLUDED.destination_table_id,"
            + " snapshot_lsn = EXCLUDED.snapshot_lsn, applied = EXCLUDED.applied,"
            + " updated_at = now()";
    deleteTableMetadata =
        "DELETE FROM " + metadata + " WHERE pipeline_id = ? AND table_id = ?::oid";
    deletePipelineMetadata = "DELETE FROM " + metadata + " WHERE pipeline_id = ?";

    selectLifecycle =
        "SELECT state, reason, updated_by, updated_at FROM "
            + lifecycle
            + " WHERE pipeline_id = ? AND destination_name = ?";
    upsertLifecycle =
        "INSERT INTO "
            + lifecycle
            + " (pipeline_id, destination_name, state, reason, updated_by, updated_at)"
            + " VALUES (?, ?, ?, ?, ?, now())"
            + " ON CONFLICT (pipeline_id, destination_name) DO UPDATE SET"
            + " state = EXCLUDED.state, reason = EXCLUDED.reason,"
            + " updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at";

    insertRequest =
        "INSERT INTO "
            + requests
            + " (pipeline_id, table_id, action, requested_by) VALUES (?, ?::oid, ?, ?)"
            + " RETURNING id, requested_at";
    selectRequests =
        "SELECT id, table_id::bigint, action, requested_by, requested_at FROM "
            + requests
            + " WHERE pipeline_id = ? ORDER BY id";
    deleteRequest = "DELETE FROM " + requests + " WHERE pipeline_id = ? AND id = ?";
    deleteTableRequests =
        "DELETE FROM " + requests + " WHERE pipeline_id = ? AND table_id = ?::oid";
    deletePipelineRequests = "DELETE FROM " + requests + " WHERE pipeline_id = ?";
    upsertCopy =
        "INSERT INTO "
            + copies
            + " (pipeline_id, table_id, attempt_id, rows_copied, batches, finished_at)"
            + " VALUES (?, ?::oid, ?::uuid, ?, ?, ?)"
            + " ON CONFLICT (pipeline_id, table_id) DO UPDATE SET"
            + " attempt_id = EXCLUDED.attempt_id, rows_copied = EXCLUDED.rows_copied,"
            + " batches = EXCLUDED.batches, finished_at = EXCLUDED.finished_at";
    selectCopies =
        "SELECT table_id::bigint, attempt_id::text, rows_copied, batches, finished_at FROM "
            + copies
            + " WHERE pipeline_id = ?";
    deleteTableCopy = "DELETE FROM " + copies + " WHERE pipeline_id = ? AND table_id = ?::oid";
    deletePipelineCopies = "DELETE FROM " + copies + " WHERE pipeline_id = ?";
  }
}
