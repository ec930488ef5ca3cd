package org.pgetl.testkit.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.pgetl.destination.AsyncResult;
import org.pgetl.destination.Destination;
import org.pgetl.destination.StreamId;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.destination.WriteDurability;
import org.pgetl.error.ErrorKind;
import org.pgetl.model.Event;
import org.pgetl.model.EventSequenceKey;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.UpdatedRow;
import org.pgetl.testkit.destination.DestinationOperation;
import org.pgetl.testkit.destination.FaultyDestination;
import org.pgetl.testkit.destination.ForwardingDestination;
import org.pgetl.testkit.destination.RecordingDestination;

/**
 * Deliberately broken destinations, each run through the conformance kit by {@link
 * ConformanceKitCatchesBrokenDestinationsTest} to show that the kit's checks fail. Not run on their
 * own (the class names do not end in {@code Test}).
 */
final class BrokenDestinations {
  private BrokenDestinations() {}

  /** Forwards every call to a recording destination; subclasses break one thing. */
  static class Forwarding extends ForwardingDestination {
    final RecordingDestination recording;

    Forwarding(RecordingDestination recording) {
      super(recording);
      this.recording = recording;
    }

    @Override
    public String name() {
      return "broken";
    }
  }

  /** A kit run whose contents come from the recording behind any wrapper. */
  abstract static class Kit extends DestinationConformanceTests<Destination> {
    RecordingDestination recording;

    abstract Destination wrap(RecordingDestination recording);

    RecordingDestination newRecording() {
      return RecordingDestination.create();
    }

    @Override
    protected Destination newDestination() {
      recording = newRecording();
      return wrap(recording);
    }

    @Override
    protected List<List<Object>> contents(Destination destination, ReplicatedTableSchema table) {
      return recording.rows(table.id());
    }

    @Override
    protected Duration answerTimeout() {
      return Duration.ofMillis(500);
    }
  }

