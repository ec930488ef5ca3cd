package org.pgetl.core.internal.preflight;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;

/**
 * The result of one preflight check, as plain data: what {@link PreflightRunner} returns and what
 * the public {@code org.pgetl.Preflight.Check} is made from. The runner knows nothing of the public
 * type; the public type reads this one.
 *
 * @param name what was checked, in a few words, such as {@code wal_level}
 * @param outcome how the check ended
 * @param summary one line: what was found, what to know and fix, the failure's description, or why
 *     the check did not run
 * @param failure the failure; non-null exactly when {@code outcome} is {@link Outcome#FAILED}
 */
public record CheckResult(
    String name, Outcome outcome, String summary, @Nullable EtlException failure) {

  /** How a check ended; the same four ends as {@code org.pgetl.Preflight.Status}. */
  public enum Outcome {
    /** The check passed. */
    PASSED,
    /** The check found something to know that does not stop a start. */
    WARNING,
    /** The check failed. */
    FAILED,
    /** The check could not run because a check it depends on failed. */
    SKIPPED
  }

  /** Validates the components. */
  public CheckResult {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(summary, "summary");
    if ((outcome == Outcome.FAILED) != (failure != null)) {
      throw new IllegalArgumentException(
          "a check has a failure exactly when it failed, was " + outcome + " with " + failure);
    }
  }

  /**
   * Returns the failure of a list of checks, as a start throws it: the failed check's own failure
   * when one failed; when several failed, one exception of the first one's kind whose description
   * names every failed check with its description and detail, the first failure as its cause and
   * the others suppressed in it. A failure that stops several checks is named once.
   *
   * @param checks the results
   * @return the failure, or empty when no check failed
   */
  public static Optional<EtlException> failureOf(List<CheckResult> checks) {
    List<CheckResult> failed = new ArrayList<>();
    for (CheckResult c : checks) {
      EtlException e = c.failure();
      if (e != null && failed.stream().noneMatch(f -> f.failure() == e)) {
        failed.add(c);
      }
    }
    if (failed.isEmpty()) {
      return Optional.empty();
    }
    EtlException first = Objects.requireNonNull(failed.get(0).failure());
    if (failed.size() == 1) {
      return Optional.of(first);
    }
    StringBuilder description =
        new StringBuilder().append(failed.size()).append(" preflight checks failed: ");
    for (int i = 0; i < failed.size(); i++) {
      CheckResult c = failed.get(i);
      EtlException e = Objects.requireNonNull(c.failure());
      description.append(i == 0 ? "" : "; ").append('(').append(i + 1).append(") ");
      description.append(c.name()).append(": ").append(e.description());
      if (e.detail() != null && !e.detail().isBlank()) {
        description.append(" (").append(e.detail()).append(')');
      }
    }
    EtlException all = new EtlException(first.kind(), description.toString(), null, first);
    for (CheckResult c : failed.subList(1, failed.size())) {
      all.addSuppressed(Objects.requireNonNull(c.failure()));
    }
    return Optional.of(all);
  }
}
