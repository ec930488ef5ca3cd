package org.pgetl.destination.postgres;

import org.pgetl.PgConnectionConfig;
import org.pgetl.testkit.TestDatabase;

/** How the destination tests reach a database: pgetl's connection config of a test database. */
final class Jdbc {
  private Jdbc() {}

  /** Returns the connection config that points pgetl (a source or a mirror) at a test database. */
  static PgConnectionConfig config(TestDatabase db) {
    return PgConnectionConfig.builderFromJdbcUrl(db.jdbcUrl())
        .user(db.user())
        .password(db.password())
        .build();
  }
}
