package org.pgetl.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.Test;
import org.pgetl.PipelineConfig;

class PgetlConnectorConfigTest {
  private static Map<String, String> props() {
    Map<String, String> p = new HashMap<>();
    p.put("connector.class", PgetlSourceConnector.class.getName());
    p.put("tasks.max", "1");
    p.put(
        PgetlConnectorConfig.CONNECTION_URL,
        "jdbc:postgresql://db.example.com:5432/shop?user=pgetl");
    p.put(PgetlConnectorConfig.CONNECTION_PASSWORD, "s3cret");
    p.put(PgetlConnectorConfig.PUBLICATIONS, "shop");
    p.put(PgetlConnectorConfig.PIPELINE_ID, "shop");
    return p;
  }

  private static List<String> errors(Map<String, String> props, String key) {
    Config config = new PgetlSourceConnector().validate(props);
    return config.configValues().stream()
        .filter(v -> v.name().equals(key))
        .findFirst()
        .map(ConfigValue::errorMessages)
        .orElseThrow();
  }

  @Test
  void aValidConfigurationHasNoErrors() {
    Config config = new PgetlSourceConnector().validate(props());
    assertThat(config.configValues()).allSatisfy(v -> assertThat(v.errorMessages()).isEmpty());
  }

  @Test
  void serializedRecordsNeedThePassThroughConvertersOnTheConnector() {
    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.RECORD_ENCODING, "json");
    p.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
    assertThat(errors(p, PgetlConnectorConfig.RECORD_ENCODING))
        .singleElement()
        .asString()
        .contains("key.converter is not set (the worker's)")
        .contains("value.converter is org.apache.kafka.connect.json.JsonConverter")
        .contains(JsonRecordEncoder.BYTE_ARRAY_CONVERTER);
    assertThatThrownBy(() -> new PgetlSourceConnector().start(p))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("record.encoding=json sends records already serialized");

