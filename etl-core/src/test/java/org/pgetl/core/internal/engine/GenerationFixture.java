package org.pgetl.core.internal.engine;

import java.lang.reflect.Proxy;
import org.pgetl.PipelineConfig;
import org.pgetl.Shutdown;
import org.pgetl.core.internal.apply.SpoolFolder;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.core.internal.pg.PgConnector;
import org.pgetl.core.internal.sync.TableStateMachine;
import org.pgetl.core.internal.sync.TableSyncWorker;
import org.pgetl.core.internal.time.Ticker;
import org.pgetl.destination.Destination;
import org.pgetl.store.PipelineStore;

/**
 * A generation's context without a running engine, for unit tests of the parts that share it (the
 * sync pool, the apply stream's role): no server is contacted until a part connects.
 */
public final class GenerationFixture {
  private GenerationFixture() {}

  /**
   * Returns the context of a generation over {@code store}; its destination fails every call.
   *
   * @param config the pipeline's configuration
   * @param store the store
   * @param ticker where the generation reads time
   * @return the context
   */
  public static EngineContext context(PipelineConfig config, PipelineStore store, Ticker ticker) {
    return new EngineContext(
        config,
        store,
        refusingDestination(),
        EngineMetrics.NONE,
        new Shutdown(),
        new PgConnector(config.source()),
        new TableStateMachine(store),
        new StopSignal(ticker),
        new StreamSettings(2, false, StreamingMode.OFF, false),
        new ErrorLog(),
        new StatusBoard(ticker),
        new SpoolFolder(config),
        ticker,
        TableSyncWorker::runFor);
  }

  private static Destination refusingDestination() {
    return (Destination)
        Proxy.newProxyInstance(
            Destination.class.getClassLoader(),
            new Class<?>[] {Destination.class},
            (proxy, method, args) -> {
              if (method.getName().equals("name")) {
                return "refusing";
              }
              if (method.getName().equals("toString")) {
                return "refusing destination";
              }
              throw new UnsupportedOperationException("no destination call expected: " + method);
            });
  }
}
