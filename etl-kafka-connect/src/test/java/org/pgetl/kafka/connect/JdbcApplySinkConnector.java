package org.pgetl.kafka.connect;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A plain-JDBC sink for tests: it applies records unwrapped by Debezium's {@code
 * ExtractNewRecordState} to one PostgreSQL table, as a JDBC sink does: a value upserts the row by
 * its key column, a tombstone deletes it. A field holding the {@code placeholder} (an unchanged
 * TOAST value) is left out of the upsert, so the row keeps what it had.
 */
public final class JdbcApplySinkConnector extends SinkConnector {
  static final String URL = "apply.url";
  static final String USER = "apply.user";
  static final String PASSWORD = "apply.password";
  static final String TABLE = "apply.table";
  static final String KEY = "apply.key";
  static final String PLACEHOLDER = "apply.placeholder";

  private Map<String, String> props = Map.of();

  @Override
  public void start(Map<String, String> props) {
    this.props = Map.copyOf(props);
  }

  @Override
  public Class<? extends Task> taskClass() {
    return ApplyTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    return List.of(props);
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return new ConfigDef();
  }

  @Override
  public String version() {
    return "test";
  }

  /** Applies the records in order, one database transaction per {@code put}. */
  public static final class ApplyTask extends SinkTask {
    private Connection connection;
    private String table;
    private String key;
    private String placeholder;

    @Override
    public String version() {
      return "test";
    }

    @Override
    public void start(Map<String, String> props) {
      table = props.get(TABLE);
      key = props.get(KEY);
      placeholder = props.getOrDefault(PLACEHOLDER, "");
      try {
        connection =
            DriverManager.getConnection(props.get(URL), props.get(USER), props.get(PASSWORD));
        connection.setAutoCommit(false);
      } catch (SQLException e) {
        throw new ConnectException(e);
      }
    }

    @Override
    public void put(Collection<SinkRecord> records) {
      try {
        for (SinkRecord r : records) {
          Object id = ((Struct) r.key()).get(key);
          if (r.value() == null) {
            try (PreparedStatement ps =
                connection.prepareStatement("DELETE FROM " + table + " WHERE " + key + " = ?")) {
              ps.setObject(1, id);
              ps.executeUpdate();
            }
            continue;
          }
          Struct row = (Struct) r.value();
          List<String> columns = new ArrayList<>();
          List<Object> values = new ArrayList<>();
          for (Field f : row.schema().fields()) {
            Object v = row.get(f);
            if (f.name().startsWith("__") || (!placeholder.isEmpty() && placeholder.equals(v))) {
              continue;
            }
            columns.add(f.name());
            values.add(v);
          }
          StringBuilder sql = new StringBuilder("INSERT INTO " + table + " (");
          sql.append(String.join(", ", columns)).append(") VALUES (");
          sql.append("?, ".repeat(columns.size() - 1)).append("?) ON CONFLICT (").append(key);
          List<String> sets = new ArrayList<>();
          for (String c : columns) {
            if (!c.equals(key)) {
              sets.add(c + " = EXCLUDED." + c);
            }
          }
          sql.append(
              sets.isEmpty() ? ") DO NOTHING" : ") DO UPDATE SET " + String.join(", ", sets));
          try (PreparedStatement ps = connection.prepareStatement(sql.toString())) {
            for (int i = 0; i < values.size(); i++) {
              ps.setObject(i + 1, values.get(i));
            }
            ps.executeUpdate();
          }
        }
        connection.commit();
      } catch (SQLException e) {
        throw new ConnectException(e);
      }
    }

    @Override
    public void stop() {
      try {
        if (connection != null) {
          connection.close();
        }
      } catch (SQLException e) {
        throw new ConnectException(e);
      }
    }
  }
}
