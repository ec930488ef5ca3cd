package org.pgetl.kafka.connect;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * The pgetl source connector: replicates PostgreSQL publications into Kafka, one pipeline per
 * publication, each run by one {@link PgetlSourceTask}; Connect places the tasks on its workers.
 *
 * <p>Settings are listed in {@link PgetlConnectorConfig} and {@code docs/kafka-connect.md}. The
 * connector itself holds no connection: it checks the settings and hands each task its publication.
 */
public final class PgetlSourceConnector extends SourceConnector {
  private Map<String, String> props;
  private PgetlConnectorConfig config;

  /** Creates the connector; Connect calls {@link #start(Map)} next. */
  public PgetlSourceConnector() {}

  /**
   * Returns the connector's version, the jar's version.
   *
   * @return the version
   */
  @Override
  public String version() {
    return Version.get();
  }

  /**
   * Checks the settings as the pipelines will.
   *
   * @param props the connector's properties
   * @throws ConfigException with the first problem, in the words of {@code PipelineConfig}
   */
  @Override
  public void start(Map<String, String> props) {
    this.props = new HashMap<>(props);
    this.config = new PgetlConnectorConfig(props);
    config.requireValid(tasksMax(props));
  }

  /**
   * Returns {@link PgetlSourceTask}.
   *
   * @return the task class
   */
  @Override
  public Class<? extends Task> taskClass() {
    return PgetlSourceTask.class;
  }

  /**
   * Returns one task configuration per publication.
   *
   * @param maxTasks {@code tasks.max}; at least the number of publications
   * @return the task configurations
   * @throws ConfigException when {@code tasks.max} is smaller than the number of publications
   */
  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    List<PgetlConnectorConfig.PipelineSpec> specs = config.pipelines();
    if (maxTasks < specs.size()) {
      throw new ConfigException(
          "tasks.max must be >= the number of publications ("
              + specs.size()
              + "): one task runs one pipeline, was "
              + maxTasks);
    }
    List<Map<String, String>> tasks = new ArrayList<>();
    for (PgetlConnectorConfig.PipelineSpec spec : specs) {
      Map<String, String> task = new HashMap<>(props);
      task.put(PgetlConnectorConfig.TASK_PUBLICATION, spec.publication());
      task.put(PgetlConnectorConfig.TASK_PIPELINE_ID, spec.pipelineId());
      tasks.add(task);
    }
    return tasks;
  }

  /** Nothing to release: the tasks hold the pipelines. */
  @Override
  public void stop() {}

  /**
   * Returns the connector's keys.
   *
   * @return {@link PgetlConnectorConfig#CONFIG_DEF}
   */
  @Override
  public ConfigDef config() {
    return PgetlConnectorConfig.CONFIG_DEF;
  }

  /**
   * Checks the keys' types, then every value as the pipelines will ({@code PipelineConfig}'s
   * messages, on the key they concern).
   *
   * @param connectorConfigs the properties to check
   * @return each key's value and errors
   */
  @Override
  public Config validate(Map<String, String> connectorConfigs) {
    Config typed = super.validate(connectorConfigs);
    boolean typeErrors = typed.configValues().stream().anyMatch(v -> !v.errorMessages().isEmpty());
    if (typeErrors) {
      return typed;
    }
    Map<String, List<String>> errors;
    try {
      errors = new PgetlConnectorConfig(connectorConfigs).check(tasksMax(connectorConfigs));
    } catch (ConfigException e) {
      errors = Map.of(PgetlConnectorConfig.PIPELINE_ID, List.of(e.getMessage()));
    }
    for (ConfigValue value : typed.configValues()) {
      for (String message : errors.getOrDefault(value.name(), List.of())) {
        value.addErrorMessage(message);
      }
    }
    List<String> tasksMax = errors.get("tasks.max");
    if (tasksMax != null) {
      ConfigValue publications =
          typed.configValues().stream()
              .filter(v -> v.name().equals(PgetlConnectorConfig.PUBLICATIONS))
              .findFirst()
              .orElseThrow();
      tasksMax.forEach(publications::addErrorMessage);
    }
    return typed;
  }

  /**
   * Returns {@code SUPPORTED}: on a worker with {@code exactly.once.source.support=enabled} and
   * with {@code transaction.boundary=connector}, a table's copy is one producer transaction and the
   * streams' records are committed with their offsets, so a {@code read_committed} consumer sees
   * each change once (see {@code docs/kafka-connect.md} for the window that remains).
   *
   * @param connectorConfig the configuration
   * @return {@link ExactlyOnceSupport#SUPPORTED}
   */
  @Override
  public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
    return ExactlyOnceSupport.SUPPORTED;
  }

  /**
   * Returns {@code SUPPORTED}: the task requests each commit through Connect's {@code
   * TransactionContext}, never while a table's copy is partly sent.
   *
   * @param connectorConfig the configuration
   * @return {@link ConnectorTransactionBoundaries#SUPPORTED}
   */
  @Override
  public ConnectorTransactionBoundaries canDefineTransactionBoundaries(
      Map<String, String> connectorConfig) {
    return ConnectorTransactionBoundaries.SUPPORTED;
  }

  private static int tasksMax(Map<String, String> props) {
    String v = props.get("tasks.max");
    if (v == null) {
      return 0;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
