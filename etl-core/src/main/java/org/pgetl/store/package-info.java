/**
 * The store SPI: what a pipeline persists ({@link org.pgetl.store.PipelineStore}), the table states
 * it moves through ({@link org.pgetl.store.TableState}), and {@link org.pgetl.store.MemoryStore}.
 */
package org.pgetl.store;
