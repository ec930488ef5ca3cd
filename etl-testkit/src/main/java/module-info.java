/**
 * The pgetl testkit: a real PostgreSQL on demand and a JUnit 5 extension ({@code
 * org.pgetl.testkit}), recording and faulty destinations ({@code org.pgetl.testkit.destination})
 * and the destination conformance kit ({@code org.pgetl.testkit.tck}).
 */
module org.pgetl.testkit {
  // @NullMarked and @Nullable, read by javac and NullAway only
  requires static org.jspecify;
  requires transitive org.pgetl.destination.api;
  // JUnit is needed by the extension and the conformance kit alone, and tests that use them
  // require it themselves; a program that only starts a server (the examples' demo) runs without.
  requires static org.junit.jupiter.api;
  requires transitive java.sql;
  // downloads server binaries of other PostgreSQL majors on demand
  requires java.net.http;
  requires org.postgresql.jdbc;
  requires org.slf4j;

  exports org.pgetl.testkit;
  exports org.pgetl.testkit.destination;
  exports org.pgetl.testkit.tck;

  // JUnit calls the conformance kit's protected lifecycle methods reflectively.
  opens org.pgetl.testkit.tck to
      org.junit.platform.commons;
}
