/**
 * The store SPI: {@link org.pgetl.store.PipelineStore}, the one interface a store implements
 * (everything a pipeline persists, with the records it trades nested in it), the table states a
 * table moves through ({@link org.pgetl.store.TableState}), and {@link
 * org.pgetl.store.MemoryStore}.
 */
@NullMarked
package org.pgetl.store;

import org.jspecify.annotations.NullMarked;