    p.put("key.converter", JsonRecordEncoder.BYTE_ARRAY_CONVERTER);
    p.put("value.converter", JsonRecordEncoder.BYTE_ARRAY_CONVERTER);
    assertThat(errors(p, PgetlConnectorConfig.RECORD_ENCODING)).isEmpty();
    p.put(PgetlConnectorConfig.RECORD_ENCODING, "json-schemas");
    p.put("record.json.decimal.format", "NUMERIC");
    assertThat(errors(p, PgetlConnectorConfig.RECORD_ENCODING)).isEmpty();
    p.put("record.json.decimal.format", "ROMAN");
    assertThat(errors(p, PgetlConnectorConfig.RECORD_ENCODING))
        .singleElement()
        .asString()
        .startsWith("the record.json. settings: ");
    p.put(PgetlConnectorConfig.RECORD_ENCODING, "avro");
    assertThat(errors(p, PgetlConnectorConfig.RECORD_ENCODING)).isNotEmpty();
  }

  @Test
  void valuesAreCheckedWithPipelineConfigsMessagesOnTheirKeys() {
    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.BATCH_MAX_BYTES, "0");
    assertThat(errors(p, PgetlConnectorConfig.BATCH_MAX_BYTES))
        .containsExactly("batch.maxBytes must be > 0, was 0");

    p = props();
    p.put(PgetlConnectorConfig.PIPELINE_ID, "Shop-1");
    assertThat(errors(p, PgetlConnectorConfig.PIPELINE_ID))
        .singleElement()
        .asString()
        .startsWith("pipelineId must be 1-40 characters of [a-z0-9_]");

    p = props();
    p.put(PgetlConnectorConfig.TAKEOVER_DELAY_MS, "1000");
    assertThat(errors(p, PgetlConnectorConfig.TAKEOVER_DELAY_MS))
        .singleElement()
        .asString()
        .startsWith("takeoverDelay must be > 2 x leaseCheckInterval");

    p = props();
    p.put(PgetlConnectorConfig.CONNECTION_URL, "jdbc:postgresql://db:0/shop?user=u");
    assertThat(errors(p, PgetlConnectorConfig.CONNECTION_URL))
        .containsExactly("source.port must be in 1..65535, was 0");
  }

  @Test
  void typesAndModesAreCheckedByTheConfigDef() {
    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.DECIMAL_HANDLING_MODE, "exact");
    assertThat(errors(p, PgetlConnectorConfig.DECIMAL_HANDLING_MODE)).isNotEmpty();
    p = props();
    p.remove(PgetlConnectorConfig.PUBLICATIONS);
    assertThat(errors(p, PgetlConnectorConfig.PUBLICATIONS)).isNotEmpty();
  }

  @Test
  void eachPublicationIsOnePipelineAndOneTask() {
    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.PUBLICATIONS, "orders, customers");
    p.put("tasks.max", "4");
    PgetlSourceConnector connector = new PgetlSourceConnector();
    connector.start(p);
    List<Map<String, String>> tasks = connector.taskConfigs(4);
    assertThat(tasks).hasSize(2);
    assertThat(tasks)
        .extracting(t -> t.get(PgetlConnectorConfig.TASK_PIPELINE_ID))
        .containsExactly("shop_orders", "shop_customers");
    assertThat(tasks)
        .extracting(t -> t.get(PgetlConnectorConfig.TASK_PUBLICATION))
        .containsExactly("orders", "customers");
  }

  @Test
  void fewerTasksThanPublicationsIsRejected() {
    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.PUBLICATIONS, "orders,customers");
    p.put("tasks.max", "1");
    assertThat(errors(p, PgetlConnectorConfig.PUBLICATIONS))
        .containsExactly(
            "tasks.max must be >= the number of publications (2): one task runs one pipeline, was 1");
    assertThatThrownBy(() -> new PgetlSourceConnector().start(p))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("tasks.max must be >= the number of publications");
  }

  @Test
  void thePasswordIsAPasswordAndReachesTheConnectionOnly() {
    PgetlConnectorConfig config = new PgetlConnectorConfig(props());
    assertThat(config.values().get(PgetlConnectorConfig.CONNECTION_PASSWORD).toString())
        .isEqualTo("[hidden]");
    assertThat(config.source().password()).isEqualTo("s3cret");
    assertThat(config.source().toString()).doesNotContain("s3cret");
    PipelineConfig pc = config.pipelineConfig(config.pipelines().get(0), config.source());
    assertThat(pc.toString()).doesNotContain("s3cret");
    assertThat(pc.instanceMode()).isEqualTo(PipelineConfig.InstanceMode.STANDBY);
    assertThat(pc.shutdownTimeout().toMillis())
        .isEqualTo(PgetlConnectorConfig.DEFAULT_SHUTDOWN_TIMEOUT_MS);
  }

  @Test
  void theUserAndPasswordKeysOverrideTheUrl() {
    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.CONNECTION_URL, "jdbc:postgresql://db:5432/shop");
    p.put(PgetlConnectorConfig.CONNECTION_USER, "repl user");
    p.put(PgetlConnectorConfig.CONNECTION_PASSWORD, "p@ss&w=rd%+");
    PgetlConnectorConfig config = new PgetlConnectorConfig(p);
    assertThat(config.source().user()).isEqualTo("repl user");
    assertThat(config.source().password()).isEqualTo("p@ss&w=rd%+");
    assertThat(errors(p, PgetlConnectorConfig.CONNECTION_URL)).isEmpty();
  }

  @Test
  void everyKeyIsDocumented() {
    assertThat(PgetlConnectorConfig.CONFIG_DEF.configKeys().values())
        .allSatisfy(k -> assertThat(k.documentation).isNotBlank());
  }

  @Test
  void failoverSlotsAreAutoAndAMissingSlotFailsUnlessRecopyIsAsked() {
    PgetlConnectorConfig defaults = new PgetlConnectorConfig(props());
    PipelineConfig d = defaults.pipelineConfig(defaults.pipelines().get(0), defaults.source());
    assertThat(d.failoverSlots()).isEqualTo(PipelineConfig.FailoverSlots.AUTO);
    assertThat(d.invalidatedSlotBehavior()).isEqualTo(PipelineConfig.InvalidatedSlotBehavior.FAIL);

    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.FAILOVER_SLOTS, "off");
    p.put(PgetlConnectorConfig.ON_MISSING_SLOT, "recopy");
    PgetlConnectorConfig set = new PgetlConnectorConfig(p);
    PipelineConfig c = set.pipelineConfig(set.pipelines().get(0), set.source());
    assertThat(c.failoverSlots()).isEqualTo(PipelineConfig.FailoverSlots.OFF);
    assertThat(c.invalidatedSlotBehavior())
        .isEqualTo(PipelineConfig.InvalidatedSlotBehavior.RECREATE);

    p.put(PgetlConnectorConfig.FAILOVER_SLOTS, "maybe");
    assertThat(errors(p, PgetlConnectorConfig.FAILOVER_SLOTS)).isNotEmpty();
  }

  @Test
  void pgoutputStreamingFollowsTheLibraryUnlessTurnedOff() {
    PgetlConnectorConfig defaults = new PgetlConnectorConfig(props());
    assertThat(
            defaults
                .pipelineConfig(defaults.pipelines().get(0), defaults.source())
                .pgoutputStreaming())
        .isEqualTo(PipelineConfig.DEFAULT_PGOUTPUT_STREAMING)
        .isTrue();
    Map<String, String> p = props();
    p.put(PgetlConnectorConfig.PGOUTPUT_STREAMING, "false");
    PgetlConnectorConfig off = new PgetlConnectorConfig(p);
    assertThat(off.pipelineConfig(off.pipelines().get(0), off.source()).pgoutputStreaming())
        .isFalse();
  }
}
