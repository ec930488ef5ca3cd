package org.pgetl.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.pgetl.store.PipelineStore;

/** The store contract against {@link PostgresStore} on a real PostgreSQL. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PostgresStoreContractIT extends PipelineStoreContract {
  private static TestPostgres.Database db;

  @BeforeAll
  static void createDatabase() {
    db = TestPostgres.newDatabase("contract");
  }

  @AfterAll
  static void dropDatabase() {
    if (db != null) {
      db.close();
    }
  }

  @Override
  protected PipelineStore openStore(String pipelineId) {
    return db.storeBuilder(pipelineId).build();
  }

  @Override
  protected void writeLifecycleAsOperator(
      PipelineStore store, String destinationName, String rawState) {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO etl.destination_lifecycle"
                    + " (pipeline_id, destination_name, state, reason, updated_by)"
                    + " VALUES (?, ?, ?, 'by hand', 'operator')"
                    + " ON CONFLICT (pipeline_id, destination_name) DO UPDATE"
                    + " SET state = EXCLUDED.state, updated_at = now()")) {
      ps.setString(1, store.pipelineId());
      ps.setString(2, destinationName);
      ps.setString(3, rawState);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
