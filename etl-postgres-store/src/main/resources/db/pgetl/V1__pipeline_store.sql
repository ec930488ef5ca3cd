-- pgetl pipeline store, version 1. Released migrations are never edited: change the schema with a
-- new V<n>__*.sql file.
--
-- ${pgetl_schema} is the store's schema, already quoted; it exists before this script runs.
-- Every row carries pipeline_id: pipelines that share a database never see each other's rows.
-- Every table has a primary key, so that a publication FOR ALL TABLES on this database can still
-- replicate updates and deletes of these tables.

-- Table replication states with their history. The current state of a table is the one row with
-- is_current; each update inserts a new row whose prev is the row it replaced.
CREATE TABLE ${pgetl_schema}.replication_state (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pipeline_id text        NOT NULL,
    table_id    oid         NOT NULL,
    state       text        NOT NULL
        CONSTRAINT replication_state_state_check
        CHECK (state IN ('init', 'data_sync', 'finished_copy', 'sync_done', 'ready', 'errored')),
    metadata    jsonb       NOT NULL DEFAULT '{}'::jsonb,
    prev        bigint      REFERENCES ${pgetl_schema}.replication_state (id),
    is_current  boolean     NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX replication_state_current_key
    ON ${pgetl_schema}.replication_state (pipeline_id, table_id) WHERE is_current;
CREATE INDEX replication_state_table_idx
    ON ${pgetl_schema}.replication_state (pipeline_id, table_id);
-- Deleting a row checks that no row still points at it through prev.
CREATE INDEX replication_state_prev_idx
    ON ${pgetl_schema}.replication_state (prev);

COMMENT ON TABLE ${pgetl_schema}.replication_state IS
    'pgetl: replication state of each table of each pipeline, with history (prev); one row per (pipeline_id, table_id) has is_current';
COMMENT ON COLUMN ${pgetl_schema}.replication_state.metadata IS
    'the state''s fields: lsn (sync_done); error_kind, reason, hint and retry {policy, next_retry, attempts} (errored)';

-- Durable progress of each worker: every change before flush_lsn is durable in the destination.
-- Only ever moves forward (the upsert keeps the greatest value).
CREATE TABLE ${pgetl_schema}.replication_progress (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pipeline_id text        NOT NULL,
    worker_kind text        NOT NULL
        CONSTRAINT replication_progress_worker_kind_check
        CHECK (worker_kind IN ('apply', 'table_sync')),
    table_id    oid,
    flush_lsn   pg_lsn      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT replication_progress_table_check
        CHECK ((worker_kind = 'apply') = (table_id IS NULL))
);

CREATE UNIQUE INDEX replication_progress_apply_key
    ON ${pgetl_schema}.replication_progress (pipeline_id) WHERE worker_kind = 'apply';
CREATE UNIQUE INDEX replication_progress_table_sync_key
    ON ${pgetl_schema}.replication_progress (pipeline_id, table_id) WHERE worker_kind = 'table_sync';

COMMENT ON TABLE ${pgetl_schema}.replication_progress IS
    'pgetl: durable progress of the apply worker (table_id null) and of each table-sync worker';

-- Versions of each source table's schema, keyed by the LSN from which each applies.
CREATE TABLE ${pgetl_schema}.table_schemas (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pipeline_id  text        NOT NULL,
    table_id     oid         NOT NULL,
    schema_name  text        NOT NULL,
    table_name   text        NOT NULL,
    snapshot_lsn pg_lsn      NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT table_schemas_version_key UNIQUE (pipeline_id, table_id, snapshot_lsn)
);

CREATE TABLE ${pgetl_schema}.table_columns (
    table_schema_id     bigint  NOT NULL
        REFERENCES ${pgetl_schema}.table_schemas (id) ON DELETE CASCADE,
    column_index        integer NOT NULL CONSTRAINT table_columns_column_index_check
        CHECK (column_index >= 0),
    name                text    NOT NULL,
    type_oid            oid     NOT NULL,
    type_modifier       integer NOT NULL,
    type_name           text    NOT NULL,
    ordinal_position    integer NOT NULL,
    primary_key_ordinal integer NOT NULL DEFAULT 0
        CONSTRAINT table_columns_primary_key_ordinal_check CHECK (primary_key_ordinal >= 0),
    nullable            boolean NOT NULL,
    default_expression  text,
    PRIMARY KEY (table_schema_id, column_index)
);

COMMENT ON TABLE ${pgetl_schema}.table_schemas IS
    'pgetl: versions of each source table''s schema; snapshot_lsn is the LSN from which a version applies';
COMMENT ON COLUMN ${pgetl_schema}.table_columns.ordinal_position IS 'the column''s attnum';
COMMENT ON COLUMN ${pgetl_schema}.table_columns.column_index IS
    'position of the column in the stored version, from 0';

-- What the destination created for each source table.
CREATE TABLE ${pgetl_schema}.destination_tables_metadata (
    pipeline_id          text        NOT NULL,
    table_id             oid         NOT NULL,
    destination_table_id text        NOT NULL,
    snapshot_lsn         pg_lsn      NOT NULL,
    applied              boolean     NOT NULL,
    updated_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (pipeline_id, table_id)
);

COMMENT ON TABLE ${pgetl_schema}.destination_tables_metadata IS
    'pgetl: the destination''s table for each source table, and the schema version it applied';

-- The operator's intent for each destination of a pipeline, followed live by the pipeline.
-- No row means active. pgetl itself never writes 'retired': only an operator does, with SQL.
-- Adding a state needs a new migration that replaces this CHECK.
CREATE TABLE ${pgetl_schema}.destination_lifecycle (
    pipeline_id      text        NOT NULL,
    destination_name text        NOT NULL,
    state            text        NOT NULL
        CONSTRAINT destination_lifecycle_state_check
        CHECK (state IN ('active', 'paused', 'draining', 'retired')),
    reason           text,
    updated_by       text,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (pipeline_id, destination_name)
);

COMMENT ON TABLE ${pgetl_schema}.destination_lifecycle IS
    'pgetl: operator intent per destination (active, paused, draining, retired); no row means active';
