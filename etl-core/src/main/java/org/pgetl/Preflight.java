package org.pgetl;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.preflight.CheckResult;
import org.pgetl.core.internal.preflight.PreflightRunner;
import org.pgetl.destination.Destination;
import org.pgetl.error.EtlException;
import org.pgetl.store.PipelineStore;

/**
 * The checks a pipeline runs at {@link Pipeline#start()} before it creates a replication slot or a
 * state row: the source's {@code wal_level}, the role's {@code REPLICATION} attribute, the
 * publication, {@code SELECT} on every table the copy reads, the replica identity of every table
 * the publication publishes updates or deletes for, whether the destination can hold every
 * published table ({@link Destination#checkTables}), free replication slots and WAL senders, and
 * the state store. A table without a replica identity and an empty publication are {@linkplain
 * Status#WARNING warnings}: the pipeline starts, as PostgreSQL's own subscriber does. {@code
 * start()} fails with one exception that names every failed check ({@link #failure}); {@link #run}
 * runs them alone, for a deployment check, without starting anything:
 *
 * <pre>{@code
 * for (Preflight.Check c : Preflight.run(config, store)) {
 *   System.out.println(c.status() + " " + (c.passed() ? c.summary() : c.failure().getMessage()));
 * }
 * }</pre>
 *
 * <p>The checks only read: the source's catalog and settings, and the store through {@link
 * PipelineStore#setupNeeded()}, {@link PipelineStore#loadTableStates()} and {@link
 * PipelineStore#progress}. A store that needs setting up (a {@code PostgresStore} opened without
 * migrating, whose schema does not exist yet) passes the store check with what a start will create,
 * or fails it when the store's role could not create it; its table states are then taken as empty.
 * A store whose opening already created its schema ({@code PostgresStore.builder().build()}) did so
 * before these checks: open it without migrating for a check that changes nothing. A check that
 * depends on another one that failed (every check on the source needs a connection; the table
 * checks need the publication; the slot count needs the table states) is {@linkplain Status#SKIPPED
 * skipped}.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class Preflight {
  private Preflight() {}

  /** How a check ended. */
  public enum Status {
    /** The check passed. */
    PASSED,
    /**
     * The check found something a user should know, which does not stop a start: {@link
     * Check#summary()} says what and how to fix it (a table without a replica identity, an empty
     * publication).
     */
    WARNING,
    /** The check failed: {@link Check#failure()} says why and what to do. */
    FAILED,
    /** The check could not run because a check it depends on failed. */
    SKIPPED
  }

  /**
   * The result of one check.
   *
   * @param name what was checked, in a few words, such as {@code wal_level} or {@code replication
   *     slots}
   * @param status how the check ended
   * @param summary one line: what was found ({@code wal_level = logical}) when passed, what to know
   *     and how to fix it when warned, the failure's description when failed, why the check did not
   *     run when skipped
   * @param failure the failure, with its kind, description and hint; non-null exactly when {@code
   *     status} is {@link Status#FAILED}
   */
  public record Check(String name, Status status, String summary, @Nullable EtlException failure) {
    /** Validates the components. */
    public Check {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(summary, "summary");
      if ((status == Status.FAILED) != (failure != null)) {
        throw new IllegalArgumentException(
            "a check has a failure exactly when it failed, was " + status + " with " + failure);
      }
    }

    /**
     * Returns whether the check passed.
     *
     * @return true for {@link Status#PASSED} and {@link Status#WARNING}: a start goes ahead
     */
    public boolean passed() {
      return status == Status.PASSED || status == Status.WARNING;
    }
  }

  /**
   * Runs every check for a pipeline of this configuration and store, as {@link Pipeline#start()}
   * does, without creating a slot, a state row or anything else.
   *
   * @param config the pipeline's configuration
   * @param store the pipeline's store
   * @return one result per check, in the order {@code start()} runs them
   * @throws EtlException of kind {@code CONFIG_ERROR} when the store belongs to another pipeline
   */
  public static List<Check> run(PipelineConfig config, PipelineStore store) {
    return checks(config, store, null);
  }

  /**
   * Runs every check as {@link #run(PipelineConfig, PipelineStore)} does, and one more that {@link
   * Pipeline#start()} runs too: whether the destination can hold every published table ({@link
   * Destination#checkTables}), named {@code destination}. The destination is neither started nor
   * written to.
   *
   * @param config the pipeline's configuration
   * @param store the pipeline's store
   * @param destination the pipeline's destination
   * @return one result per check, in the order {@code start()} runs them
   * @throws EtlException of kind {@code CONFIG_ERROR} when the store belongs to another pipeline
   */
  public static List<Check> run(
      PipelineConfig config, PipelineStore store, Destination destination) {
    return checks(config, store, Objects.requireNonNull(destination, "destination"));
  }

  private static List<Check> checks(
      PipelineConfig config, PipelineStore store, @Nullable Destination destination) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(store, "store");
    if (!config.pipelineId().equals(store.pipelineId())) {
      throw new EtlException(
          org.pgetl.error.ErrorKind.CONFIG_ERROR,
          "the store belongs to pipeline '"
              + store.pipelineId()
              + "', the configuration to '"
              + config.pipelineId()
              + "'");
    }
    List<Check> checks = new ArrayList<>();
    for (CheckResult r :
        new PreflightRunner(config, store, new PgConnector(config.source()), destination)
            .run(false)) {
      checks.add(new Check(r.name(), status(r.outcome()), r.summary(), r.failure()));
    }
    return checks;
  }

  // The runner returns plain results and never sees these types: this class reads them.
  private static Status status(CheckResult.Outcome outcome) {
    return switch (outcome) {
      case PASSED -> Status.PASSED;
      case WARNING -> Status.WARNING;
      case FAILED -> Status.FAILED;
      case SKIPPED -> Status.SKIPPED;
    };
  }

  private static CheckResult.Outcome outcome(Status status) {
    return switch (status) {
      case PASSED -> CheckResult.Outcome.PASSED;
      case WARNING -> CheckResult.Outcome.WARNING;
      case FAILED -> CheckResult.Outcome.FAILED;
      case SKIPPED -> CheckResult.Outcome.SKIPPED;
    };
  }

  /**
   * Returns the failure of a list of checks, as {@link Pipeline#start()} throws it: the failed
   * check's own failure when one failed; when several failed, one exception of the first one's kind
   * whose description names every failed check with its description and detail ({@code 2 preflight
   * checks failed: (1) replication privilege: ...; (2) state store: ...}), the first failure as its
   * cause and the others suppressed in it.
   *
   * @param checks the results of {@link #run}
   * @return the failure, or empty when no check failed
   */
  public static Optional<EtlException> failure(List<Check> checks) {
    List<CheckResult> results = new ArrayList<>(checks.size());
    for (Check c : checks) {
      results.add(new CheckResult(c.name(), outcome(c.status()), c.summary(), c.failure()));
    }
    return CheckResult.failureOf(results);
  }
}
