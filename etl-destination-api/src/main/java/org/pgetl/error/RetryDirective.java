package org.pgetl.error;

/**
 * What the pipeline does after a failure of a given {@link ErrorKind}.
 *
 * <p>The directive of each kind is fixed in one place, {@link ErrorKind#directive()}.
 */
public enum RetryDirective {
  /**
   * Retry automatically after a delay that grows exponentially with each attempt, up to the
   * configured maximum number of attempts; past that the failure becomes {@link #MANUAL}.
   */
  TIMED,
  /**
   * Do not retry by itself: the table (or pipeline) stays errored until an operator fixes the cause
   * and rolls the table state back.
   */
  MANUAL,
  /** Never retry: the failure is final for this table. */
  NONE
}
