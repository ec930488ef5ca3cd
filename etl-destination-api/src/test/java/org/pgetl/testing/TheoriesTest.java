package org.pgetl.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class TheoriesTest {

  @Test
  void aFailureNamesItsSeedAndHowToReplayIt() {
    assertThatThrownBy(
            () ->
                Theories.qt(1000, Duration.ofSeconds(5))
                    .forAll(integers().between(0, 10_000))
                    .checkAssert(i -> assertThat(i).isLessThan(5000)))
        .isInstanceOf(AssertionError.class)
        .hasMessageMatching("(?s)Property falsified after \\d+ example\\(s\\), seed -?\\d+ .*")
        .hasMessageContaining("(replay: -Dpgetl.seed=")
        .hasMessageMatching("(?s).*smallest falsifying value:\n\\d+.*")
        .hasCauseInstanceOf(AssertionError.class);
  }

  @Test
  void theSeedAFailurePrintsReplaysTheSameExamples() {
    List<Integer> first = new ArrayList<>();
    AssertionError failure = catchFailure(first);
    Matcher m = Pattern.compile("-Dpgetl\\.seed=(-?\\d+)").matcher(failure.getMessage());
    assertThat(m.find()).isTrue();

    String before = System.getProperty(Theories.SEED_PROPERTY);
    System.setProperty(Theories.SEED_PROPERTY, m.group(1));
    try {
      assertThat(Theories.replaying()).isTrue();
      assertThat(Theories.seed()).isEqualTo(Long.parseLong(m.group(1)));
      List<Integer> replay = new ArrayList<>();
      AssertionError again = catchFailure(replay);
      assertThat(replay).isEqualTo(first);
      assertThat(again.getMessage()).isEqualTo(failure.getMessage());
    } finally {
      if (before == null) {
        System.clearProperty(Theories.SEED_PROPERTY);
      } else {
        System.setProperty(Theories.SEED_PROPERTY, before);
      }
    }
  }

  @Test
  void aFailingSequenceLosesTheStepsItCanDoWithout() {
    assertThatThrownBy(
            () ->
                Theories.checkSequence(
                    Theories.qt(1000, Duration.ofSeconds(5)),
                    lists().of(integers().between(0, 9)).ofSizeBetween(1, 40),
                    integers().between(0, 3),
                    (steps, other) -> assertThat(steps).doesNotContain(3).doesNotContain(7)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("-Dpgetl.seed=")
        // one step is left, whether QuickTheories' shrinking already got there or the removal did
        .hasMessageMatching(
            "(?s).*(with steps removed \\(1 of \\d+ left\\):\n\\[[37]\\], \\d"
                + "|smallest falsifying value:\n\\{\\[[37]\\], \\d\\}(\n|$)).*");
  }

  private static AssertionError catchFailure(List<Integer> seen) {
    try {
      Theories.qt(1000, Duration.ofSeconds(5))
          .forAll(integers().all())
          .checkAssert(
              i -> {
                seen.add(i);
                assertThat(i % 7).isNotEqualTo(3);
              });
    } catch (AssertionError e) {
      return e;
    }
    throw new AssertionError("the property did not fail");
  }
}
