package org.pgetl.model;

import java.util.Objects;

/**
 * A schema-qualified table name, with SQL identifier quoting.
 *
 * <p>The parts are the names as stored in the catalog (unquoted, case preserved). {@link #quoted()}
 * gives the form to paste into SQL, which round-trips any name: upper case, spaces, double quotes
 * and non-ASCII letters included.
 *
 * @param schema the schema (namespace) name, as in {@code pg_namespace.nspname}
 * @param name the table name, as in {@code pg_class.relname}
 */
public record TableName(String schema, String name) {
  /**
   * Validates the components.
   *
   * @param schema the schema (namespace) name, as in {@code pg_namespace.nspname}
   * @param name the table name, as in {@code pg_class.relname}
   */
  public TableName {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(name, "name");
    if (schema.isEmpty() || name.isEmpty()) {
      throw new IllegalArgumentException("schema and table name must not be empty");
    }
    if (schema.indexOf('\0') >= 0 || name.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("identifiers cannot contain NUL characters");
    }
  }

  /**
   * Returns {@code "schema"."name"} with both parts quoted.
   *
   * @return the quoted, qualified name
   */
  public String quoted() {
    return quoteIdentifier(schema) + '.' + quoteIdentifier(name);
  }

  /**
   * Quotes one SQL identifier: wraps it in double quotes and doubles every double quote inside.
   *
   * @param identifier the identifier as stored in the catalog
   * @return the quoted identifier
   */
  public static String quoteIdentifier(String identifier) {
    Objects.requireNonNull(identifier, "identifier");
    if (identifier.isEmpty()) {
      throw new IllegalArgumentException("identifier must not be empty");
    }
    StringBuilder sb = new StringBuilder(identifier.length() + 2).append('"');
    for (int i = 0; i < identifier.length(); i++) {
      char c = identifier.charAt(i);
      if (c == '\0') {
        throw new IllegalArgumentException("identifiers cannot contain NUL characters");
      }
      if (c == '"') {
        sb.append('"');
      }
      sb.append(c);
    }
    return sb.append('"').toString();
  }

  /**
   * Parses a qualified name written in SQL: each part either quoted (with doubled quotes inside) or
   * unquoted (folded to lower case, as PostgreSQL does). A name without a schema gets {@code
   * public}.
   *
   * @param sql the name as written in SQL, for example {@code "My Schema".orders}
   * @return the table name
   * @throws IllegalArgumentException when the text is not a valid qualified name
   */
  public static TableName parse(String sql) {
    Objects.requireNonNull(sql, "sql");
    java.util.List<String> parts = new java.util.ArrayList<>(2);
    int i = 0;
    int n = sql.length();
    while (true) {
      if (i >= n) {
        throw new IllegalArgumentException("not a table name: '" + sql + "'");
      }
      StringBuilder part = new StringBuilder();
      if (sql.charAt(i) == '"') {
        i++;
        while (true) {
          if (i >= n) {
            throw new IllegalArgumentException("unterminated quoted identifier in '" + sql + "'");
          }
          char c = sql.charAt(i++);
          if (c == '"') {
            if (i < n && sql.charAt(i) == '"') {
              part.append('"');
              i++;
            } else {
              break;
            }
          } else {
            part.append(c);
          }
        }
      } else {
        while (i < n && sql.charAt(i) != '.') {
          char c = sql.charAt(i++);
          if (c == '"' || Character.isWhitespace(c)) {
            throw new IllegalArgumentException("invalid character in unquoted name '" + sql + "'");
          }
          part.append(c);
        }
        String folded = part.toString().toLowerCase(java.util.Locale.ROOT);
        part.setLength(0);
        part.append(folded);
      }
      if (part.length() == 0) {
        throw new IllegalArgumentException("empty identifier in '" + sql + "'");
      }
      parts.add(part.toString());
      if (i == n) {
        break;
      }
      if (sql.charAt(i) != '.') {
        throw new IllegalArgumentException("expected '.' in '" + sql + "'");
      }
      i++;
    }
    return switch (parts.size()) {
      case 1 -> new TableName("public", parts.get(0));
      case 2 -> new TableName(parts.get(0), parts.get(1));
      default -> throw new IllegalArgumentException("too many name parts in '" + sql + "'");
    };
  }

  /**
   * Returns {@code schema.name} unquoted, for logs and messages.
   *
   * @return the readable name
   */
  @Override
  public String toString() {
    return schema + '.' + name;
  }
}
