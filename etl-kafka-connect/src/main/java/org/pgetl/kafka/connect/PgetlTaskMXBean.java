package org.pgetl.kafka.connect;

/**
 * What a running {@link PgetlSourceTask} reports over JMX, under {@code
 * org.pgetl.kafka.connect:type=task,pipeline=<id>,instance=<n>}: what it holds for Kafka and its
 * pipeline's phase.
 */
public interface PgetlTaskMXBean {
  /**
   * Returns the task's pipeline id.
   *
   * @return the pipeline id
   */
  String getPipelineId();

  /**
   * Returns the pipeline's phase ({@code STANDBY} while another task holds the pipeline's lease).
   *
   * @return the phase
   */
  String getPhase();

  /**
   * Returns the estimated bytes of rows whose records are queued for Connect or sent and not yet
   * acknowledged by Kafka.
   *
   * @return the bytes held
   */
  long getHeldBytes();

  /**
   * Returns the most bytes held at once since the task started.
   *
   * @return the peak of {@link #getHeldBytes()}
   */
  long getMaxHeldBytes();

  /**
   * Returns the records queued for Connect or sent and not yet acknowledged.
   *
   * @return the records held
   */
  long getHeldRecords();

  /**
   * Returns the records Kafka acknowledged since the task started.
   *
   * @return the acknowledged records
   */
  long getAcknowledgedRecords();

  /**
   * Returns the writes waiting for {@code poll()}.
   *
   * @return the queued writes
   */
  int getQueuedWrites();

  /**
   * Returns the number of row changes read again after a restart and dropped because Connect's
   * committed offset shows Kafka holds them.
   *
   * @return the dropped changes
   */
  long getDroppedEvents();
}
