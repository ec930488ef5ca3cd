package org.pgetl.error;

import java.util.Objects;

/**
 * The retry directive and the operator hint that belong to an {@link ErrorKind}.
 *
 * @param directive what the pipeline does after a failure of this kind
 * @param hint one sentence that tells an operator what to do about it
 */
public record ErrorPolicy(RetryDirective directive, String hint) {
  /**
   * Validates the components.
   *
   * @param directive what the pipeline does after a failure of this kind
   * @param hint one sentence that tells an operator what to do about it
   */
  public ErrorPolicy {
    Objects.requireNonNull(directive, "directive");
    Objects.requireNonNull(hint, "hint");
  }
}
