/**
 * The {@code pgetl} command line ({@link org.pgetl.examples.cli.Main}): {@code demo} replicates a
 * sample database on an embedded PostgreSQL into DuckDB and verifies the copy; {@code replicate}
 * runs a pipeline against a real database; {@code lifecycle} pauses, resumes or drains a
 * destination. Run it with {@code java -jar etl-examples/target/pgetl-examples.jar}.
 */
@NullMarked
package org.pgetl.examples.cli;

import org.jspecify.annotations.NullMarked;
