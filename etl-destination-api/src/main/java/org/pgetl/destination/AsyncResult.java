package org.pgetl.destination;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.pgetl.error.EtlException;

/**
 * The answer slot of one destination call: the destination answers it exactly once, from any
 * thread, at any time after the call; the engine waits for the answer.
 *
 * <p><b>Destination side.</b> Answer with {@link #accepted()}, {@link #durable()}, {@link
 * #fail(EtlException)}, {@link #shutdown()} or the general {@link #send(Outcome)}. The first answer
 * wins; every later one is ignored and returns {@code false}. All methods are thread-safe and never
 * block. What each answer means:
 *
 * <ul>
 *   <li>{@code accepted()}: you own the data but it is not durable yet. The engine keeps the data's
 *       position for a later {@code durable()} and may send more work.
 *   <li>{@code durable()}: this write <em>and every earlier write of the same stream that you
 *       answered {@code accepted()}</em> is durable. The engine then advances its persisted
 *       progress and confirms the position to PostgreSQL, which may then recycle that WAL.
 *   <li>{@code fail(e)}: the work failed; {@code e.kind()} decides whether the engine retries (see
 *       {@link org.pgetl.error.ErrorKind#directive()}).
 *   <li>{@code shutdown()}: you abandon the work because you are shutting down (for example with
 *       the host process). The pipeline stops through the same path as an external shutdown request
 *       and records no error; the next start resumes from its persisted state.
 * </ul>
 *
 * <p>A result that is never answered does not hang the pipeline's shutdown beyond its configured
 * bound, but it stalls the stream it belongs to until then.
 *
 * <p><b>Engine side.</b> {@link #create()}, {@link #outcome()}, {@link #await(Duration)} and {@link
 * #completion()} let the engine (and tests) create results and observe the answer.
 */
// its signatures carry @Nullable of org.jspecify, read at compile time only (requires static)
@SuppressWarnings("exports")
public final class AsyncResult {
  // Answers take effect in one order across all results: the order of this counter, taken under
  // the same lock as the answer itself. The engine compares the orders of two answers to know
  // which the destination gave first, whatever order their callbacks run in.
  private static final Object ANSWER_ORDER_LOCK = new Object();
  private static long lastAnswerOrder;

  private final AtomicReference<Outcome> answer = new AtomicReference<>();
  private final CompletableFuture<Outcome> future = new CompletableFuture<>();
  private volatile long answerOrder;

  private AsyncResult() {}

  /**
   * Creates an unanswered result. Called by the engine (or a test) before each destination call.
   *
   * @return a new result
   */
  public static AsyncResult create() {
    return new AsyncResult();
  }

  /**
   * Answers that the destination owns the data but it is not durable yet.
   *
   * @return true if this was the first answer, false if the result was already answered
   */
  public boolean accepted() {
    return send(Outcome.ACCEPTED);
  }

  /**
   * Answers that this write and every earlier accepted write of the same stream are durable.
   *
   * @return true if this was the first answer, false if the result was already answered
   */
  public boolean durable() {
    return send(Outcome.DURABLE);
  }

  /**
   * Answers that the work failed.
   *
   * @param error why; its kind decides the retry directive
   * @return true if this was the first answer, false if the result was already answered
   */
  public boolean fail(EtlException error) {
    return send(Outcome.failed(error));
  }

  /**
   * Answers that the destination abandons the work because it is shutting down. The pipeline stops
   * cleanly and records no error.
   *
   * @return true if this was the first answer, false if the result was already answered
   */
  public boolean shutdown() {
    return send(Outcome.SHUTDOWN);
  }

  /**
   * Answers with any outcome; the general form of the four methods above, for forwarding.
   *
   * @param outcome the answer
   * @return true if this was the first answer, false if the result was already answered
   */
  public boolean send(Outcome outcome) {
    if (outcome == null) {
      throw new NullPointerException("outcome");
    }
    synchronized (ANSWER_ORDER_LOCK) {
      if (!answer.compareAndSet(null, outcome)) {
        return false;
      }
      answerOrder = ++lastAnswerOrder;
    }
    future.complete(outcome);
    return true;
  }

  /**
   * Returns when this result was answered, relative to every other result of this JVM: of two
   * answered results, the one answered first has the smaller order (the answers of one thread keep
   * their program order; answers of different threads are ordered as they took effect). Called by
   * the engine to apply answers in the order the destination gave them.
   *
   * @return the answer's order, from 1; 0 while unanswered
   */
  public long answerOrder() {
    return answerOrder;
  }

  /**
   * Returns true once the result has been answered.
   *
   * @return whether an answer came
   */
  public boolean isAnswered() {
    return answer.get() != null;
  }

  /**
   * Returns the answer, if one came.
   *
   * @return the outcome, or empty while unanswered
   */
  public Optional<Outcome> outcome() {
    return Optional.ofNullable(answer.get());
  }

  /**
   * Waits for the answer at most {@code timeout}. Called by the engine.
   *
   * @param timeout how long to wait
   * @return the outcome, or empty when none came in time
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public Optional<Outcome> await(Duration timeout) throws InterruptedException {
    Outcome now = answer.get();
    if (now != null) {
      return Optional.of(now);
    }
    try {
      return Optional.of(future.get(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS));
    } catch (TimeoutException e) {
      return Optional.empty();
    } catch (ExecutionException e) {
      throw new IllegalStateException("result future never fails", e);
    }
  }

  /**
   * Returns a stage that completes with the answer, on the answering thread. Called by the engine
   * to be woken without polling; callbacks must be short and must not block.
   *
   * @return the completion stage
   */
  public CompletionStage<Outcome> completion() {
    return future.minimalCompletionStage();
  }

  /**
   * The answer to an {@link AsyncResult}: accepted, durable, failed (with its error) or shutdown.
   *
   * <p>Use the constants and {@link #failed(EtlException)}; switch on {@link #kind()}.
   */
  public static final class Outcome {
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
    private final @Nullable EtlException error;

    private Outcome(Kind kind, @Nullable EtlException error) {
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
    public @Nullable EtlException error() {
      return error;
    }

    @Override
    public boolean equals(@Nullable Object o) {
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

  @Override
  public String toString() {
    Outcome o = answer.get();
    return "AsyncResult[" + (o == null ? "pending" : o) + "]";
  }
}