  /**
   * Answers every events write twice, {@code accepted()} then {@code durable()}, thinking the
   * second answer upgrades the first; the first wins.
   */
  static final class AnswersTwice extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      return new Forwarding(r) {
        @Override
        public void writeEvents(
            StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
          AsyncResult inner = AsyncResult.create();
          recording.writeEvents(stream, events, durability, inner);
          result.accepted();
          result.durable();
        }
      };
    }
  }

  /** Answers copy batches {@code accepted()}, and also the Finish barrier. */
  static final class AcceptsFinish extends Kit {
    @Override
    RecordingDestination newRecording() {
      return RecordingDestination.builder()
          .answering(RecordingDestination.Answering.ACCEPTED)
          .build();
    }

    @Override
    Destination wrap(RecordingDestination r) {
      FaultyDestination faulty = FaultyDestination.wrap(r);
      faulty.on(DestinationOperation.FINISH).always().answerAccepted();
      return faulty;
    }
  }

  /** Answers {@code accepted()} to REQUIRE_DURABLE writes. */
  static final class AcceptsRequireDurable extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      FaultyDestination faulty = FaultyDestination.wrap(r);
      faulty
          .on(DestinationOperation.WRITE_EVENTS)
          .matching(c -> c.durability() == WriteDurability.REQUIRE_DURABLE)
          .always()
          .answerAccepted();
      return faulty;
    }
  }

  /** Applies redelivered batches and replayed events again. */
  static final class DuplicatesOnReplay extends Kit {
    @Override
    RecordingDestination newRecording() {
      return RecordingDestination.builder().deduplicate(false).build();
    }

    @Override
    Destination wrap(RecordingDestination r) {
      return r;
    }
  }

  /**
   * Deduplicates events on one greatest sequence key for all tables, which drops the events of a
   * stream that lags behind another.
   */
  static final class DeduplicatesAcrossTables extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      return new Forwarding(r) {
        private EventSequenceKey greatest;

        @Override
        public synchronized void writeEvents(
            StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
          List<Event> fresh = new ArrayList<>();
          for (Event e : events) {
            if (e.table() == null && e.kind() != Event.Kind.TRUNCATE) {
              fresh.add(e);
            } else if (greatest == null || e.sequenceKey().compareTo(greatest) >= 0) {
              fresh.add(e);
              greatest = e.sequenceKey();
            }
          }
          recording.writeEvents(stream, fresh, durability, result);
        }
      };
    }
  }

  /** Never answers the Finish barrier. */
  static final class NeverAnswersFinish extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      FaultyDestination faulty = FaultyDestination.wrap(r);
      faulty.on(DestinationOperation.FINISH).always().neverAnswer();
      return faulty;
    }
  }

  /** Writes events synchronously on a slow path: each call blocks for 300 ms. */
  static final class SlowToReturn extends Kit {
    @Override
    protected Duration callReturnBound() {
      return Duration.ofMillis(100);
    }

    @Override
    Destination wrap(RecordingDestination r) {
      return new Forwarding(r) {
        @Override
        public void writeEvents(
            StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
          long deadline = System.nanoTime() + Duration.ofMillis(300).toNanos();
          for (long left = deadline - System.nanoTime();
              left > 0;
              left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left); // simulates slow, synchronous work
          }
          recording.writeEvents(stream, events, durability, result);
        }
      };
    }
  }

  /** Stores a partial update's missing (unchanged TOAST) columns as null. */
  static final class NullsMissingColumns extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      return new Forwarding(r) {
        @Override
        public void writeEvents(
            StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
          List<Event> out = new ArrayList<>();
          for (Event e : events) {
            if (e instanceof Event.Update u && u.row() instanceof UpdatedRow.Partial p) {
              Object[] values = new Object[p.columnCount()];
              for (int i = 0; i < values.length; i++) {
                values[i] = p.isPresent(i) ? p.get(i) : null;
              }
              out.add(
                  new Event.Update(
                      u.startLsn(),
                      u.commitLsn(),
                      u.txOrdinal(),
                      u.table(),
                      new UpdatedRow.Full(TableRow.of(values)),
                      u.oldRow()));
            } else {
              out.add(e);
            }
          }
          recording.writeEvents(stream, out, durability, result);
        }
      };
    }
  }

  /** Ignores TRUNCATE. */
  static final class IgnoresTruncate extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      return new Forwarding(r) {
        @Override
        public void writeEvents(
            StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
          List<Event> out = new ArrayList<>();
          for (Event e : events) {
            if (e.kind() != Event.Kind.TRUNCATE) {
              out.add(e);
            }
          }
          recording.writeEvents(stream, out, durability, result);
        }
      };
    }
  }

  /** Answers dropTableForCopy without removing anything. */
  static final class KeepsEarlierAttempts extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      return new Forwarding(r) {
        @Override
        public void dropTableForCopy(
            ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
          result.durable();
        }
      };
    }
  }

  /**
   * Applies every copy batch and catch-up write, whatever its attempt: relabels work of an earlier
   * attempt as work of the attempt the last drop named.
   */
  static final class AppliesStaleWork extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      return new Forwarding(r) {
        private final java.util.Map<org.pgetl.model.TableId, UUID> current =
            new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public void dropTableForCopy(
            ReplicatedTableSchema table, UUID attemptId, AsyncResult result) {
          current.put(table.id(), attemptId);
          recording.dropTableForCopy(table, attemptId, result);
        }

        @Override
        public void writeTableRows(
            ReplicatedTableSchema table, TableCopyWrite write, AsyncResult result) {
          UUID attempt = current.get(table.id());
          if (write instanceof TableCopyWrite.Batch b
              && attempt != null
              && !b.id().attemptId().equals(attempt)) {
            write =
                new TableCopyWrite.Batch(
                    new org.pgetl.destination.TableCopyBatchId(
                        attempt, 1_000_000 + b.id().sequence()),
                    b.rows());
          }
          recording.writeTableRows(table, write, result);
        }

        @Override
        public void writeEvents(
            StreamId stream, List<Event> events, WriteDurability durability, AsyncResult result) {
          UUID attempt = stream.table() == null ? null : current.get(stream.table());
          recording.writeEvents(
              attempt == null ? stream : StreamId.tableSync(stream.table(), attempt),
              events,
              durability,
              result);
        }
      };
    }
  }

  /** Abandons every copy batch with {@code shutdown()} although nothing shuts down. */
  static final class AbandonsCopies extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      FaultyDestination faulty = FaultyDestination.wrap(r);
      faulty.on(DestinationOperation.WRITE_TABLE_ROWS).always().answerShutdown();
      return faulty;
    }
  }

  /** Throws from writeEvents. */
  static final class RejectsEvents extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      FaultyDestination faulty = FaultyDestination.wrap(r);
      faulty.on(DestinationOperation.WRITE_EVENTS).always().reject(ErrorKind.DESTINATION_ERROR);
      return faulty;
    }
  }

  /** Loses everything on a restart: the new instance starts with empty storage. */
  static final class ForgetsOnRestart extends Kit {
    @Override
    Destination wrap(RecordingDestination r) {
      return r;
    }

    @Override
    protected Destination restart(Destination previous) {
      recording = RecordingDestination.create();
      return recording;
    }
  }
}
