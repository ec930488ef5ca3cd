package org.pgetl.destination.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.pgetl.destination.TableCopyWrite;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.TableName;

class CopyFinishTest {
  private static final UUID ATTEMPT = UUID.fromString("00000000-0000-0000-0000-000000000001");
  private static final UUID LATER = UUID.fromString("00000000-0000-0000-0000-000000000002");

  @Test
  void aWriteOfTheCurrentAttemptIsNotAbandoned() {
    assertThat(CopyFinish.isAbandoned(ATTEMPT, ATTEMPT)).isFalse();
  }

  @Test
  void aWriteOfAnotherAttemptThanTheCurrentOneIsAbandoned() {
    assertThat(CopyFinish.isAbandoned(LATER, ATTEMPT)).isTrue();
  }

  @Test
  void noRecordedAttemptAbandonsNothing() {
    assertThat(CopyFinish.isAbandoned(null, ATTEMPT)).isFalse();
  }

  @Test
  void aFinishCountingTheStoredBatchesPasses() {
    TableCopyWrite.Finish finish = new TableCopyWrite.Finish(ATTEMPT, 3, 10);
    assertThatCode(
            () ->
                CopyFinish.requireAllBatches(
                    new TableName("public", "t"), finish, 3, "the mirror", "mirror"))
        .doesNotThrowAnyException();
  }

  @Test
  void aFinishCountingMoreBatchesThanStoredFails() {
    TableCopyWrite.Finish finish = new TableCopyWrite.Finish(ATTEMPT, 3, 10);
    assertThatThrownBy(
            () ->
                CopyFinish.requireAllBatches(
                    new TableName("public", "t"), finish, 2, "the mirror", "mirror"))
        .isInstanceOfSatisfying(
            EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.DESTINATION_ERROR))
        .hasMessageContaining("ends with 3 batches, but the mirror stored 2");
  }
}
