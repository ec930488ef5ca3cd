package org.pgetl.core.internal.engine;

import java.sql.Connection;
import java.sql.SQLException;
import org.pgetl.PgConnectionConfig;
import org.pgetl.PipelineConfig;
import org.pgetl.core.internal.apply.SchemaResolver;
import org.pgetl.core.internal.pg.PgCatalog;
import org.pgetl.core.internal.pg.PgConnector;

/**
 * The engine's stream decisions and schema resolution, for tests of other packages that read a
 * replication stream the way the engine does, without widening the engine's visibility.
 */
public final class EngineStreamParts {
  private EngineStreamParts() {}

  /**
   * Returns the resolver the engine uses for RELATION messages: the catalog completes the schema,
   * non-built-in types are loaded on demand.
   *
   * @param connector connects to the source
   * @param applicationName the catalog connection's {@code application_name}
   * @return the resolver; close it to release its catalog connection
   */
  public static SchemaResolver catalogResolver(PgConnector connector, String applicationName) {
    return new CatalogSchemaResolver(connector, applicationName);
  }

  /**
   * Returns whether the engine would stream a publication with binary tuples when the pipeline asks
   * for them ({@code pgoutputBinary}): the decision of {@code ApplyWorker.decide}.
   *
   * @param source the source database
   * @param publication the publication
   * @return true for binary tuples, false when the engine falls back to text
   */
  public static boolean streamsBinary(PgConnectionConfig source, String publication) {
    PipelineConfig config =
        PipelineConfig.builder()
            .pipelineId("decide")
            .publication(publication)
            .source(source)
            .pgoutputBinary(true)
            .build();
    PgConnector connector = new PgConnector(source);
    try (CatalogSchemaResolver resolver =
            new CatalogSchemaResolver(connector, "pgetl:test:decide");
        Connection admin = connector.openPlain("pgetl:test:decide")) {
      return ApplyWorker.decide(config, new PgCatalog(admin).serverVersion(), admin, resolver)
          .binary();
    } catch (SQLException e) {
      throw new IllegalStateException("closing the decision's connection failed", e);
    }
  }
}
