package org.pgetl.kafka.connect;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.pgetl.model.TableName;

/**
 * Turns a table into its topic name with the configured pattern ({@code topic.pattern}), and a
 * topic name into the base of its Connect schema names.
 *
 * <p>Placeholders: {@code ${prefix}}, {@code ${pipeline}}, {@code ${publication}}, {@code
 * ${schema}}, {@code ${table}}. A character Kafka does not allow in a topic name (anything but
 * ASCII letters, digits, {@code .}, {@code _} and {@code -}) becomes {@code _}.
 */
final class TopicNamer {
  /** The longest topic name Kafka accepts. */
  static final int MAX_TOPIC_LENGTH = 249;

  private final String pattern;
  private final String prefix;
  private final String pipeline;
  private final String publication;
  private final Map<TableName, String> topics = new ConcurrentHashMap<>();

  TopicNamer(String pattern, String prefix, String pipeline, String publication) {
    this.pattern = pattern;
    this.prefix = prefix;
    this.pipeline = pipeline;
    this.publication = publication;
  }

  /** The topic of a table. */
  String topic(TableName table) {
    return topics.computeIfAbsent(table, this::format);
  }

  private String format(TableName table) {
    String raw =
        pattern
            .replace("${prefix}", prefix)
            .replace("${pipeline}", pipeline)
            .replace("${publication}", publication)
            .replace("${schema}", table.schema())
            .replace("${table}", table.name());
    String topic = sanitizeTopic(raw);
    if (topic.length() > MAX_TOPIC_LENGTH) {
      // keep the name unique and legal: its start and a hash of the whole
      String hash = Integer.toHexString(raw.hashCode());
      topic = topic.substring(0, MAX_TOPIC_LENGTH - hash.length() - 1) + "_" + hash;
    }
    return topic;
  }

  /** Replaces every character Kafka does not allow in a topic name with {@code _}. */
  static String sanitizeTopic(String raw) {
    StringBuilder sb = new StringBuilder(raw.length());
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '.'
              || c == '_'
              || c == '-';
      sb.append(ok ? c : '_');
    }
    String s = sb.toString();
    return s.equals(".") || s.equals("..") ? s.replace('.', '_') : s;
  }

  /**
   * A schema name derived from a topic, legal as an Avro full name: dot-separated parts of letters,
   * digits and underscores, none starting with a digit.
   */
  static String schemaName(String topic, String suffix) {
    StringBuilder sb = new StringBuilder(topic.length() + suffix.length() + 1);
    for (String part : (topic + "." + suffix).split("\\.", -1)) {
      if (part.isEmpty()) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append('.');
      }
      if (Character.isDigit(part.charAt(0))) {
        sb.append('_');
      }
      for (int i = 0; i < part.length(); i++) {
        char c = part.charAt(i);
        sb.append(
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_');
      }
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return "TopicNamer[" + pattern.toLowerCase(Locale.ROOT) + "]";
  }
}
