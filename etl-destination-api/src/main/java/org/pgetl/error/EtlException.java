package org.pgetl.error;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one exception type of pgetl: unchecked, with an {@link ErrorKind} that decides how the
 * pipeline reacts, a short description, an optional detail, an optional cause, and — when several
 * workers fail together — the other failures as {@linkplain #getSuppressed() suppressed}
 * exceptions.
 *
 * <p>Destinations report failures with it through {@code AsyncResult.fail(EtlException)} or by
 * throwing it from a write method. Messages name the table, the LSN and what to do; they never
 * contain row values or secrets.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public class EtlException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The kind, which decides the retry directive. */
  private final ErrorKind kind;

  /** The short description. */
  private final String description;

  /** More context, or null. */
  private final @Nullable String detail;

  /**
   * Creates an exception with a kind and a description.
   *
   * @param kind the kind, which decides the retry directive
   * @param description a short sentence that says what failed
   */
  public EtlException(ErrorKind kind, String description) {
    this(kind, description, null, null);
  }

  /**
   * Creates an exception with a kind, a description and a detail.
   *
   * @param kind the kind, which decides the retry directive
   * @param description a short sentence that says what failed
   * @param detail more context (the table, the LSN, the server's message), or null
   */
  public EtlException(ErrorKind kind, String description, @Nullable String detail) {
    this(kind, description, detail, null);
  }

  /**
   * Creates an exception with a kind, a description, a detail and a cause.
   *
   * @param kind the kind, which decides the retry directive
   * @param description a short sentence that says what failed
   * @param detail more context (the table, the LSN, the server's message), or null
   * @param cause the underlying exception, or null
   */
  public EtlException(
      ErrorKind kind, String description, @Nullable String detail, @Nullable Throwable cause) {
    super(message(kind, description, detail), cause);
    this.kind = Objects.requireNonNull(kind, "kind");
    this.description = Objects.requireNonNull(description, "description");
    this.detail = detail;
  }

  private static String message(ErrorKind kind, String description, @Nullable String detail) {
    Objects.requireNonNull(kind, "kind");
    return detail == null || detail.isEmpty()
        ? kind + ": " + description
        : kind + ": " + description + " (" + detail + ")";
  }

  /**
   * Returns the kind of this failure.
   *
   * @return the kind, never null
   */
  public ErrorKind kind() {
    return kind;
  }

  /**
   * Returns the short description given at construction.
   *
   * @return the description, never null
   */
  public String description() {
    return description;
  }

  /**
   * Returns the detail given at construction.
   *
   * @return the detail, or null when none was given
   */
  public @Nullable String detail() {
    return detail;
  }

  /**
   * Returns the retry directive of this failure's kind; a shortcut for {@code kind().directive()}.
   *
   * @return the directive
   */
  public RetryDirective directive() {
    return kind.directive();
  }

  /**
   * Returns the operator hint of this failure's kind.
   *
   * @return the hint
   */
  public String hint() {
    return kind.hint();
  }

  /**
   * Returns the kinds of this failure and of every suppressed {@code EtlException}, in order, this
   * one first.
   *
   * @return the kinds, never empty
   */
  public List<ErrorKind> kinds() {
    List<ErrorKind> kinds = new ArrayList<>();
    kinds.add(kind);
    for (Throwable t : getSuppressed()) {
      if (t instanceof EtlException e) {
        kinds.addAll(e.kinds());
      }
    }
    return List.copyOf(kinds);
  }

  /**
   * Aggregates failures of several workers: returns the first, with every other one added as
   * suppressed. Returns null for an empty list.
   *
   * @param errors failures in the order they happened
   * @return the aggregate, or null when {@code errors} is empty
   */
  public static @Nullable EtlException aggregate(List<? extends EtlException> errors) {
    if (errors.isEmpty()) {
      return null;
    }
    EtlException first = errors.get(0);
    for (int i = 1; i < errors.size(); i++) {
      EtlException other = errors.get(i);
      if (other != first) {
        first.addSuppressed(other);
      }
    }
    return first;
  }

  /**
   * Wraps any throwable as an {@code EtlException}: returns it unchanged if it already is one,
   * otherwise wraps it with the given kind.
   *
   * @param kind the kind to use when {@code t} is not an {@code EtlException}
   * @param description the description to use when wrapping
   * @param t the throwable
   * @return an {@code EtlException}
   */
  public static EtlException wrap(ErrorKind kind, String description, Throwable t) {
    if (t instanceof EtlException e) {
      return e;
    }
    return new EtlException(kind, description, String.valueOf(t), t);
  }
}
