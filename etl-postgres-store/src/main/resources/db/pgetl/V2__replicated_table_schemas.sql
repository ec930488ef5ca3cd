-- pgetl pipeline store, version 2: a schema version keeps the replicated schema exactly as the
-- destination was told it, not only the table's columns: the replica identity (its kind and its
-- columns, in key order) and which columns are published (the publication's column list).
-- Released migrations are never edited: change the schema with a new V<n>__*.sql file.
--
-- Versions stored before this migration have identity_kind null; the store reads them as it did
-- before: every column published, identity the primary key (nothing without one).

ALTER TABLE ${pgetl_schema}.table_schemas
    ADD COLUMN identity_kind text
        CONSTRAINT table_schemas_identity_kind_check
        CHECK (identity_kind IN ('primary_key', 'index', 'full', 'nothing'));

ALTER TABLE ${pgetl_schema}.table_columns
    ADD COLUMN replicated boolean NOT NULL DEFAULT true,
    ADD COLUMN identity_ordinal integer NOT NULL DEFAULT 0
        CONSTRAINT table_columns_identity_ordinal_check CHECK (identity_ordinal >= 0);

COMMENT ON COLUMN ${pgetl_schema}.table_schemas.identity_kind IS
    'the replica identity the destination was told (primary_key, index, full, nothing); null for a version stored before store version 2, read as the primary key';
COMMENT ON COLUMN ${pgetl_schema}.table_columns.replicated IS
    'whether the column is published (false when the publication''s column list leaves it out)';
COMMENT ON COLUMN ${pgetl_schema}.table_columns.identity_ordinal IS
    '1-based position of the column in the replica identity (primary key or identity index), 0 when not part of it';
