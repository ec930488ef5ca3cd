package org.pgetl.testkit;

import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A JUnit 5 extension that gives each test class its own fresh database on the shared test server
 * ({@link EmbeddedPostgres#shared()}).
 *
 * <p>The database ({@code pgetl_test_<random>}) is created before the class and injected as a
 * {@link TestDatabase} parameter into constructors, {@code @BeforeAll}, {@code @BeforeEach} and
 * test methods; {@link PostgresServer} parameters get the shared server. {@code @Nested} classes
 * share the database of their outermost class. After the class, its sessions and walsenders are
 * terminated, its replication slots dropped and the database dropped; a failure there fails the
 * class. Register it with {@link WithPostgres} or {@code @ExtendWith(PostgresExtension.class)}.
 */
public final class PostgresExtension implements BeforeAllCallback, ParameterResolver {
  /** The prefix of every database the extension creates. */
  public static final String DATABASE_PREFIX = "pgetl_test_";

  private static final Logger log = LoggerFactory.getLogger(PostgresExtension.class);
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(PostgresExtension.class);
  private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

  /** Creates the extension (JUnit does, through {@link WithPostgres}). */
  public PostgresExtension() {}

  /**
   * Creates the class's database before its first {@code @BeforeAll} method runs.
   *
   * @param context the class context
   */
  @Override
  public void beforeAll(ExtensionContext context) {
    database(context);
  }

  /**
   * Tells whether a parameter is a {@link TestDatabase} or a {@link PostgresServer}.
   *
   * @param parameterContext the parameter
   * @param extensionContext the context
   * @return true for the two types this extension provides
   */
  @Override
  public boolean supportsParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    return type == TestDatabase.class || type == PostgresServer.class;
  }

  /**
   * Provides the class's database or the shared server.
   *
   * @param parameterContext the parameter
   * @param extensionContext the context
   * @return the {@link TestDatabase} or the {@link PostgresServer}
   */
  @Override
  public Object resolveParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    if (parameterContext.getParameter().getType() == PostgresServer.class) {
      return EmbeddedPostgres.shared();
    }
    return database(extensionContext);
  }

  /**
   * Returns the database of the test class of a context, creating it on first use.
   *
   * @param context any context inside the test class
   * @return the class's database
   */
  public static TestDatabase database(ExtensionContext context) {
    ExtensionContext owner = outermostClass(context);
    return owner
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent("database", key -> ClassDatabase.create(owner), ClassDatabase.class)
        .database();
  }

  private static ExtensionContext outermostClass(ExtensionContext context) {
    ExtensionContext c = context;
    while (c.getParent().isPresent() && c.getParent().get().getTestClass().isPresent()) {
      c = c.getParent().get();
    }
    return c;
  }

  static String randomDatabaseName() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    StringBuilder sb = new StringBuilder(DATABASE_PREFIX);
    for (int i = 0; i < 10; i++) {
      sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
    }
    return sb.toString();
  }

  /** The database of one test class; JUnit closes it when the class's context ends. */
  static final class ClassDatabase implements AutoCloseable {
    private final TestDatabase database;
    private final String testClass;

    private ClassDatabase(TestDatabase database, String testClass) {
      this.database = database;
      this.testClass = testClass;
    }

    static ClassDatabase create(ExtensionContext owner) {
      PostgresServer server = EmbeddedPostgres.shared();
      String name = randomDatabaseName();
      server.createDatabase(name);
      String testClass = owner.getTestClass().map(Class::getName).orElse(owner.getDisplayName());
      log.debug("created database {} for {}", name, testClass);
      return new ClassDatabase(new TestDatabase(server, name), testClass);
    }

    TestDatabase database() {
      return database;
    }

    @Override
    public void close() {
      database.server().dropDatabase(database.name());
      log.debug("dropped database {} of {}", database.name(), testClass);
    }
  }
}
