package org.pgetl.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a JUnit 5 test class its own fresh database on the shared test server, through {@link
 * PostgresExtension}.
 *
 * <pre>{@code
 * @WithPostgres
 * @Timeout(60)
 * class OrdersIT {
 *   @Test
 *   void copies(TestDatabase db) {
 *     db.execute("CREATE TABLE orders (id bigint PRIMARY KEY)");
 *     ...
 *   }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(PostgresExtension.class)
public @interface WithPostgres {}
