package org.pgetl.examples.cli;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.destination.Destination;
import org.pgetl.destination.duckdb.DuckDbDestination;
import org.pgetl.destination.iceberg.IcebergDestination;
import org.pgetl.destination.postgres.PostgresMirrorDestination;
import org.pgetl.error.EtlException;
import org.pgetl.examples.destination.StdoutJsonDestination;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Where {@code pgetl replicate} writes: {@code stdout} (JSON lines), {@code duckdb:PATH} (a DuckDB
 * file), {@code postgres:JDBC_URL} (a PostgreSQL mirror), {@code iceberg:DIR} (Apache Iceberg
 * tables in a filesystem warehouse, upserted) or {@code iceberg-changelog:DIR} (the same as
 * changelogs).
 *
 * @param kind the destination kind
 * @param target the path or URL after the colon, or null for stdout
 */
record DestinationSpec(Kind kind, @Nullable String target) {
  /** The destination kinds. */
  enum Kind {
    STDOUT,
    DUCKDB,
    POSTGRES,
    ICEBERG,
    ICEBERG_CHANGELOG
  }

  /**
   * Parses {@code stdout}, {@code duckdb:PATH}, {@code postgres:JDBC_URL}, {@code iceberg:DIR} or
   * {@code iceberg-changelog:DIR}.
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
    if (lower.startsWith("iceberg:") && t.length() > "iceberg:".length()) {
      return new DestinationSpec(Kind.ICEBERG, t.substring("iceberg:".length()));
    }
    if (lower.startsWith("iceberg-changelog:") && t.length() > "iceberg-changelog:".length()) {
      return new DestinationSpec(
          Kind.ICEBERG_CHANGELOG, t.substring("iceberg-changelog:".length()));
    }
    if (lower.startsWith("postgres:") && t.length() > "postgres:".length()) {
      return new DestinationSpec(Kind.POSTGRES, t.substring("postgres:".length()));
    }
    throw new IllegalArgumentException(
        "'"
            + text
            + "' is not a destination: use stdout, duckdb:PATH, postgres:JDBC_URL, iceberg:DIR or"
            + " iceberg-changelog:DIR");
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
      case ICEBERG -> IcebergDestination.hadoop(Path.of(requiredTarget())).build();
      case ICEBERG_CHANGELOG ->
          IcebergDestination.hadoop(Path.of(requiredTarget()))
              .mode(IcebergDestination.Mode.CHANGELOG)
              .build();
      case POSTGRES ->
          new PostgresMirrorDestination(
              PgConnectionConfig.fromJdbcUrl(requiredTarget()),
              PostgresMirrorDestination.DEFAULT_COPY_CONNECTIONS,
              source);
    };
  }

  private String requiredTarget() {
    return Objects.requireNonNull(target, "parse() gives every kind but stdout its target");
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
