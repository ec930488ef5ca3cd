/**
 * The per-destination operator lifecycle (active, paused, draining, retired) that a running
 * pipeline follows live.
 */
package org.pgetl.lifecycle;
