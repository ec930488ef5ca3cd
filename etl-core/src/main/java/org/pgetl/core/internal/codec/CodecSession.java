package org.pgetl.core.internal.codec;

import java.util.Properties;

/**
 * The session settings the codecs rely on. Every connection whose values pgetl decodes (COPY,
 * replication, catalog) must run with them, because a value's text form depends on them and the
 * binary codecs print text as a server with these settings does.
 *
 * <ul>
 *   <li>{@code DateStyle=ISO}, {@code IntervalStyle=postgres}: the date, time and interval text
 *       forms the codecs parse;
 *   <li>{@code TimeZone=UTC}: {@code timestamptz} text carries {@code +00}, and composite or range
 *       values holding a {@code timestamptz} decoded from binary print it in UTC;
 *   <li>{@code extra_float_digits=3}: floats are printed exactly (shortest form that reads back);
 *   <li>{@code lc_monetary=C}: {@code money} prints as {@code $1,234.56}, which the binary {@code
 *       money} codec reproduces;
 *   <li>{@code bytea_output=hex} and {@code client_encoding=UTF8}.
 * </ul>
 */
public final class CodecSession {
  /**
   * The settings as a value for pgjdbc's {@code options} connection property (the {@code -c}
   * switches of the startup packet), which works on replication connections too.
   */
  public static final String OPTIONS =
      "-c DateStyle=ISO -c IntervalStyle=postgres -c TimeZone=UTC -c extra_float_digits=3"
          + " -c lc_monetary=C -c bytea_output=hex -c client_encoding=UTF8";

  private CodecSession() {}

  /**
   * Adds the settings to pgjdbc connection properties ({@code options}, appended to any options
   * already there).
   *
   * @param props the connection properties to change
   * @return the same properties
   */
  public static Properties applyTo(Properties props) {
    String existing = props.getProperty("options");
    props.setProperty(
        "options", existing == null || existing.isBlank() ? OPTIONS : existing + " " + OPTIONS);
    return props;
  }
}
