-- pgetl pipeline store, version 4: the lease that lets one instance of a pipeline run at a time.
--
-- ${pgetl_schema} is the store's schema, already quoted.

-- One row per pipeline. The lease itself is a session advisory lock keyed by the row's id (so two
-- pipelines never share a key); the row keeps the epoch, incremented by every acquisition (the
-- fencing token destinations see), and who acquired it when.
CREATE TABLE ${pgetl_schema}.pipeline_leases (
    id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    pipeline_id text        NOT NULL UNIQUE,
    epoch       bigint      NOT NULL DEFAULT 0,
    holder      text,
    holder_pid  integer,
    acquired_at timestamptz,
    -- false while held; true once its holder released it (a clean stop): a takeover after a lease
    -- that was lost instead waits its takeover delay
    released    boolean     NOT NULL DEFAULT true
);

COMMENT ON TABLE ${pgetl_schema}.pipeline_leases IS
    'pgetl: per pipeline, the epoch of its lease (a session advisory lock on the row id) and its last holder';
