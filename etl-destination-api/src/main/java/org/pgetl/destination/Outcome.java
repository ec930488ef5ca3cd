package org.pgetl.destination;

import java.util.Objects;
import org.pgetl.error.EtlException;

/**
 * The answer to an {@link AsyncResult}: accepted, durable, failed (with its error) or shutdown.
 *
 * <p>Use the constants and {@link #failed(EtlException)}; switch on {@link #kind()}.
 */
public final class Outcome {
  /** The four answers. */
  public enum Kind {
    /** The destination owns the data, but it is not durable yet. */
    ACCEPTED,
    /** The data, and every earlier accepted write of the same stream, is durable. */
    DURABLE,
    /** The work failed; {@link Outcome#error()} says why. */
    FAILED,
    /** The destination abandoned the work because it is shutting down. */
    SHUTDOWN
  }

  /** The {@link Kind#ACCEPTED} answer. */
  public static final Outcome ACCEPTED = new Outcome(Kind.ACCEPTED, null);

  /** The {@link Kind#DURABLE} answer. */
  public static final Outcome DURABLE = new Outcome(Kind.DURABLE, null);

  /** The {@link Kind#SHUTDOWN} answer. */
  public static final Outcome SHUTDOWN = new Outcome(Kind.SHUTDOWN, null);

  private final Kind kind;
  private final EtlException error;

  private Outcome(Kind kind, EtlException error) {
    this.kind = kind;
    this.error = error;
  }

  /**
   * Returns the {@link Kind#FAILED} answer with its error.
   *
   * @param error why the work failed; its kind decides the retry
   * @return the outcome
   */
  public static Outcome failed(EtlException error) {
    return new Outcome(Kind.FAILED, Objects.requireNonNull(error, "error"));
  }

  /**
   * Returns which answer this is.
   *
   * @return the kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * Returns the error of a {@link Kind#FAILED} answer.
   *
   * @return the error, or null for the other kinds
   */
  public EtlException error() {
    return error;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Outcome other && kind == other.kind && Objects.equals(error, other.error);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, error);
  }

  @Override
  public String toString() {
    return error == null ? kind.name() : kind + "(" + error.getMessage() + ")";
  }
}
