package org.pgetl.kafka.connect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.TableCopySelection;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;
import org.pgetl.store.postgres.PostgresStore;

/**
 * The connector's settings: every key, its type, default and documentation, and how they become a
 * {@link PipelineConfig} and a {@link PostgresStore} per publication.
 *
 * <p>Keys are checked twice: by type here ({@link #CONFIG_DEF}), then by building each pipeline's
 * {@code PipelineConfig} and {@code PgConnectionConfig}, whose messages ({@code batch.maxBytes must
 * be > 0, was 0}) are reported on the key they come from. Passwords are {@link Password}s: Connect
 * shows them as {@code [hidden]} and they never appear in {@link #toString()}.
 */
public final class PgetlConnectorConfig extends AbstractConfig {
  /** The source database URL: {@code jdbc:postgresql://host:port/db?...} or libpq form. */
  public static final String CONNECTION_URL = "connection.url";

  /** The role to log in as; overrides the URL's {@code user}. */
  public static final String CONNECTION_USER = "connection.user";

  /** The role's password; overrides the URL's. */
  public static final String CONNECTION_PASSWORD = "connection.password";

  /** The publications to replicate, one pipeline (and one task) each. */
  public static final String PUBLICATIONS = "publications";

  /** The pipeline id, or with several publications the prefix of each pipeline's id. */
  public static final String PIPELINE_ID = "pipeline.id";

  /** The state store's database URL; the source database when empty. */
  public static final String STORE_URL = "store.url";

  /** The state store's role; overrides the store URL's user. */
  public static final String STORE_USER = "store.user";

  /** The state store role's password. */
  public static final String STORE_PASSWORD = "store.password";

  /** The state store's schema. */
  public static final String STORE_SCHEMA = "store.schema";

  /** The {@code ${prefix}} of topic names; the pipeline id when empty. */
  public static final String TOPIC_PREFIX = "topic.prefix";

  /** The topic of each table. */
  public static final String TOPIC_PATTERN = "topic.pattern";

  /** Whether a delete is followed by a tombstone (same key, null value). */
  public static final String TOMBSTONES_ON_DELETE = "tombstones.on.delete";

  /** Whether TRUNCATE produces records ({@code include}) or not ({@code skip}). */
  public static final String TRUNCATE_HANDLING = "truncate.handling";

  /** How {@code numeric} values are written: {@code precise}, {@code string} or {@code double}. */
  public static final String DECIMAL_HANDLING_MODE = "decimal.handling.mode";

  /** How arrays are written: {@code array} or {@code string}. */
  public static final String ARRAY_HANDLING_MODE = "array.handling.mode";

  /**
   * Whether each change's envelope carries Debezium's {@code transaction} block (id, total order,
   * order among the transaction's changes of its table).
   */
  public static final String PROVIDE_TRANSACTION_METADATA = "provide.transaction.metadata";

  /**
   * The value written in place of a TOAST value an update left unchanged (text, bytes and text
   * array columns); empty: the field is null, and {@code unchanged_toast} names it either way.
   */
  public static final String UNAVAILABLE_VALUE_PLACEHOLDER = "unavailable.value.placeholder";

  /** Which tables get an initial copy: {@code all}, {@code none}, {@code only}, {@code except}. */
  public static final String COPY_MODE = "copy.mode";

  /** The tables of {@code copy.mode=only} or {@code except}. */
  public static final String COPY_TABLES = "copy.tables";

  /**
   * {@code PipelineConfig.failoverSlots}: {@code auto} (a failover slot on PostgreSQL 17+), {@code
   * on} or {@code off}.
   */
  public static final String FAILOVER_SLOTS = "failover.slots";

  /**
   * {@code PipelineConfig.invalidatedSlotBehavior}: {@code fail} or {@code recopy} when the apply
   * slot is missing or invalidated.
   */
  public static final String ON_MISSING_SLOT = "on.missing.slot";

  /** {@code PipelineConfig.batchMaxBytes}. */
  public static final String BATCH_MAX_BYTES = "batch.max.bytes";

  /** {@code PipelineConfig.batchMaxFill}, in milliseconds. */
  public static final String BATCH_MAX_FILL_MS = "batch.max.fill.ms";

  /** {@code PipelineConfig.maxInFlightWrites}. */
  public static final String MAX_IN_FLIGHT_WRITES = "max.in.flight.writes";

  /** {@code PipelineConfig.maxTableSyncWorkers}. */
  public static final String MAX_TABLE_SYNC_WORKERS = "max.table.sync.workers";

  /** {@code PipelineConfig.copyConnectionsPerTable}. */
  public static final String COPY_CONNECTIONS_PER_TABLE = "copy.connections.per.table";

  /** {@code PipelineConfig.chunkedCopyMinBytes}. */
  public static final String COPY_CHUNKED_MIN_BYTES = "copy.chunked.min.bytes";

