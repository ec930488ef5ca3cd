package org.pgetl.kafka.connect;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;
import org.jspecify.annotations.Nullable;
import org.pgetl.PgConnectionConfig;
import org.pgetl.core.internal.pg.SlotNames;
import org.pgetl.model.Lsn;
import org.pgetl.model.ReplicatedTableSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The position of a table's copy read from its table-sync slot in {@code pg_replication_slots}:
 * while the copy runs, the slot's {@code confirmed_flush_lsn} is still its consistent point (the
 * LSN of the copy's snapshot; the slot only moves in the catch-up after the copy), and its {@code
 * catalog_xmin} is what Debezium's {@code source.xmin} reports for its own slot.
 *
 * <p>One short connection and one query per table copy attempt, on the copy thread that delivers
 * the attempt's first batch. When the slot cannot be read, the records carry no LSN rather than
 * failing the copy.
 */
final class CopySlotPositions implements RecordMapper.CopyPositions {
  private static final Logger LOG = LoggerFactory.getLogger(CopySlotPositions.class);

  private final PgConnectionConfig source;
  private final String pipelineId;

  CopySlotPositions(PgConnectionConfig source, String pipelineId) {
    this.source = source;
    this.pipelineId = pipelineId;
  }

  @Override
  public RecordMapper.@Nullable CopyPosition of(ReplicatedTableSchema table) {
    String slot = SlotNames.tableSync(pipelineId, table.id());
    Properties props = new Properties();
    props.setProperty("user", source.user());
    if (source.password() != null) {
      props.setProperty("password", source.password());
    }
    props.setProperty("ApplicationName", "pgetl_copy_position_" + pipelineId);
    try (Connection c = DriverManager.getConnection(source.jdbcUrl(), props);
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT confirmed_flush_lsn::text, catalog_xmin::text::bigint"
                    + " FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || rs.getString(1) == null) {
          LOG.info(
              "pipeline {}: copy slot {} of {} not found (a table copied in chunks has none): its"
                  + " copied rows carry no lsn",
              pipelineId,
              slot,
              table.name());
          return null;
        }
        long xmin = rs.getLong(2);
        return new RecordMapper.CopyPosition(
            Lsn.parse(rs.getString(1)), rs.wasNull() ? null : xmin);
      }
    } catch (SQLException | RuntimeException e) {
      LOG.warn(
          "pipeline {}: could not read copy slot {} of {}: {}; its copied rows carry no lsn",
          pipelineId,
          slot,
          table.name(),
          e.getMessage());
      return null;
    }
  }
}
