package org.pgetl.kafka.connect;

/** The connector's version: the jar's {@code Implementation-Version}. */
final class Version {
  private static final String VERSION = read();

  private Version() {}

  static String get() {
    return VERSION;
  }

  private static String read() {
    String v = Version.class.getPackage().getImplementationVersion();
    return v == null ? "unknown" : v;
  }
}
