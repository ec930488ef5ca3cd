package org.pgetl.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.pgetl.model.TableId;
import org.pgetl.store.PipelineStore.TableRequest;

/** The memory store stamps what it records with the clock it was given. */
class MemoryStoreClockTest {
  private static final Instant T0 = Instant.parse("2026-05-04T10:00:00Z");

  @Test
  void requestsLifecycleChangesAndLeasesCarryTheTimeOfTheGivenClock() {
    MutableClock clock = new MutableClock(T0);
    MemoryStore store = new MemoryStore("clocked", clock);

    TableRequest r =
        store.requestTableAction(new TableId(16_384), TableRequest.Action.RESYNC, "ops");
    assertThat(r.requestedAt()).isEqualTo(T0);

    clock.advance(Duration.ofMinutes(2));
    store.setLifecycleAsOperator("dest", "paused", "maintenance", "ops");
    assertThat(store.readLifecycle("dest").orElseThrow().updatedAt())
        .isEqualTo(T0.plus(Duration.ofMinutes(2)));

    clock.advance(Duration.ofMinutes(3));
    PipelineStore.Lease lease = store.lease("instance-a");
    assertThat(lease.tryAcquire()).contains(1L);
    assertThat(lease.holder().orElseThrow().since()).isEqualTo(T0.plus(Duration.ofMinutes(5)));
  }

  /** A clock a test moves by hand. */
  private static final class MutableClock extends Clock {
    private Instant now;

    MutableClock(Instant start) {
      this.now = start;
    }

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
