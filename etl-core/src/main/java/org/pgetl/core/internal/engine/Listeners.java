package org.pgetl.core.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.pgetl.PipelineListener;
import org.pgetl.PipelineStatus;
import org.pgetl.error.EtlException;
import org.pgetl.lifecycle.LifecycleState;
import org.pgetl.model.TableId;
import org.pgetl.model.TableName;
import org.pgetl.store.TableState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers the pipeline's events to its {@link PipelineListener}s, in order, on one daemon thread
 * of their own ({@code pgetl-events-<pipeline>}), so that no worker ever runs listener code. The
 * queue is unbounded: events are rare (state changes, errors), never per row.
 */
public final class Listeners {
  private static final Logger LOG = LoggerFactory.getLogger(Listeners.class);

  private final String pipelineId;
  private final List<PipelineListener> listeners = new CopyOnWriteArrayList<>();
  private final ExecutorService thread;

  /**
   * Creates the dispatcher of a pipeline.
   *
   * @param pipelineId the pipeline's id, for the thread's name and the log
   */
  public Listeners(String pipelineId) {
    this.pipelineId = pipelineId;
    ThreadPoolExecutor t =
        new ThreadPoolExecutor(
            1,
            1,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread th = new Thread(r, "pgetl-events-" + pipelineId);
              th.setDaemon(true);
              return th;
            });
    t.allowCoreThreadTimeOut(true);
    this.thread = t;
  }

  /**
   * Adds a listener.
   *
   * @param listener the listener
   */
  public void add(PipelineListener listener) {
    listeners.add(listener);
  }

  void tableStateChanged(
      TableId table, @Nullable TableName name, @Nullable TableState from, @Nullable TableState to) {
    post(l -> l.tableStateChanged(table, name, from, to));
  }

  void errorRecorded(EtlException error) {
    post(l -> l.errorRecorded(error));
  }

  void lifecycleChanged(@Nullable LifecycleState from, LifecycleState to) {
    post(l -> l.lifecycleChanged(from, to));
  }

  void phaseChanged(PipelineStatus.Phase from, PipelineStatus.Phase to) {
    post(l -> l.phaseChanged(from, to));
  }

  /** Posts the last event and lets the thread end once every event was delivered (bounded). */
  void stopped(Optional<EtlException> failure, Duration wait) {
    post(l -> l.stopped(failure));
    thread.shutdown();
    try {
      thread.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void post(Consumer<PipelineListener> event) {
    if (listeners.isEmpty()) {
      return;
    }
    try {
      thread.execute(
          () -> {
            for (PipelineListener l : listeners) {
              try {
                event.accept(l);
              } catch (RuntimeException e) {
                LOG.warn(
                    "pipeline {}: a pipeline listener failed: {}", pipelineId, e.toString(), e);
              }
            }
          });
    } catch (RejectedExecutionException e) {
      LOG.debug("pipeline {}: event after the stop not delivered", pipelineId);
    }
  }
}
