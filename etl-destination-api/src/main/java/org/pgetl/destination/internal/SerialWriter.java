package org.pgetl.destination.internal;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.pgetl.destination.AsyncResult;
import org.pgetl.error.EtlException;

/**
 * One named thread that runs a destination's writes one at a time, in submission order, and answers
 * each write's {@link AsyncResult}: {@code durable()} when the write returns, {@code fail(e)} when
 * it throws, {@code shutdown()} when it throws {@link Abandoned}.
 *
 * <p>Destination methods hand their work to {@link #submit} and return at once, so the engine's
 * threads never wait for I/O. Because writes run in submission order, an empty durability barrier
 * submitted behind other writes is answered only after they are done.
 *
 * <p>Created with more than one thread, it is a fixed pool instead: writes start in submission
 * order but run concurrently, so nothing orders two writes; use it for independent work only (copy
 * batches).
 *
 * <p>Shutdown policy: {@link #close(Duration)} lets the write that is running finish, answers every
 * write that has not started yet with {@code shutdown()}, and refuses later submissions the same
 * way. (The engine calls {@code Destination.shutdown()} after every write was answered or
 * abandoned, so normally nothing is left in the queue.)
 */
public final class SerialWriter {
  /** A write: returns normally when its data is durable, throws otherwise. */
  public interface Write {
    /**
     * Performs the write.
     *
     * @throws Exception when the write failed
     */
    void run() throws Exception;
  }

  /**
   * Thrown by a write to answer it {@code shutdown()} instead of failing it: the destination
   * abandons the work (the pipeline stops without a table error and delivers it again at its next
   * start).
   */
  public static final class Abandoned extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the signal.
     *
     * @param reason why the work is abandoned
     */
    public Abandoned(String reason) {
      super(reason, null, false, false);
    }
  }

  private final ExecutorService thread;
  private final Function<Exception, EtlException> errorMapper;
  private volatile boolean closing;

  /**
   * Starts the writer thread.
   *
   * @param threadName the thread's name, for thread dumps
   * @param errorMapper turns an exception other than {@link EtlException} into the failure answer
   */
  public SerialWriter(String threadName, Function<Exception, EtlException> errorMapper) {
    this.errorMapper = errorMapper;
    this.thread =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts a fixed pool of writer threads, named {@code <threadName>-1} to {@code -<threads>}.
   *
   * @param threadName the threads' name prefix, for thread dumps
   * @param threads how many writes may run at once
   * @param errorMapper turns an exception other than {@link EtlException} into the failure answer
   */
  public SerialWriter(
      String threadName, int threads, Function<Exception, EtlException> errorMapper) {
    this.errorMapper = errorMapper;
    java.util.concurrent.atomic.AtomicInteger count =
        new java.util.concurrent.atomic.AtomicInteger();
    this.thread =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, threadName + "-" + count.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Queues a write; never blocks. The result is answered from the writer thread.
   *
   * @param result the write's answer slot
   * @param write the work
   */
  public void submit(AsyncResult result, Write write) {
    try {
      thread.execute(() -> runOne(result, write));
    } catch (RejectedExecutionException e) {
      result.shutdown(); // submitted after close()
    }
  }

  private void runOne(AsyncResult result, Write write) {
    if (closing) {
      result.shutdown();
      return;
    }
    try {
      write.run();
      result.durable();
    } catch (Abandoned e) {
      result.shutdown();
    } catch (EtlException e) {
      result.fail(e);
    } catch (Exception e) {
      result.fail(errorMapper.apply(e));
    } catch (Error e) {
      result.fail(errorMapper.apply(new RuntimeException(e)));
      throw e;
    }
  }

  /**
   * Stops the writer: the running writes finish, queued writes are answered {@code shutdown()}.
   * Waits at most {@code timeout} for the running writes.
   *
   * @param timeout how long to wait for the running write
   * @return true when the thread ended in time; false when a write was still running (the caller
   *     logs it)
   */
  public boolean close(Duration timeout) {
    closing = true;
    thread.shutdown();
    try {
      if (thread.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        return true;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return false;
  }
}
