package org.pgetl.core.internal.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.pgetl.model.Lsn;

class StreamSpoolTest {
  private static final long TOP = 700;

  @TempDir Path dir;

  private SpoolFolder folder(long maxBytes) {
    return new SpoolFolder(dir.resolve("p"), maxBytes, "p");
  }

  private static ByteBuffer change(String text) {
    return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
  }

  private static List<String> replay(StreamSpool.Replay r) {
    List<String> out = new ArrayList<>();
    StreamSpool.Change c;
    while ((c = r.next()) != null) {
      out.add(new String(c.message(), StandardCharsets.UTF_8) + "@" + c.walStart().value());
    }
    r.close();
    return out;
  }

  private List<Path> files() throws IOException {
    Path p = dir.resolve("p");
    if (!Files.exists(p)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(p)) {
      return s.toList();
    }
  }

  @Test
  void aCommittedTransactionIsReadBackInOrderAcrossBlocksAndItsFileDeleted() throws Exception {
    SpoolFolder folder = folder(1 << 20);
    StreamSpool spool = new StreamSpool(folder, "apply");
    spool.start(TOP);
    spool.add(TOP, Lsn.of(1), change("a"));
    spool.add(TOP, Lsn.of(2), change("b"));
    spool.stop();
    spool.start(TOP);
    spool.add(TOP, Lsn.of(3), change("c"));
    spool.stop();
    assertThat(files()).hasSize(1);
    assertThat(folder.usedBytes()).isEqualTo(3 * (StreamSpool.HEADER_BYTES + 1));

    StreamSpool.Replay r = spool.commit(TOP);
    assertThat(r.changes()).isEqualTo(3);
    assertThat(spool.isEmpty()).isTrue();
    assertThat(replay(r)).containsExactly("a@1", "b@2", "c@3");
    assertThat(files()).isEmpty();
    assertThat(folder.usedBytes()).isZero();
  }

  @Test
  void changesLargerThanTheBuffersSurviveTheRoundTrip() throws Exception {
    StreamSpool spool = new StreamSpool(folder(16L << 20), "apply");
    String big = "x".repeat(3 * StreamSpool.BUFFER_BYTES + 17);
    List<String> expected = new ArrayList<>();
    spool.start(TOP);
    for (int i = 0; i < 2000; i++) {
      String v = i % 500 == 7 ? big + i : "row " + i;
      spool.add(TOP, Lsn.of(i), change(v));
      expected.add(v + "@" + i);
    }
    spool.stop();
    assertThat(replay(spool.commit(TOP))).containsExactlyElementsOf(expected);
    assertThat(files()).isEmpty();
  }

  @Test
  void anAbortedSubtransactionIsCutFromItsFirstChangeOn() throws Exception {
    SpoolFolder folder = folder(1 << 20);
    StreamSpool spool = new StreamSpool(folder, "apply");
    spool.start(TOP);
    spool.add(TOP, Lsn.of(1), change("top1"));
    spool.add(701, Lsn.of(2), change("sub701"));
    spool.add(TOP, Lsn.of(3), change("top2"));
    spool.add(702, Lsn.of(4), change("sub702a"));
    spool.add(703, Lsn.of(5), change("sub703"));
    spool.add(702, Lsn.of(6), change("sub702b"));
    spool.stop();
    spool.abort(TOP, 702);
    assertThat(spool.changes(TOP)).isEqualTo(3);
    // an abort of a subtransaction without changes, or of an unknown transaction, changes nothing
    spool.abort(TOP, 799);
    spool.abort(999, 999);
    spool.start(TOP);
    spool.add(704, Lsn.of(7), change("sub704"));
    spool.stop();
    spool.abort(TOP, 703); // its changes went with 702's
    assertThat(replay(spool.commit(TOP)))
        .containsExactly("top1@1", "sub701@2", "top2@3", "sub704@7");
    assertThat(folder.usedBytes()).isZero();
    assertThat(files()).isEmpty();
  }

  @Test
  void interleavedTransactionsKeepTheirOwnFilesAndAnAbortDeletesOne() throws Exception {
    SpoolFolder folder = folder(1 << 20);
    StreamSpool spool = new StreamSpool(folder, "sync-42");
    for (int round = 0; round < 3; round++) {
      for (long xid : new long[] {TOP, 800, 900}) {
        spool.start(xid);
        spool.add(xid, Lsn.of(round), change(xid + ":" + round));
        spool.stop();
      }
    }
    assertThat(files()).hasSize(3).allMatch(p -> p.getFileName().toString().startsWith("sync-42-"));
    spool.abort(800, 800);
    assertThat(files()).hasSize(2);
    assertThat(replay(spool.commit(900))).containsExactly("900:0@0", "900:1@1", "900:2@2");
    assertThat(replay(spool.commit(TOP))).containsExactly("700:0@0", "700:1@1", "700:2@2");
    assertThat(files()).isEmpty();
    assertThat(folder.usedBytes()).isZero();
  }

