package org.pgetl.core.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.decode.StreamingMode;
import org.pgetl.core.internal.pg.ServerVersion;

/**
 * The pgoutput protocol a pipeline's streams ask for: streaming (protocol 2) by default from
 * PostgreSQL 14 on, protocol 1 with {@code pgoutputStreaming(false)} and on older servers.
 */
class StreamSettingsDecisionTest {
  private static PipelineConfig.Builder config() {
    return PipelineConfig.builder()
        .pipelineId("p")
        .publication("pub")
        .source(
            PgConnectionConfig.builder()
                .host("db.example")
                .database("shop")
                .user("pgetl")
                .password("s3cret-Passw0rd")
                .build());
  }

  private static StreamSettings decide(PipelineConfig config, int major) {
    // binary stays off, so no catalog is read
    return ApplyWorker.decide(config, ServerVersion.ofMajor(major), null, null);
  }

  @Test
  void theDefaultStreamsLargeTransactionsFromPostgres14On() {
    for (int major : new int[] {14, 15, 16, 17}) {
      StreamSettings s = decide(config().build(), major);
      assertThat(s.protocolVersion()).as("PostgreSQL %d", major).isEqualTo(2);
      assertThat(s.streaming()).as("PostgreSQL %d", major).isEqualTo(StreamingMode.ON);
    }
  }

  @Test
  void streamingOffKeepsProtocol1() {
    StreamSettings s = decide(config().pgoutputStreaming(false).build(), 17);
    assertThat(s.protocolVersion()).isEqualTo(1);
    assertThat(s.streaming()).isEqualTo(StreamingMode.OFF);
  }

  @Test
  void postgres13UsesProtocol1WhateverTheSetting() {
    StreamSettings s = decide(config().build(), 13);
    assertThat(s.protocolVersion()).isEqualTo(1);
    assertThat(s.streaming()).isEqualTo(StreamingMode.OFF);
  }
}
