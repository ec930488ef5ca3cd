-- pgetl pipeline store, version 3: operator requests for tables, and the last copy of each table.
--
-- ${pgetl_schema} is the store's schema, already quoted.

-- An operator's request for one table (copy it again, or retry it after an error). The running
-- pipeline reads the pending rows with its lifecycle poll, carries each out, then deletes it; a
-- pipeline that is not running does so at its next start.
CREATE TABLE ${pgetl_schema}.table_requests (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pipeline_id  text        NOT NULL,
    table_id     oid         NOT NULL,
    action       text        NOT NULL
        CONSTRAINT table_requests_action_check CHECK (action IN ('resync', 'retry')),
    requested_by text,
    requested_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX table_requests_pipeline_idx ON ${pgetl_schema}.table_requests (pipeline_id, id);

COMMENT ON TABLE ${pgetl_schema}.table_requests IS
    'pgetl: pending operator requests per table (resync: copy again; retry: retry an errored table)';

-- The last finished copy of each table: its attempt, rows, batches and end.
CREATE TABLE ${pgetl_schema}.table_copies (
    pipeline_id text        NOT NULL,
    table_id    oid         NOT NULL,
    attempt_id  uuid        NOT NULL,
    rows_copied bigint      NOT NULL,
    batches     bigint      NOT NULL,
    finished_at timestamptz NOT NULL,
    PRIMARY KEY (pipeline_id, table_id)
);

COMMENT ON TABLE ${pgetl_schema}.table_copies IS
    'pgetl: the last finished copy of each table of each pipeline';
