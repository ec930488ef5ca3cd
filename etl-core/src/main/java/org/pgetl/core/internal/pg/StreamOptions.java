package org.pgetl.core.internal.pg;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

/**
 * How to start logical replication from a slot: the start LSN, the {@code pgoutput} options and the
 * client's status-update pacing.
 *
 * @param slotName the slot to stream
 * @param startLsn the LSN to start from; the server starts at the slot's {@code
 *     confirmed_flush_lsn} when that is later
 * @param publicationNames the publications to stream, at least one
 * @param protoVersion the {@code pgoutput} protocol version, or 0 for the highest the server speaks
 *     ({@link ServerVersion#maxProtoVersion()})
 * @param messages whether to receive logical decoding messages ({@code pg_logical_emit_message},
 *     PostgreSQL 14+)
 * @param binary whether tuples come in binary format (PostgreSQL 14+)
 * @param streaming whether large in-progress transactions are streamed
 * @param statusInterval the longest time between two standby status updates; clamped to a third of
 *     the server's {@code wal_sender_timeout}
 * @param feedbackDelay the shortest time between two status updates caused by a flush advance (a
 *     rate limit, so that many small durable writes do not each send an update)
 * @param closeTimeout the longest {@link ReplicationStream#close()} waits for the server to end the
 *     stream
 * @param ticker where the stream reads time for its status-update pacing and its read bounds
 */
