/**
 * Examples of using pgetl: {@link org.pgetl.examples.EmbeddingExample} (the smallest embedding,
 * quoted in the README), the command line in {@code org.pgetl.examples.cli} and example
 * destinations in {@code org.pgetl.examples.destination}.
 */
@NullMarked
package org.pgetl.examples;

import org.jspecify.annotations.NullMarked;