  @Test
  void aTransactionWhoseChangesWereAllRolledBackReplaysNothing() throws Exception {
    StreamSpool spool = new StreamSpool(folder(1 << 20), "apply");
    spool.start(TOP);
    spool.add(701, Lsn.of(1), change("gone"));
    spool.stop();
    spool.abort(TOP, 701);
    StreamSpool.Replay r = spool.commit(TOP);
    assertThat(r.next()).isNull();
    r.close();
    assertThat(files()).isEmpty();
    // a commit of a transaction that streamed nothing
    StreamSpool.Replay none = spool.commit(12345);
    assertThat(none.changes()).isZero();
    assertThat(none.next()).isNull();
    none.close();
  }

  @Test
  void theDiskCapFailsTheChangeThatPassesItNamingTheSetting() throws Exception {
    SpoolFolder folder = folder(10 * (StreamSpool.HEADER_BYTES + 4));
    StreamSpool spool = new StreamSpool(folder, "apply");
    spool.start(TOP);
    for (int i = 0; i < 10; i++) {
      spool.add(TOP, Lsn.of(i), change("abcd"));
    }
    assertThatThrownBy(() -> spool.add(TOP, Lsn.of(11), change("abcd")))
        .isInstanceOfSatisfying(
            EtlException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.CONFIG_ERROR))
        .hasMessageContaining("spoolMaxBytes");
    assertThat(folder.usedBytes()).isEqualTo(10 * (StreamSpool.HEADER_BYTES + 4));
    spool.close();
    assertThat(files()).isEmpty();
    assertThat(folder.usedBytes()).isZero();
  }

  @Test
  void closingDeletesEveryFileTheOneBeingReplayedIncluded() throws Exception {
    StreamSpool spool = new StreamSpool(folder(1 << 20), "apply");
    for (long xid : new long[] {TOP, 800}) {
      spool.start(xid);
      spool.add(xid, Lsn.of(1), change("a"));
      spool.add(xid, Lsn.of(2), change("b"));
      spool.stop();
    }
    spool.start(900);
    spool.add(900, Lsn.of(1), change("open block"));
    StreamSpool.Replay r = spool.commit(TOP);
    assertThat(r.next()).isNotNull();
    assertThat(files()).hasSize(3);
    spool.close();
    assertThat(files()).isEmpty();
    assertThat(r.next()).isNull();
  }

  @Test
  void anotherProcessEmptyingTheFolderDoesNotDisturbTransactionsInProgress() throws Exception {
    StreamSpool spool = new StreamSpool(folder(1 << 20), "apply");
    spool.start(TOP);
    spool.add(TOP, Lsn.of(1), change("before"));
    spool.stop();
    // a second process of the same pipeline starts with the same spoolDirectory
    folder(1 << 20).clean();
    assertThat(files()).isEmpty();
    spool.start(TOP);
    spool.add(TOP, Lsn.of(2), change("after"));
    spool.stop();
    spool.start(800);
    spool.add(800, Lsn.of(3), change("new"));
    spool.stop();
    assertThat(replay(spool.commit(TOP))).containsExactly("before@1", "after@2");
    assertThat(replay(spool.commit(800))).containsExactly("new@3");
  }

  @Test
  void cleanDeletesLeftoverSpoolFilesOnly() throws Exception {
    SpoolFolder folder = folder(1 << 20);
    Path p = dir.resolve("p");
    Files.createDirectories(p);
    Files.writeString(p.resolve("apply-1-700.spool"), "left by a killed process");
    Files.writeString(p.resolve("notes.txt"), "not ours");
    folder.clean();
    try (Stream<Path> s = Files.list(p)) {
      assertThat(s.map(f -> f.getFileName().toString())).containsExactly("notes.txt");
    }
    // a missing folder is created
    SpoolFolder fresh = new SpoolFolder(dir.resolve("q"), 1, "q");
    fresh.clean();
    assertThat(dir.resolve("q")).isDirectory();
  }
}
