package org.pgetl.error;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class ErrorKindTest {

  @Test
  void everyKindHasAGroupADirectiveAndAHint() {
    for (ErrorKind kind : ErrorKind.values()) {
      assertThat(kind.group()).as("%s", kind).isNotNull();
      assertThat(kind.directive()).as("%s", kind).isNotNull();
      assertThat(kind.hint()).as("%s", kind).isNotBlank();
    }
  }

  @Test
  void onlyTransientInfrastructureFailuresAreRetriedByThemselves() {
    EnumSet<ErrorKind> timed = EnumSet.noneOf(ErrorKind.class);
    for (ErrorKind kind : ErrorKind.values()) {
      if (kind.directive() == RetryDirective.TIMED) {
        timed.add(kind);
      }
    }
    assertThat(timed)
        .contains(
            ErrorKind.SOURCE_CONNECTION_FAILED,
            ErrorKind.SOURCE_DATABASE_SHUTDOWN,
            ErrorKind.DESTINATION_CONNECTION_FAILED,
            ErrorKind.DESTINATION_TIMEOUT,
            ErrorKind.STATE_STORE_ERROR)
        .doesNotContain(
            ErrorKind.INVALID_DATA,
            ErrorKind.SOURCE_AUTHENTICATION_ERROR,
            ErrorKind.DESTINATION_CONTRACT_VIOLATION,
            ErrorKind.CONFIG_ERROR);
    assertThat(ErrorKind.CONFIG_ERROR.directive()).isEqualTo(RetryDirective.NONE);
  }

  @Test
  void everyGroupHasKinds() {
    for (ErrorKind.Group g : ErrorKind.Group.values()) {
      assertThat(List.of(ErrorKind.values())).anyMatch(k -> k.group() == g);
    }
  }

  @Test
  void exceptionCarriesKindDescriptionDetailAndAggregatesOthers() {
    EtlException first =
        new EtlException(ErrorKind.SOURCE_QUERY_FAILED, "copy failed", "table public.t");
    EtlException second = new EtlException(ErrorKind.DESTINATION_TIMEOUT, "slow");
    assertThat(first.getMessage()).isEqualTo("SOURCE_QUERY_FAILED: copy failed (table public.t)");
    assertThat(first.directive()).isEqualTo(RetryDirective.MANUAL);
    EtlException all = EtlException.aggregate(List.of(first, second));
    assertThat(all).isSameAs(first);
    assertThat(all.kinds())
        .containsExactly(ErrorKind.SOURCE_QUERY_FAILED, ErrorKind.DESTINATION_TIMEOUT);
    assertThat(EtlException.aggregate(List.of())).isNull();
    RuntimeException plain = new IllegalStateException("boom");
    EtlException wrapped = EtlException.wrap(ErrorKind.WORKER_PANIC, "died", plain);
    assertThat(wrapped.getCause()).isSameAs(plain);
    assertThat(EtlException.wrap(ErrorKind.WORKER_PANIC, "died", first)).isSameAs(first);
  }
}