public record StreamOptions(
    String slotName,
    Lsn startLsn,
    List<String> publicationNames,
    int protoVersion,
    boolean messages,
    boolean binary,
    StreamingMode streaming,
    Duration statusInterval,
    Duration feedbackDelay,
    Duration closeTimeout,
    Ticker ticker) {

  /**
   * The default status interval: well inside the server's default 60 s {@code wal_sender_timeout}.
   */
  public static final Duration DEFAULT_STATUS_INTERVAL = Duration.ofSeconds(10);

  /** The default rate limit of flush-driven status updates. */
  public static final Duration DEFAULT_FEEDBACK_DELAY = Duration.ofMillis(100);

  /** The default bound on closing a stream. */
  public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(5);

  /** Validates the components and copies the publication list. */
  public StreamOptions {
    SlotNames.validate(slotName);
    Objects.requireNonNull(startLsn, "startLsn");
    publicationNames = List.copyOf(publicationNames);
    if (publicationNames.isEmpty()) {
      throw new EtlException(ErrorKind.CONFIG_ERROR, "publicationNames must not be empty");
    }
    for (String name : publicationNames) {
      if (name.isEmpty() || name.indexOf('\0') >= 0) {
        throw new EtlException(
            ErrorKind.CONFIG_ERROR, "publication name must be non-empty and without NUL");
      }
    }
    if (protoVersion < 0 || protoVersion > 4) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR, "protoVersion must be in 0..4, was " + protoVersion);
    }
    Objects.requireNonNull(streaming, "streaming");
    requirePositive(statusInterval, "statusInterval");
    Objects.requireNonNull(feedbackDelay, "feedbackDelay");
    if (feedbackDelay.isNegative()) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR, "feedbackDelay must be >= 0, was " + feedbackDelay);
    }
    requirePositive(closeTimeout, "closeTimeout");
    Objects.requireNonNull(ticker, "ticker");
  }

  private static void requirePositive(Duration d, String field) {
    Objects.requireNonNull(d, field);
    if (d.isNegative() || d.isZero()) {
      throw new EtlException(ErrorKind.CONFIG_ERROR, field + " must be > 0, was " + d);
    }
  }

  /**
   * Returns options with the defaults: highest protocol, no messages, text tuples, no streaming,
   * status every 10 s, the system ticker.
   *
   * @param slotName the slot
   * @param startLsn the start LSN
   * @param publicationNames the publications
   * @return the options
   */
  public static StreamOptions of(String slotName, Lsn startLsn, List<String> publicationNames) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        0,
        false,
        false,
        StreamingMode.OFF,
        DEFAULT_STATUS_INTERVAL,
        DEFAULT_FEEDBACK_DELAY,
        DEFAULT_CLOSE_TIMEOUT,
        Ticker.system());
  }

  /**
   * Returns a copy with another protocol version.
   *
   * @param v the version, or 0 for the server's highest
   * @return the new options
   */
  public StreamOptions withProtoVersion(int v) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        v,
        messages,
        binary,
        streaming,
        statusInterval,
        feedbackDelay,
        closeTimeout,
        ticker);
  }

  /**
   * Returns a copy with logical decoding messages on or off.
   *
   * @param on whether to receive messages
   * @return the new options
   */
  public StreamOptions withMessages(boolean on) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        protoVersion,
        on,
        binary,
        streaming,
        statusInterval,
        feedbackDelay,
        closeTimeout,
        ticker);
  }

  /**
   * Returns a copy with binary tuples on or off.
   *
   * @param on whether tuples come in binary
   * @return the new options
   */
  public StreamOptions withBinary(boolean on) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        protoVersion,
        messages,
        on,
        streaming,
        statusInterval,
        feedbackDelay,
        closeTimeout,
        ticker);
  }

  /**
   * Returns a copy with another streaming mode.
   *
   * @param s the mode
   * @return the new options
   */
  public StreamOptions withStreaming(StreamingMode s) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        protoVersion,
        messages,
        binary,
        s,
        statusInterval,
        feedbackDelay,
        closeTimeout,
        ticker);
  }

  /**
   * Returns a copy with another status interval.
   *
   * @param d the interval
   * @return the new options
   */
  public StreamOptions withStatusInterval(Duration d) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        protoVersion,
        messages,
        binary,
        streaming,
        d,
        feedbackDelay,
        closeTimeout,
        ticker);
  }

  /**
   * Returns a copy with another feedback rate limit.
   *
   * @param d the shortest time between two flush-driven status updates
   * @return the new options
   */
  public StreamOptions withFeedbackDelay(Duration d) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        protoVersion,
        messages,
        binary,
        streaming,
        statusInterval,
        d,
        closeTimeout,
        ticker);
  }

  /**
   * Returns a copy that reads time from another ticker.
   *
   * @param t the ticker
   * @return the new options
   */
  public StreamOptions withTicker(Ticker t) {
    return new StreamOptions(
        slotName,
        startLsn,
        publicationNames,
        protoVersion,
        messages,
        binary,
        streaming,
        statusInterval,
        feedbackDelay,
        closeTimeout,
        t);
  }

  /**
   * Returns the protocol version to request from a server: {@link #protoVersion()} when set, else
   * the server's highest; checked against what the server supports.
   *
   * @param server the server's version
   * @return the protocol version to send
   * @throws EtlException of kind {@link ErrorKind#CONFIG_ERROR} when an option needs a newer server
   */
  int resolveProtoVersion(ServerVersion server) {
    int max = server.maxProtoVersion();
    int v = protoVersion == 0 ? max : protoVersion;
    if (v > max) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "pgoutput proto_version " + v + " needs a newer server than " + server,
          "PostgreSQL " + server + " speaks up to proto_version " + max);
    }
    if ((binary || messages) && !server.supportsBinaryAndMessages()) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "pgoutput binary and messages options need PostgreSQL 14 or later, server is " + server);
    }
    if (streaming == StreamingMode.ON && v < 2) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "streaming of in-progress transactions needs proto_version 2 or later (PostgreSQL 14+),"
              + " was "
              + v);
    }
    if (streaming == StreamingMode.PARALLEL && v < 4) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "parallel streaming needs proto_version 4 (PostgreSQL 16+), was " + v);
    }
    return v;
  }

  /**
   * Returns the {@code publication_names} option value: each name double-quoted (so that case,
   * commas and spaces survive), joined with commas.
   *
   * @return the option value, before quoting as a string literal
   */
  String publicationNamesOption() {
    StringBuilder sb = new StringBuilder();
    for (String name : publicationNames) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append('"').append(name.replace("\"", "\"\"")).append('"');
    }
    return sb.toString();
  }
}
