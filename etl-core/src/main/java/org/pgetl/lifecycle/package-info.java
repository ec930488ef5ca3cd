/**
 * The per-destination operator lifecycle (active, paused, draining, retired) that a running
 * pipeline follows live.
 */
@NullMarked
package org.pgetl.lifecycle;

import org.jspecify.annotations.NullMarked;
