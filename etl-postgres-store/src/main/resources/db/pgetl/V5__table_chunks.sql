-- pgetl pipeline store, version 5: the chunks of a table copied in chunks.
--
-- ${pgetl_schema} is the store's schema, already quoted.

-- One row per chunk of a table's chunked copy, numbered from 0 within the copy attempt: a range of
-- the table's key, or one key to read again. planChunks replaces a table's rows; they go away when
-- the chunked copy finishes or the table is copied from scratch. A chunk is done once its rows are
-- durable at the destination: watermark_lsn and done_at are then set, null before.
CREATE TABLE ${pgetl_schema}.table_chunks (
    pipeline_id   text        NOT NULL,
    table_id      oid         NOT NULL,
    attempt_id    uuid        NOT NULL,
    chunk_index   integer     NOT NULL
        CONSTRAINT table_chunks_chunk_index_check CHECK (chunk_index >= 0),
    kind          text        NOT NULL
        CONSTRAINT table_chunks_kind_check CHECK (kind IN ('range', 'key')),
    lower_bound   text[],
    upper_bound   text[],
    reads         integer     NOT NULL DEFAULT 0
        CONSTRAINT table_chunks_reads_check CHECK (reads >= 0),
    watermark_lsn pg_lsn,
    rows_copied   bigint      NOT NULL DEFAULT 0
        CONSTRAINT table_chunks_rows_copied_check CHECK (rows_copied >= 0),
    bytes_copied  bigint      NOT NULL DEFAULT 0
        CONSTRAINT table_chunks_bytes_copied_check CHECK (bytes_copied >= 0),
    done_at       timestamptz,
    PRIMARY KEY (pipeline_id, table_id, chunk_index),
    CONSTRAINT table_chunks_done_check CHECK ((watermark_lsn IS NULL) = (done_at IS NULL))
);

COMMENT ON TABLE ${pgetl_schema}.table_chunks IS
    'pgetl: the chunks of each table copied in chunks (key ranges, and single keys read again), and which are done';
COMMENT ON COLUMN ${pgetl_schema}.table_chunks.lower_bound IS
    'the key columns'' values in PostgreSQL''s text form, inclusive; null when open';
COMMENT ON COLUMN ${pgetl_schema}.table_chunks.upper_bound IS
    'the key columns'' values in PostgreSQL''s text form, exclusive for a range (null when open), the key itself for a key chunk';
COMMENT ON COLUMN ${pgetl_schema}.table_chunks.reads IS
    'how many reads of the chunk were started, across restarts: each read numbers its batches apart';
COMMENT ON COLUMN ${pgetl_schema}.table_chunks.watermark_lsn IS
    'where the apply stream met the watermark of the read that made the chunk done; null while not done';
