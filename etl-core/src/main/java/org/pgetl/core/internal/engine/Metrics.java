package org.pgetl.core.internal.engine;

import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;

/** Builds the metrics binding of a pipeline. */
public final class Metrics {
  private Metrics() {}

  /**
   * Returns metrics reported to a Micrometer registry.
   *
   * @param registry an {@code io.micrometer.core.instrument.MeterRegistry}
   * @param pipelineId the pipeline id tag
   * @param destination the destination tag
   * @return the metrics
   * @throws EtlException of kind {@code CONFIG_ERROR} when Micrometer is missing or the object is
   *     not a registry
   */
  public static EngineMetrics micrometer(Object registry, String pipelineId, String destination) {
    try {
      Class.forName("io.micrometer.core.instrument.MeterRegistry");
    } catch (ClassNotFoundException e) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "a meter registry was given but Micrometer is not on the classpath",
          "add io.micrometer:micrometer-core");
    }
    return MicrometerMetrics.create(registry, pipelineId, destination);
  }
}
