package org.pgetl.examples.cli;

import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.store.MemoryStore;
import org.pgetl.store.PipelineStore;
import org.pgetl.store.postgres.PostgresStore;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Where a pipeline keeps its state: {@code source} (a {@link PostgresStore} in the source
 * database), {@code memory} (a {@link MemoryStore}: every start copies every table again) or a JDBC
 * URL (a {@link PostgresStore} in that database).
 *
 * @param kind the store kind
 * @param url the store database's URL, for {@link Kind#URL}; null for the other kinds
 */
record StateStoreSpec(Kind kind, @Nullable String url) {
  /** The store kinds. */
  enum Kind {
    SOURCE,
    MEMORY,
    URL
  }

  /**
   * Parses {@code source}, {@code memory} or a URL.
   *
   * @param text the option value
   * @return the spec
   * @throws IllegalArgumentException for anything else
   */
  static StateStoreSpec parse(String text) {
    String t = text.strip();
    String lower = t.toLowerCase(Locale.ROOT);
    if (lower.equals("source")) {
      return new StateStoreSpec(Kind.SOURCE, null);
    }
    if (lower.equals("memory")) {
      return new StateStoreSpec(Kind.MEMORY, null);
    }
    if (lower.startsWith("jdbc:postgresql://")
        || lower.startsWith("postgresql://")
        || lower.startsWith("postgres://")) {
      return new StateStoreSpec(Kind.URL, t);
    }
    throw new IllegalArgumentException(
        "'" + text + "' is not a state store: use source, memory or a jdbc:postgresql:// URL");
  }

  /**
   * Opens the store without creating or migrating anything: a PostgreSQL store's schema is set up
   * by the pipeline's start, after its preflight checks passed ({@link
   * PostgresStore.Builder#buildWithoutMigrating()}), so {@code check} changes nothing and a failed
   * {@code replicate} names the store's problem with the others.
   *
   * @param source the source database (for {@code source})
   * @param pipelineId the pipeline id
   * @param schema the store's schema
   * @return the open store; close it
   */
  PipelineStore open(PgConnectionConfig source, String pipelineId, String schema) {
    return switch (kind) {
      case MEMORY -> new MemoryStore(pipelineId);
      case SOURCE ->
          PostgresStore.builder()
              .connection(source)
              .schema(schema)
              .pipelineId(pipelineId)
              .buildWithoutMigrating();
      case URL ->
          PostgresStore.builder()
              .connection(
                  Connections.config(
                      Objects.requireNonNull(url, "parse() gives a URL store its URL")))
              .schema(schema)
              .pipelineId(pipelineId)
              .buildWithoutMigrating();
    };
  }

  /** Picocli converter. */
  static final class Converter implements ITypeConverter<StateStoreSpec> {
    @Override
    public StateStoreSpec convert(String value) {
      try {
        return parse(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }
}
