package org.pgetl.core.internal.decode;

/**
 * The value of pgoutput's {@code streaming} option for a replication stream: whether the server may
 * send large in-progress transactions in blocks before they commit, and in which format.
 */
public enum StreamingMode {
  /** No streaming (the default): every transaction arrives whole, after its commit. */
  OFF("off", 1),
  /** Streaming of in-progress transactions; needs protocol version 2 or later. */
  ON("on", 2),
  /**
   * Streaming for parallel apply; needs protocol version 4 (PostgreSQL 16 and later). Stream Abort
   * messages then carry the abort LSN and abort time.
   */
  PARALLEL("parallel", 4);

  private final String optionValue;
  private final int minProtocolVersion;

  StreamingMode(String optionValue, int minProtocolVersion) {
    this.optionValue = optionValue;
    this.minProtocolVersion = minProtocolVersion;
  }

  /**
   * Returns the value to pass as the {@code streaming} slot option.
   *
   * @return {@code off}, {@code on} or {@code parallel}
   */
  public String optionValue() {
    return optionValue;
  }

  /**
   * Returns the lowest pgoutput protocol version that allows this mode.
   *
   * @return 1, 2 or 4
   */
  public int minProtocolVersion() {
    return minProtocolVersion;
  }
}
