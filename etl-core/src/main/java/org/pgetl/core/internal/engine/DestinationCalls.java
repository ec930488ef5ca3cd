package org.pgetl.core.internal.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.AsyncResult.Outcome;
import org.pgetl.destination.Destination;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/**
 * The one place where the engine calls a destination and waits for its answer.
 *
 * <ul>
 *   <li>{@link #invoke}: a method that throws is the same as a failed result (an {@link
 *       EtlException} as it is, any other exception as {@code DESTINATION_ERROR}); an {@link Error}
 *       is not caught: it fails the worker, and so the pipeline.
 *   <li>{@link #await}: waits for the answer without polling, woken by the answer or by a stop
 *       request. Once a stop is requested the wait goes on for what is left of the grace period
 *       ({@code shutdownTimeout} from the request): writes in flight may still finish and their
 *       answers count, so a resume never races with a write of the abandoned attempt that is still
 *       being answered. After the grace period the result is abandoned.
 *   <li>{@link #requireDurable}: {@code accepted()} to a write that required {@code durable()} is a
 *       contract violation.
 * </ul>
 */
public final class DestinationCalls {
  private DestinationCalls() {}

  /**
   * Calls the destination with a new result.
   *
   * @param destination the destination
   * @param what the call, for the error ({@code writeTableRows}, ...)
   * @param call the call, given the result to answer
   * @return the result, failed when the call threw
   */
  public static AsyncResult invoke(
      Destination destination, String what, Consumer<AsyncResult> call) {
    AsyncResult result = AsyncResult.create();
    try {
      call.accept(result);
    } catch (EtlException e) {
      result.fail(e);
    } catch (RuntimeException e) {
      result.fail(
          new EtlException(
              ErrorKind.DESTINATION_ERROR,
              "destination " + destination.name() + " threw from " + what,
              e.toString(),
              e));
    }
    return result;
  }

  /**
   * Waits for a result's answer; after a stop request, at most what is left of the grace period.
   *
   * @param result the pending result
   * @param stop the generation's stop signal
   * @param grace the grace period a stop gives writes in flight ({@code shutdownTimeout})
   * @return the answer, or empty when a stop was requested and no answer came within the grace
   *     period (or the thread was interrupted)
   */
  public static Optional<Outcome> await(AsyncResult result, StopSignal stop, Duration grace) {
    Optional<Outcome> now = result.outcome();
    if (now.isPresent()) {
      return now;
    }
    CompletableFuture<Void> wake = new CompletableFuture<>();
    result.completion().thenRun(() -> wake.complete(null));
    Runnable unregister = stop.onRequest(() -> wake.complete(null));
    try {
      if (!stop.isRequested()) {
        wake.get();
      }
      now = result.outcome();
      if (now.isPresent() || stop.mode() == StopSignal.Mode.FENCED) {
        return now; // a fenced instance waits for nothing: another one is taking over
      }
      return result.await(stop.graceLeft(grace));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return result.outcome();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the wake-up future never fails", e);
    } finally {
      unregister.run();
    }
  }

  /**
   * Checks an answer against the durability the write asked for.
   *
   * @param outcome the answer
   * @param required the durability the write asked for
   * @param what the write, for the error
   * @throws EtlException of kind {@code DESTINATION_CONTRACT_VIOLATION} for {@code accepted()} to a
   *     write that required {@code durable()}
   */
  public static void requireDurable(Outcome outcome, WriteDurability required, String what) {
    if (required == WriteDurability.REQUIRE_DURABLE && outcome.kind() == Outcome.Kind.ACCEPTED) {
      throw new EtlException(
          ErrorKind.DESTINATION_CONTRACT_VIOLATION,
          "destination answered accepted() to " + what + ", which required durable()",
          "answer durable() (or fail) to writes sent with REQUIRE_DURABLE and to the copy's Finish"
              + " barrier: they confirm everything accepted before them");
    }
  }
}