  /** {@code PipelineConfig.copyChunkBytes}. */
  public static final String COPY_CHUNK_BYTES = "copy.chunk.bytes";

  /** {@code PipelineConfig.pgoutputBinary}. */
  public static final String PGOUTPUT_BINARY = "pgoutput.binary";

  /** {@code PipelineConfig.pgoutputStreaming}. */
  public static final String PGOUTPUT_STREAMING = "pgoutput.streaming";

  /** {@code PipelineConfig.statusInterval}, in milliseconds. */
  public static final String STATUS_INTERVAL_MS = "status.interval.ms";

  /** {@code PipelineConfig.shutdownTimeout}, in milliseconds. */
  public static final String SHUTDOWN_TIMEOUT_MS = "shutdown.timeout.ms";

  /** {@code PipelineConfig.retryDelay}, in milliseconds. */
  public static final String RETRY_DELAY_MS = "retry.delay.ms";

  /** {@code PipelineConfig.retryMaxDelay}, in milliseconds. */
  public static final String RETRY_MAX_DELAY_MS = "retry.max.delay.ms";

  /** {@code PipelineConfig.retryMaxAttempts}. */
  public static final String RETRY_MAX_ATTEMPTS = "retry.max.attempts";

  /** {@code PipelineConfig.leaseCheckInterval}, in milliseconds. */
  public static final String LEASE_CHECK_INTERVAL_MS = "lease.check.interval.ms";

  /** {@code PipelineConfig.takeoverDelay}, in milliseconds. */
  public static final String TAKEOVER_DELAY_MS = "takeover.delay.ms";

  /** {@code PipelineConfig.lifecyclePollInterval}, in milliseconds. */
  public static final String LIFECYCLE_POLL_INTERVAL_MS = "lifecycle.poll.interval.ms";

  /** The most records one {@code poll()} returns. */
  public static final String POLL_MAX_RECORDS = "poll.max.records";

  /** How long one {@code poll()} waits for records. */
  public static final String POLL_TIMEOUT_MS = "poll.timeout.ms";

  /**
   * With exactly-once and {@code transaction.boundary=connector}: the least time between two
   * producer transaction commits the task requests, in milliseconds; 0 commits after every poll.
   */
  public static final String EXACTLY_ONCE_COMMIT_INTERVAL_MS = "exactly.once.commit.interval.ms";

  /**
   * How records reach the worker: {@code connect} (Connect structs, serialized by the worker's
   * converters), {@code json} or {@code json-schemas} (the bytes Connect's {@code JsonConverter}
   * writes without or with inline schemas, made on pgetl's copy and stream threads; the connector's
   * {@code key.converter} and {@code value.converter} must then be {@code ByteArrayConverter}).
   */
  public static final String RECORD_ENCODING = "record.encoding";

  /**
   * The prefix of further {@code JsonConverter} settings for {@code record.encoding} {@code json}
   * and {@code json-schemas}, such as {@code record.json.decimal.format=NUMERIC}.
   */
  public static final String RECORD_JSON_PREFIX = "record.json.";

  /** Internal: the publication of one task. */
  static final String TASK_PUBLICATION = "pgetl.task.publication";

  /** Internal: the pipeline id of one task. */
  static final String TASK_PIPELINE_ID = "pgetl.task.pipeline.id";

  /**
   * 4 s: below Connect's {@code task.shutdown.graceful.timeout.ms} (5 s), so a stopping task
   * finishes within the time its worker waits for it.
   */
  public static final long DEFAULT_SHUTDOWN_TIMEOUT_MS = 4_000;

  /** 10,000 records: several batches per poll, well under the producer's buffer. */
  public static final int DEFAULT_POLL_MAX_RECORDS = 10_000;

  /** 500 ms: a stopping worker waits no longer than this for the poll loop to notice. */
  public static final long DEFAULT_POLL_TIMEOUT_MS = 500;

  /**
   * 100 ms: a commit flushes the producer and blocks the task thread, so fewer commits leave more
   * of it to the converter, while a {@code read_committed} consumer waits at most this much longer.
   */
  public static final long DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS = 100;

  /** The topic pattern of Debezium's connector: {@code <prefix>.<schema>.<table>}. */
  public static final String DEFAULT_TOPIC_PATTERN = "${prefix}.${schema}.${table}";

  private static final String GROUP_CONNECTION = "Connection";
  private static final String GROUP_PIPELINE = "Pipeline";
  private static final String GROUP_STORE = "State store";
  private static final String GROUP_RECORDS = "Records";
  private static final String GROUP_TUNING = "Tuning";

  /** Every key of the connector, with its type, default and documentation. */
  public static final ConfigDef CONFIG_DEF = define();

