package org.pgetl.examples.cli;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.destination.Destination;
import org.pgetl.destination.duckdb.DuckDbDestination;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.error.EtlException;
import org.pgetl.examples.destination.StdoutJsonDestination;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Where {@code pgetl replicate} writes: {@code stdout} (JSON lines), {@code duckdb:PATH} (a DuckDB
 * file) or {@code postgres:JDBC_URL} (a PostgreSQL mirror).
 *
 * @param kind the destination kind
 * @param target the path or URL after the colon, or null for stdout
 */
record DestinationSpec(Kind kind, @Nullable String target) {
  /** The destination kinds. */
  enum Kind {
    STDOUT,
    DUCKDB,
    POSTGRES
  }

  /**
   * Parses {@code stdout}, {@code duckdb:PATH} or {@code postgres:JDBC_URL}.
   *
   * @param text the option value
   * @return the spec
   * @throws IllegalArgumentException when the text is none of these
   */
  static DestinationSpec parse(String text) {
    String t = text.strip();
    String lower = t.toLowerCase(Locale.ROOT);
    if (lower.equals("stdout")) {
      return new DestinationSpec(Kind.STDOUT, null);
    }
    if (lower.startsWith("duckdb:") && t.length() > "duckdb:".length()) {
      return new DestinationSpec(Kind.DUCKDB, t.substring("duckdb:".length()));
    }
    if (lower.startsWith("postgres:") && t.length() > "postgres:".length()) {
      return new DestinationSpec(Kind.POSTGRES, t.substring("postgres:".length()));
    }
    throw new IllegalArgumentException(
        "'" + text + "' is not a destination: use stdout, duckdb:PATH or postgres:JDBC_URL");
  }

  /**
   * Creates the destination.
   *
   * @param context where {@code stdout} writes
   * @param source the source database: the mirror reads its generated columns from its catalog
   * @return a new destination, not started
   * @throws EtlException of kind {@code CONFIG_ERROR} for a bad mirror URL
   */
  Destination create(CliContext context, PgConnectionConfig source) {
    return switch (kind) {
      case STDOUT -> new StdoutJsonDestination(context.out());
      case DUCKDB -> new DuckDbDestination(Path.of(requiredTarget()));
      case POSTGRES ->
          new PostgresMirrorDestination(
              PgConnectionConfig.fromJdbcUrl(requiredTarget()),
              PostgresMirrorDestination.DEFAULT_COPY_CONNECTIONS,
              source);
    };
  }

  private String requiredTarget() {
    return Objects.requireNonNull(target, "parse() gives duckdb: and postgres: their target");
  }

  /** Picocli converter: a bad value, or an unavailable kind, is an input error. */
  static final class Converter implements ITypeConverter<DestinationSpec> {
    @Override
    public DestinationSpec convert(String value) {
      DestinationSpec spec;
      try {
        spec = parse(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
      return spec;
    }
  }
}
