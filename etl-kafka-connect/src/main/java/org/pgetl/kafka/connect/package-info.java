/**
 * pgetl as a Kafka Connect source connector: {@link org.pgetl.kafka.connect.PgetlSourceConnector}
 * runs one pipeline per publication, each in one {@link org.pgetl.kafka.connect.PgetlSourceTask},
 * and writes every copied row and change as a record in a Debezium-compatible envelope. Settings:
 * {@link org.pgetl.kafka.connect.PgetlConnectorConfig}; guide: {@code docs/kafka-connect.md}.
 */
@NullMarked
package org.pgetl.kafka.connect;

import org.jspecify.annotations.NullMarked;