  private static ConfigDef define() {
    ConfigDef d = new ConfigDef();
    int o = 0;
    d.define(
        CONNECTION_URL,
        ConfigDef.Type.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        new ConfigDef.NonEmptyString(),
        Importance.HIGH,
        "The source database: jdbc:postgresql://host:port/database?sslmode=... or"
            + " postgresql://user@host:port/database?... . A password in the URL is accepted, but"
            + " connection.password keeps it out of the URL.",
        GROUP_CONNECTION,
        ++o,
        Width.LONG,
        "Source URL");
    d.define(
        CONNECTION_USER,
        ConfigDef.Type.STRING,
        null,
        Importance.HIGH,
        "The role to log in as (it needs REPLICATION and SELECT on the published tables);"
            + " overrides the URL's user.",
        GROUP_CONNECTION,
        ++o,
        Width.MEDIUM,
        "User");
    d.define(
        CONNECTION_PASSWORD,
        ConfigDef.Type.PASSWORD,
        null,
        Importance.HIGH,
        "The role's password; overrides the URL's. Use a config provider (${file:...}) to keep it"
            + " out of the connector's stored configuration.",
        GROUP_CONNECTION,
        ++o,
        Width.MEDIUM,
        "Password");
    o = 0;
    d.define(
        PUBLICATIONS,
        ConfigDef.Type.LIST,
        ConfigDef.NO_DEFAULT_VALUE,
        Importance.HIGH,
        "The publications to replicate. Each is one pipeline, run by one task: tasks.max must be"
            + " at least their number. Publications should not share tables (a shared table is"
            + " written by both pipelines).",
        GROUP_PIPELINE,
        ++o,
        Width.LONG,
        "Publications");
    d.define(
        PIPELINE_ID,
        ConfigDef.Type.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        Importance.HIGH,
        "The pipeline id (1-40 characters of [a-z0-9_]); it names the replication slots and scopes"
            + " the stored state. With several publications, pipeline <id>_<publication> runs each"
            + " one. Changing it starts over with a new copy.",
        GROUP_PIPELINE,
        ++o,
        Width.MEDIUM,
        "Pipeline id");
    d.define(
        COPY_MODE,
        ConfigDef.Type.STRING,
        "all",
        ConfigDef.ValidString.in("all", "none", "only", "except"),
        Importance.MEDIUM,
        "Which tables get an initial copy: all, none (changes from now on only), only or except"
            + " the tables of copy.tables.",
        GROUP_PIPELINE,
        ++o,
        Width.SHORT,
        "Copy mode");
    d.define(
        COPY_TABLES,
        ConfigDef.Type.LIST,
        "",
        Importance.MEDIUM,
        "Tables for copy.mode=only or except, as schema.table (SQL quoting allowed).",
        GROUP_PIPELINE,
        ++o,
        Width.LONG,
        "Copy tables");
    d.define(
        FAILOVER_SLOTS,
        ConfigDef.Type.STRING,
        "auto",
        ConfigDef.ValidString.in("auto", "on", "off"),
        Importance.MEDIUM,
        "Whether the apply slot is a failover slot, which a physical standby with"
            + " sync_replication_slots = on keeps, so that the connector resumes from it after the"
            + " standby's promotion: auto (on for PostgreSQL 17+, off before), on (fails on a"
            + " server before 17) or off. With synchronized_standby_slots set, changes reach Kafka"
            + " only once the standbys listed there have them.",
        GROUP_PIPELINE,
        ++o,
        Width.SHORT,
        "Failover slots");
    d.define(
        ON_MISSING_SLOT,
        ConfigDef.Type.STRING,
        "fail",
        ConfigDef.ValidString.in("fail", "recopy"),
        Importance.MEDIUM,
        "What the task does when the apply slot is missing (lost in a failover to a standby"
            + " without its copy, dropped by hand) or invalidated: fail (an operator decides) or"
            + " recopy (create a new slot and copy every table again; the topics receive every row"
            + " again).",
        GROUP_PIPELINE,
        ++o,
        Width.SHORT,
        "On missing slot");
    o = 0;
    d.define(
        STORE_URL,
        ConfigDef.Type.STRING,
        null,
        Importance.MEDIUM,
        "Where pgetl keeps table states and progress: a jdbc:postgresql:// URL; empty means the"
            + " source database (needs CREATE on it). Use another database when the source is a"
            + " read-only standby.",
        GROUP_STORE,
        ++o,
        Width.LONG,
        "Store URL");
    d.define(
        STORE_USER,
        ConfigDef.Type.STRING,
        null,
        Importance.LOW,
        "The store's role; overrides the store URL's user.",
        GROUP_STORE,
        ++o,
        Width.MEDIUM,
        "Store user");
    d.define(
        STORE_PASSWORD,
        ConfigDef.Type.PASSWORD,
        null,
        Importance.LOW,
        "The store role's password.",
        GROUP_STORE,
        ++o,
        Width.MEDIUM,
        "Store password");
    d.define(
        STORE_SCHEMA,
        ConfigDef.Type.STRING,
        "etl",
        Importance.LOW,
        "The schema of the store's tables, created when missing.",
        GROUP_STORE,
        ++o,
        Width.SHORT,
        "Store schema");
    o = 0;
    d.define(
        TOPIC_PREFIX,
        ConfigDef.Type.STRING,
        null,
        Importance.HIGH,
        "The ${prefix} of topic.pattern; the pipeline.id when empty.",
        GROUP_RECORDS,
        ++o,
        Width.MEDIUM,
        "Topic prefix");
    d.define(
        TOPIC_PATTERN,
        ConfigDef.Type.STRING,
        DEFAULT_TOPIC_PATTERN,
        new ConfigDef.NonEmptyString(),
        Importance.MEDIUM,
        "The topic of each table, with ${prefix}, ${pipeline}, ${publication}, ${schema} and"
            + " ${table}. Characters a topic name cannot hold become _.",
        GROUP_RECORDS,
        ++o,
        Width.LONG,
        "Topic pattern");
    d.define(
        TOMBSTONES_ON_DELETE,
        ConfigDef.Type.BOOLEAN,
        true,
        Importance.MEDIUM,
        "Follow each delete with a tombstone (the key and a null value), so that log compaction"
            + " removes the row's records.",
        GROUP_RECORDS,
        ++o,
        Width.SHORT,
        "Tombstones");
    d.define(
        TRUNCATE_HANDLING,
        ConfigDef.Type.STRING,
        "skip",
        ConfigDef.ValidString.in("skip", "include"),
        Importance.LOW,
        "include: a TRUNCATE writes one record with op t and a null key to each table's topic;"
            + " skip: it writes nothing. Compacted topics reject null keys: keep skip for them.",
        GROUP_RECORDS,
        ++o,
        Width.SHORT,
        "Truncates");
    d.define(
        PROVIDE_TRANSACTION_METADATA,
        ConfigDef.Type.BOOLEAN,
        false,
        Importance.LOW,
        "Give each change's envelope Debezium's transaction block: id (<xid>:<commit LSN>),"
            + " total_order and data_collection_order (positions from 1 in the transaction, and"
            + " among its changes of the table). No transaction topic is written.",
        GROUP_RECORDS,
        ++o,
        Width.SHORT,
        "Transaction metadata");
    d.define(
        UNAVAILABLE_VALUE_PLACEHOLDER,
        ConfigDef.Type.STRING,
        "",
        Importance.LOW,
        "What an update's after holds for a TOAST value PostgreSQL did not send because it did not"
            + " change (text, json, bytes and text array columns; other types stay null). Empty (the"
            + " default): null. __debezium_unavailable_value gives Debezium's records. The"
            + " envelope's unchanged_toast field names those columns either way.",
        GROUP_RECORDS,
        ++o,
        Width.MEDIUM,
        "Unavailable value placeholder");
    d.define(
        DECIMAL_HANDLING_MODE,
        ConfigDef.Type.STRING,
        "precise",
        ConfigDef.ValidString.in("precise", "string", "double"),
        Importance.MEDIUM,
        "numeric values: precise (Connect Decimal with the column's scale; a variable-scale struct"
            + " for numeric without one; NaN and Infinity fail), string (the exact text, NaN and"
            + " Infinity included) or double (approximate).",
        GROUP_RECORDS,
        ++o,
        Width.SHORT,
        "Decimals");
    d.define(
        ARRAY_HANDLING_MODE,
        ConfigDef.Type.STRING,
        "array",
        ConfigDef.ValidString.in("array", "string"),
        Importance.LOW,
        "Arrays: array (a Connect array of the element type; a value with several dimensions or"
            + " other lower bounds fails) or string (PostgreSQL's text form, any shape).",
        GROUP_RECORDS,
        ++o,
        Width.SHORT,
        "Arrays");
    d.define(
        RECORD_ENCODING,
        ConfigDef.Type.STRING,
        "connect",
        ConfigDef.ValidString.in("connect", "json", "json-schemas"),
        Importance.MEDIUM,
        "connect: records of Connect structs, which the worker's converters serialize on the"
            + " task's one thread. json or json-schemas: pgetl serializes each record to the bytes"
            + " Connect's JsonConverter writes (schemas.enable false or true) on its copy and"
            + " stream threads, in parallel; set key.converter and value.converter of this"
            + " connector to "
            + JsonRecordEncoder.BYTE_ARRAY_CONVERTER
            + ". Single message transforms then see bytes, not structs. Further JsonConverter"
            + " settings take the prefix record.json. (record.json.decimal.format=NUMERIC).",
        GROUP_RECORDS,
        ++o,
        Width.SHORT,
        "Record encoding");
    o = 0;
    d.define(
        BATCH_MAX_BYTES,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_BATCH_MAX_BYTES,
        Importance.LOW,
        "The most bytes (estimated) one batch of copied rows or events holds.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Batch bytes");
    d.define(
        BATCH_MAX_FILL_MS,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_BATCH_MAX_FILL.toMillis(),
        Importance.LOW,
        "The longest a partly filled batch waits for more data while data keeps coming.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Batch fill");
    d.define(
        MAX_IN_FLIGHT_WRITES,
        ConfigDef.Type.INT,
        PipelineConfig.DEFAULT_MAX_IN_FLIGHT_WRITES,
        Importance.LOW,
        "How many batches of one stream may wait for Kafka's acknowledgement at once; reading"
            + " from PostgreSQL pauses when the limit is reached.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Writes in flight");
    d.define(
        MAX_TABLE_SYNC_WORKERS,
        ConfigDef.Type.INT,
        PipelineConfig.DEFAULT_MAX_TABLE_SYNC_WORKERS,
        Importance.LOW,
        "How many tables are copied at once; each holds a replication slot while it syncs.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Tables copied at once");
    d.define(
        COPY_CONNECTIONS_PER_TABLE,
        ConfigDef.Type.INT,
        PipelineConfig.DEFAULT_COPY_CONNECTIONS_PER_TABLE,
        Importance.LOW,
        "How many connections copy one table in parallel (ctid ranges of one snapshot).",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Copy connections");
    d.define(
        COPY_CHUNKED_MIN_BYTES,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_CHUNKED_COPY_MIN_BYTES,
        ConfigDef.Range.atLeast(0),
        Importance.LOW,
        "Tables of at least this size (pg_table_size) are copied in chunks of their key while"
            + " their changes stream: a copy that resumes at its last committed chunk after a"
            + " restart, with no snapshot held longer than one chunk. 0 copies every table with a"
            + " key so; 9223372036854775807 none.",
        GROUP_TUNING,
        ++o,
        Width.MEDIUM,
        "Chunked copy from (bytes)");
    d.define(
        COPY_CHUNK_BYTES,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_COPY_CHUNK_BYTES,
        ConfigDef.Range.atLeast(1),
        Importance.LOW,
        "About how many bytes of a table one chunk of a chunked copy holds.",
        GROUP_TUNING,
        ++o,
        Width.MEDIUM,
        "Chunk size (bytes)");
    d.define(
        PGOUTPUT_BINARY,
        ConfigDef.Type.BOOLEAN,
        false,
        Importance.LOW,
        "Ask pgoutput for binary values (PostgreSQL 14+).",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "pgoutput binary");
    d.define(
        PGOUTPUT_STREAMING,
        ConfigDef.Type.BOOLEAN,
        PipelineConfig.DEFAULT_PGOUTPUT_STREAMING,
        Importance.LOW,
        "Ask pgoutput to stream large transactions while they run (PostgreSQL 14+); they wait for"
            + " their commit in a spool on the worker's local disk. False: the server holds a"
            + " large transaction until its commit (protocol 1).",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "pgoutput streaming");
    d.define(
        STATUS_INTERVAL_MS,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_STATUS_INTERVAL.toMillis(),
        Importance.LOW,
        "The longest time between two status updates to the server.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Status interval");
    d.define(
        SHUTDOWN_TIMEOUT_MS,
        ConfigDef.Type.LONG,
        DEFAULT_SHUTDOWN_TIMEOUT_MS,
        Importance.LOW,
        "How long a stopping task waits for Kafka's acknowledgements of records already sent;"
            + " what is not acknowledged by then is sent again by the next task.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Shutdown timeout");
    d.define(
        RETRY_DELAY_MS,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_RETRY_DELAY.toMillis(),
        Importance.LOW,
        "The delay before the first timed retry of a failed table or stream.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Retry delay");
    d.define(
        RETRY_MAX_DELAY_MS,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_RETRY_MAX_DELAY.toMillis(),
        Importance.LOW,
        "The longest delay between two timed retries.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Retry max delay");
    d.define(
        RETRY_MAX_ATTEMPTS,
        ConfigDef.Type.INT,
        PipelineConfig.DEFAULT_RETRY_MAX_ATTEMPTS,
        Importance.LOW,
        "Timed retries before a failure needs an operator.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Retry attempts");
    d.define(
        LEASE_CHECK_INTERVAL_MS,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_LEASE_CHECK_INTERVAL.toMillis(),
        Importance.LOW,
        "How often the running task confirms its pipeline's lease, and how often a task waiting"
            + " for it (during a rebalance) tries to take it.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Lease check");
    d.define(
        TAKEOVER_DELAY_MS,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_TAKEOVER_DELAY.toMillis(),
        Importance.LOW,
        "How long a task that took a lease its holder did not release waits before it acts;"
            + " more than twice lease.check.interval.ms.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Takeover delay");
    d.define(
        LIFECYCLE_POLL_INTERVAL_MS,
        ConfigDef.Type.LONG,
        PipelineConfig.DEFAULT_LIFECYCLE_POLL_INTERVAL.toMillis(),
        Importance.LOW,
        "How often the operator's lifecycle row and table requests are read.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Lifecycle poll");
    d.define(
        POLL_MAX_RECORDS,
        ConfigDef.Type.INT,
        DEFAULT_POLL_MAX_RECORDS,
        ConfigDef.Range.atLeast(1),
        Importance.LOW,
        "The most records one poll() hands to Connect (whole batches; at least one).",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Poll records");
    d.define(
        POLL_TIMEOUT_MS,
        ConfigDef.Type.LONG,
        DEFAULT_POLL_TIMEOUT_MS,
        ConfigDef.Range.between(1, 60_000),
        Importance.LOW,
        "How long one poll() waits for records before it returns none.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Poll timeout");
    d.define(
        EXACTLY_ONCE_COMMIT_INTERVAL_MS,
        ConfigDef.Type.LONG,
        DEFAULT_EXACTLY_ONCE_COMMIT_INTERVAL_MS,
        ConfigDef.Range.between(0, 60_000),
        Importance.LOW,
        "With exactly-once and transaction.boundary=connector: the least time between two"
            + " transaction commits (0: after every poll). Never while a table's copy is partly"
            + " sent; the slot is confirmed only over committed records.",
        GROUP_TUNING,
        ++o,
        Width.SHORT,
        "Exactly-once commit interval");
    return d;
  }

  /** One publication's pipeline. */
  record PipelineSpec(String pipelineId, String publication) {}

  /**
   * Parses and type-checks connector properties.
   *
   * @param props the connector's (or a task's) properties
   * @throws ConfigException when a key has a wrong type or a required key is missing
   */
  public PgetlConnectorConfig(Map<String, String> props) {
    super(CONFIG_DEF, props, false);
  }

  /** The pipelines of the configured publications, in order. */
  List<PipelineSpec> pipelines() {
    List<String> pubs = getList(PUBLICATIONS);
    String base = getString(PIPELINE_ID);
    List<PipelineSpec> out = new ArrayList<>();
    for (String p : pubs) {
      String pub = p.trim();
      out.add(new PipelineSpec(pubs.size() == 1 ? base : base + "_" + pub, pub));
    }
    return out;
  }

  /** The source connection, with the user and password keys applied over the URL. */
  PgConnectionConfig source() {
    String url = getString(CONNECTION_URL);
    String user = getString(CONNECTION_USER);
    if (user != null && !user.isBlank()) {
      url = withParameter(url, "user", user);
    }
    Password password = getPassword(CONNECTION_PASSWORD);
    if (password != null && password.value() != null && !password.value().isEmpty()) {
      url = withParameter(url, "password", password.value());
    }
    return PgConnectionConfig.fromJdbcUrl(url);
  }

  /**
   * Appends a query parameter to a URL, percent-encoded; a later parameter wins over the URL's own
   * (and over its user info), so the keys override the URL.
   */
  static String withParameter(String url, String key, String value) {
    StringBuilder sb = new StringBuilder(url);
    sb.append(url.indexOf('?') >= 0 ? '&' : '?').append(key).append('=');
    for (byte b : value.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      boolean unreserved =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '-'
              || c == '.'
              || c == '_'
              || c == '~';
      if (unreserved) {
        sb.append((char) c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        sb.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return sb.toString();
  }

  /** The pipeline configuration of one publication. */
  PipelineConfig pipelineConfig(PipelineSpec spec, PgConnectionConfig source) {
    return PipelineConfig.builder()
        .pipelineId(spec.pipelineId())
        .publication(spec.publication())
        .source(source)
        .batchMaxBytes(getLong(BATCH_MAX_BYTES))
        .batchMaxFill(Duration.ofMillis(getLong(BATCH_MAX_FILL_MS)))
        .maxInFlightWrites(getInt(MAX_IN_FLIGHT_WRITES))
        .maxTableSyncWorkers(getInt(MAX_TABLE_SYNC_WORKERS))
        .copyConnectionsPerTable(getInt(COPY_CONNECTIONS_PER_TABLE))
        .chunkedCopyMinBytes(getLong(COPY_CHUNKED_MIN_BYTES))
        .copyChunkBytes(getLong(COPY_CHUNK_BYTES))
        .pgoutputBinary(getBoolean(PGOUTPUT_BINARY))
        .pgoutputStreaming(getBoolean(PGOUTPUT_STREAMING))
        .statusInterval(Duration.ofMillis(getLong(STATUS_INTERVAL_MS)))
        .shutdownTimeout(Duration.ofMillis(getLong(SHUTDOWN_TIMEOUT_MS)))
        .retryDelay(Duration.ofMillis(getLong(RETRY_DELAY_MS)))
        .retryMaxDelay(Duration.ofMillis(getLong(RETRY_MAX_DELAY_MS)))
        .retryMaxAttempts(getInt(RETRY_MAX_ATTEMPTS))
        .leaseCheckInterval(Duration.ofMillis(getLong(LEASE_CHECK_INTERVAL_MS)))
        .takeoverDelay(Duration.ofMillis(getLong(TAKEOVER_DELAY_MS)))
        .lifecyclePollInterval(Duration.ofMillis(getLong(LIFECYCLE_POLL_INTERVAL_MS)))
        // a task that starts while the previous owner of its pipeline still stops (a rebalance)
        // waits for the lease instead of failing
        .instanceMode(PipelineConfig.InstanceMode.STANDBY)
        .tableCopy(tableCopy())
        .failoverSlots(
            PipelineConfig.FailoverSlots.valueOf(
                getString(FAILOVER_SLOTS).toUpperCase(Locale.ROOT)))
        .invalidatedSlotBehavior(
            "recopy".equalsIgnoreCase(getString(ON_MISSING_SLOT))
                ? PipelineConfig.InvalidatedSlotBehavior.RECREATE
                : PipelineConfig.InvalidatedSlotBehavior.FAIL)
        .build();
  }

  private TableCopySelection tableCopy() {
    String mode = getString(COPY_MODE).toLowerCase(Locale.ROOT);
    List<TableName> tables = new ArrayList<>();
    for (String t : getList(COPY_TABLES)) {
      try {
        tables.add(TableName.parse(t.trim()));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(COPY_TABLES, t, e.getMessage());
      }
    }
    return switch (mode) {
      case "none" -> TableCopySelection.none();
      case "only" -> TableCopySelection.only(tables);
      case "except" -> TableCopySelection.except(tables);
      default -> TableCopySelection.all();
    };
  }

  /** The state store of one pipeline; the caller closes it. */
  PostgresStore openStore(String pipelineId, PgConnectionConfig source) {
    PostgresStore.Builder b = PostgresStore.builder().pipelineId(pipelineId);
    String url = getString(STORE_URL);
    if (url == null || url.isBlank()) {
      b.connection(source);
    } else {
      b.jdbcUrl(url);
      String user = getString(STORE_USER);
      if (user != null && !user.isBlank()) {
        b.user(user);
      }
      Password password = getPassword(STORE_PASSWORD);
      if (password != null && password.value() != null && !password.value().isEmpty()) {
        b.password(password.value());
      }
    }
    return b.schema(getString(STORE_SCHEMA)).build();
  }

  /** The record settings of one pipeline. */
  RecordMapper.Settings recordSettings(PipelineSpec spec, PgConnectionConfig source) {
    String prefix = getString(TOPIC_PREFIX);
    if (prefix == null || prefix.isBlank()) {
      prefix = getString(PIPELINE_ID);
    }
    return new RecordMapper.Settings(
        Version.get(),
        spec.pipelineId(),
        source.database(),
        new TopicNamer(getString(TOPIC_PATTERN), prefix, spec.pipelineId(), spec.publication()),
        getBoolean(TOMBSTONES_ON_DELETE),
        "include".equalsIgnoreCase(getString(TRUNCATE_HANDLING)),
        ColumnMapping.DecimalMode.valueOf(
            getString(DECIMAL_HANDLING_MODE).toUpperCase(Locale.ROOT)),
        ColumnMapping.ArrayMode.valueOf(getString(ARRAY_HANDLING_MODE).toUpperCase(Locale.ROOT)),
        getBoolean(PROVIDE_TRANSACTION_METADATA),
        getString(UNAVAILABLE_VALUE_PLACEHOLDER),
        new CopySlotPositions(source, spec.pipelineId()));
  }

  /**
   * The serializer of {@code record.encoding} {@code json} or {@code json-schemas}, or null for
   * Connect structs.
   */
  @Nullable JsonRecordEncoder recordEncoder() {
    JsonRecordEncoder.Encoding e = JsonRecordEncoder.Encoding.parse(getString(RECORD_ENCODING));
    if (e == JsonRecordEncoder.Encoding.CONNECT) {
      return null;
    }
    return new JsonRecordEncoder(
        e == JsonRecordEncoder.Encoding.JSON_SCHEMAS, originalsWithPrefix(RECORD_JSON_PREFIX));
  }

  /**
   * The error of a serializing {@code record.encoding} whose converters are not the pass-through
   * one, or null.
   */
  @Nullable String recordEncodingError() {
    if (JsonRecordEncoder.Encoding.parse(getString(RECORD_ENCODING))
        == JsonRecordEncoder.Encoding.CONNECT) {
      return null;
    }
    List<String> wrong = new ArrayList<>();
    for (String key : List.of("key.converter", "value.converter")) {
      Object v = originals().get(key);
      String name = v instanceof Class<?> c ? c.getName() : String.valueOf(v).trim();
      if (!JsonRecordEncoder.BYTE_ARRAY_CONVERTER.equals(name)) {
        wrong.add(key + " is " + (v == null ? "not set (the worker's)" : name));
      }
    }
    if (wrong.isEmpty()) {
      return null;
    }
    return RECORD_ENCODING
        + "="
        + getString(RECORD_ENCODING)
        + " sends records already serialized, so this connector's key.converter and"
        + " value.converter must be "
        + JsonRecordEncoder.BYTE_ARRAY_CONVERTER
        + ": "
        + String.join(", ", wrong)
        + ". Set both in the connector's configuration, or use record.encoding=connect.";
  }

  int pollMaxRecords() {
    return getInt(POLL_MAX_RECORDS);
  }

  Duration pollTimeout() {
    return Duration.ofMillis(getLong(POLL_TIMEOUT_MS));
  }

  Duration exactlyOnceCommitInterval() {
    return Duration.ofMillis(getLong(EXACTLY_ONCE_COMMIT_INTERVAL_MS));
  }

  Duration shutdownTimeout() {
    return Duration.ofMillis(getLong(SHUTDOWN_TIMEOUT_MS));
  }

  /**
   * Checks every setting beyond its type, as the pipelines will: each publication's {@code
   * PipelineConfig} and the connection settings. Returns the errors by key, each with the message
   * {@code PipelineConfig} or {@code PgConnectionConfig} gives.
   *
   * @param maxTasks the connector's {@code tasks.max}, or 0 when not known
   */
  Map<String, List<String>> check(int maxTasks) {
    Map<String, List<String>> errors = new LinkedHashMap<>();
    List<PipelineSpec> specs = pipelines();
    if (specs.isEmpty() || specs.stream().anyMatch(s -> s.publication().isEmpty())) {
      add(errors, PUBLICATIONS, "publications must name at least one publication");
      return errors;
    }
    if (maxTasks > 0 && maxTasks < specs.size()) {
      add(
          errors,
          "tasks.max",
          "tasks.max must be >= the number of publications ("
              + specs.size()
              + "): one task runs one pipeline, was "
              + maxTasks);
    }
    String encoding = recordEncodingError();
    if (encoding != null) {
      add(errors, RECORD_ENCODING, encoding);
    }
    try {
      recordEncoder();
    } catch (RuntimeException e) {
      add(errors, RECORD_ENCODING, "the record.json. settings: " + e.getMessage());
    }
    PgConnectionConfig source;
    try {
      source = source();
    } catch (EtlException e) {
      add(errors, connectionKey(e.description()), e.description());
      return errors;
    }
    for (PipelineSpec spec : specs) {
      try {
        pipelineConfig(spec, source);
      } catch (EtlException e) {
        add(errors, keyOf(e.description()), e.description());
      } catch (ConfigException e) {
        add(errors, COPY_TABLES, e.getMessage());
      }
    }
    return errors;
  }

  private static String connectionKey(String message) {
    if (message.startsWith("source.user")) {
      return CONNECTION_USER;
    }
    if (message.startsWith("source.password")) {
      return CONNECTION_PASSWORD;
    }
    return CONNECTION_URL;
  }

  /** The key a {@code PipelineConfig} message is about: its message starts with the field. */
  static String keyOf(String message) {
    String[][] fields = {
      {"pipelineId", PIPELINE_ID},
      {"publication", PUBLICATIONS},
      {"source", CONNECTION_URL},
      {"batch.maxBytes", BATCH_MAX_BYTES},
      {"batch.maxFill", BATCH_MAX_FILL_MS},
      {"maxInFlightWrites", MAX_IN_FLIGHT_WRITES},
      {"maxTableSyncWorkers", MAX_TABLE_SYNC_WORKERS},
      {"copyConnectionsPerTable", COPY_CONNECTIONS_PER_TABLE},
      {"chunkedCopyMinBytes", COPY_CHUNKED_MIN_BYTES},
      {"copyChunkBytes", COPY_CHUNK_BYTES},
      {"retry.delay", RETRY_DELAY_MS},
      {"retry.maxDelay", RETRY_MAX_DELAY_MS},
      {"retry.maxAttempts", RETRY_MAX_ATTEMPTS},
      {"statusInterval", STATUS_INTERVAL_MS},
      {"shutdownTimeout", SHUTDOWN_TIMEOUT_MS},
      {"lifecyclePollInterval", LIFECYCLE_POLL_INTERVAL_MS},
      {"leaseCheckInterval", LEASE_CHECK_INTERVAL_MS},
      {"takeoverDelay", TAKEOVER_DELAY_MS}
    };
    for (String[] f : fields) {
      if (message.startsWith(f[0] + " ")) {
        return f[1];
      }
    }
    return message.startsWith("source.") ? CONNECTION_URL : PIPELINE_ID;
  }

  private static void add(Map<String, List<String>> errors, String key, @Nullable String message) {
    errors.computeIfAbsent(key, k -> new ArrayList<>()).add(message);
  }

  /** Checks everything and throws the first error, as Connect expects of {@code start()}. */
  void requireValid(int maxTasks) {
    Map<String, List<String>> errors = check(maxTasks);
    if (!errors.isEmpty()) {
      Map.Entry<String, List<String>> first = errors.entrySet().iterator().next();
      throw new ConfigException(first.getValue().get(0));
    }
  }
}
