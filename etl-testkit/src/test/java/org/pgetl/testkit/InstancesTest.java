package org.pgetl.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InstancesTest {
  @TempDir Path root;

  private static Instances.Owner deadOwner() throws Exception {
    Process p = new ProcessBuilder("true").start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new Instances.Owner(
        p.pid(), Instant.EPOCH.toString(), Instances.currentPidNamespace(), "/nowhere/bin", "x");
  }

  @Test
  void ownerFileRoundTrips() throws IOException {
    Instances.Owner me = Instances.Owner.current(Path.of("/opt/pg/bin"), "postgres");
    Path file = root.resolve(Instances.OWNER_FILE);
    me.write(file);
    assertThat(Instances.Owner.read(file)).isEqualTo(me);
    assertThat(me.alive()).isTrue();
  }

  @Test
  void ownerOfAnotherStartTimeIsDead() throws Exception {
    assertThat(deadOwner().alive()).isFalse();
    Instances.Owner reusedPid =
        new Instances.Owner(
            ProcessHandle.current().pid(),
            Instant.EPOCH.toString(),
            Instances.currentPidNamespace(),
            "",
            "");
    assertThat(reusedPid.alive()).as("same pid, other start time").isFalse();
  }

  @Test
  void ownerInAnotherPidNamespaceIsNeverJudged() throws Exception {
    Instances.Owner dead = deadOwner();
    Instances.Owner elsewhere =
        new Instances.Owner(dead.pid(), dead.start(), "pid:[1]", dead.bin(), dead.user());
    assertThat(elsewhere.alive()).isTrue();
  }

  @Test
  void sweepDeletesFoldersOfDeadOwnersOnly() throws Exception {
    Path dead = Files.createDirectories(root.resolve("pg-17-dead"));
    deadOwner().write(dead.resolve(Instances.OWNER_FILE));
    Files.createDirectories(dead.resolve("pgdata"));
    Path mine = Files.createDirectories(root.resolve("pg-17-mine"));
    Instances.Owner.current(Path.of("/bin"), "me").write(mine.resolve(Instances.OWNER_FILE));
    Path fresh = Files.createDirectories(root.resolve("pg-17-being-created"));
    Path abandoned = Files.createDirectories(root.resolve("pg-17-abandoned"));
    Files.setLastModifiedTime(
        abandoned, FileTime.from(Instant.now().minus(Instances.ABANDONED_AFTER).minusSeconds(60)));
    Path other = Files.createDirectories(root.resolve("not-a-server"));

    assertThat(Instances.sweep(root)).containsExactlyInAnyOrder(dead, abandoned);

    assertThat(dead).doesNotExist();
    assertThat(abandoned).doesNotExist();
    assertThat(mine).exists();
    assertThat(fresh).exists();
    assertThat(other).exists();
  }

  @Test
  void noPostmasterWithoutPidFile() {
    assertThat(Instances.postmaster(root)).isEmpty();
  }
}
