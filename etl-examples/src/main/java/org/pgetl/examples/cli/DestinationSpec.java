package org.pgetl.examples.cli;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Path;
import java.util.Locale;
import org.pgetl.PgConnectionConfig;
import org.pgetl.destination.Destination;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.examples.destination.DuckDbDestination;
import org.pgetl.examples.destination.StdoutJsonDestination;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Where {@code pgetl replicate} writes: {@code stdout} (JSON lines), {@code duckdb:PATH} (a DuckDB
 * file) or {@code postgres:JDBC_URL} (a PostgreSQL mirror, when that destination is in the build).
 *
 * @param kind the destination kind
 * @param target the path or URL after the colon, or null for stdout
 */
record DestinationSpec(Kind kind, String target) {
  /** The class of the PostgreSQL mirror destination, looked up when {@code postgres:} is asked. */
  static final String POSTGRES_MIRROR_CLASS =
      "org.pgetl.examples.destination.PostgresMirrorDestination";

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
   * @return a new destination, not started
   * @throws CliException when the PostgreSQL mirror is not part of this build
   * @throws EtlException of kind {@code CONFIG_ERROR} for a bad mirror URL
   */
  Destination create(CliContext context) {
    return switch (kind) {
      case STDOUT -> new StdoutJsonDestination(context.out());
      case DUCKDB -> new DuckDbDestination(Path.of(target));
      case POSTGRES -> postgresMirror(PgConnectionConfig.fromJdbcUrl(target));
    };
  }

  /** Whether the PostgreSQL mirror destination is part of this build. */
  static boolean postgresMirrorAvailable() {
    try {
      Class.forName(POSTGRES_MIRROR_CLASS, false, DestinationSpec.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /**
   * Creates the PostgreSQL mirror through its public constructor taking a {@link
   * PgConnectionConfig} (or, failing that, a JDBC URL string). Looked up by name so that this
   * command compiles whether or not the mirror is in the build.
   */
  private Destination postgresMirror(PgConnectionConfig connection) {
    Class<?> type;
    try {
      type = Class.forName(POSTGRES_MIRROR_CLASS, true, DestinationSpec.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw notAvailable();
    }
    try {
      try {
        Constructor<?> c = type.getConstructor(PgConnectionConfig.class);
        return (Destination) c.newInstance(connection);
      } catch (NoSuchMethodException e) {
        Constructor<?> c = type.getConstructor(String.class);
        return (Destination) c.newInstance(target);
      }
    } catch (InvocationTargetException e) {
      throw EtlException.wrap(
          ErrorKind.DESTINATION_ERROR, "cannot create the PostgreSQL mirror", e.getCause());
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw notAvailable();
    }
  }

  private static CliException notAvailable() {
    return new CliException(
        "the postgres destination is not available in this build (no public "
            + POSTGRES_MIRROR_CLASS
            + " constructor taking a PgConnectionConfig); use stdout or duckdb:PATH",
        Main.EXIT_USAGE);
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
      if (spec.kind() == Kind.POSTGRES && !postgresMirrorAvailable()) {
        throw new TypeConversionException(notAvailable().getMessage());
      }
      return spec;
    }
  }
}
