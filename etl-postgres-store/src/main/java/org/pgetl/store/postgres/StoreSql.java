package org.pgetl.store.postgres;

import org.pgetl.model.TableName;

/**
 * Every SQL statement of the store, with the schema quoted in. The first parameter of every
 * statement is the pipeline id: no statement reads or writes another pipeline's rows.
 *
 * <p>Table ids are bound as {@code bigint} and cast to {@code oid}; LSNs are bound as text and cast
 * to {@code pg_lsn}, and read back as text; chunk bounds are bound and read as JDBC arrays of
 * {@code text}.
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

  // --- table_chunks
  final String selectChunks;
  final String insertChunk;
  final String lockFirstChunk;
  final String insertKeyChunk;
  final String startChunkRead;
  final String completeChunk;
  final String reopenChunks;
  final String deleteTableChunks;
  final String deletePipelineChunks;

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
    String chunks = s + "table_chunks";

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

    // Bounds are text[] bound with Connection.createArrayOf, which quotes each element: commas,
    // quotes, backslashes, braces and the word NULL come back as they went in.
    selectChunks =
        "SELECT attempt_id::text, chunk_index, kind, lower_bound, upper_bound, reads,"
            + " watermark_lsn::text, rows_copied, bytes_copied, done_at FROM "
            + chunks
            + " WHERE pipeline_id = ? AND table_id = ?::oid ORDER BY chunk_index";
    insertChunk =
        "INSERT INTO "
            + chunks
            + " (pipeline_id, table_id, attempt_id, chunk_index, kind, lower_bound, upper_bound)"
            + " VALUES (?, ?::oid, ?::uuid, ?, ?, ?::text[], ?::text[])";
    // Serialises the key chunks added to one attempt: a second caller waits here, then its insert
    // (a statement with a new snapshot) sees the first one's index. No row: no chunks of the
    // attempt.
    lockFirstChunk =
        "SELECT chunk_index FROM "
            + chunks
            + " WHERE pipeline_id = ? AND table_id = ?::oid AND attempt_id = ?::uuid"
            + " ORDER BY chunk_index LIMIT 1 FOR UPDATE";
    // No row when the attempt has no chunks (then the lock above found none either).
    insertKeyChunk =
        "INSERT INTO "
            + chunks
            + " (pipeline_id, table_id, attempt_id, chunk_index, kind, lower_bound, upper_bound)"
            + " SELECT ?, ?::oid, ?::uuid, max(chunk_index) + 1, 'key', ?::text[], ?::text[] FROM "
            + chunks
            + " WHERE pipeline_id = ? AND table_id = ?::oid AND attempt_id = ?::uuid"
            + " HAVING count(*) > 0 RETURNING chunk_index";
    startChunkRead =
        "UPDATE "
            + chunks
            + " SET reads = reads + 1 WHERE pipeline_id = ? AND table_id = ?::oid"
            + " AND attempt_id = ?::uuid AND chunk_index = ? RETURNING reads";
    // The values come first in a derived table, so that the pipeline id stays the first parameter.
    completeChunk =
        "UPDATE "
            + chunks
            + " c SET watermark_lsn = v.watermark_lsn, rows_copied = v.rows_copied,"
            + " bytes_copied = v.bytes_copied, done_at = now()"
            + " FROM (SELECT ?::text AS pipeline_id, ?::oid AS table_id, ?::uuid AS attempt_id,"
            + " ?::integer AS chunk_index, ?::pg_lsn AS watermark_lsn, ?::bigint AS rows_copied,"
            + " ?::bigint AS bytes_copied) v"
            + " WHERE c.pipeline_id = v.pipeline_id AND c.table_id = v.table_id"
            + " AND c.attempt_id = v.attempt_id AND c.chunk_index = v.chunk_index";
    reopenChunks =
        "UPDATE "
            + chunks
            + " SET watermark_lsn = NULL, rows_copied = 0, bytes_copied = 0, done_at = NULL"
            + " WHERE pipeline_id = ? AND table_id = ?::oid AND attempt_id = ?::uuid"
            + " AND watermark_lsn > ?::pg_lsn";
    deleteTableChunks = "DELETE FROM " + chunks + " WHERE pipeline_id = ? AND table_id = ?::oid";
    deletePipelineChunks = "DELETE FROM " + chunks + " WHERE pipeline_id = ?";
  }
}
