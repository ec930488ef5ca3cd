package org.pgetl.testkit;

/**
 * A JVM that starts an embedded server and then either exits normally ({@code exit}) or waits until
 * it is killed ({@code hang}); used to check the shutdown hook and the sweep of orphans.
 */
final class ChildJvm {
  private ChildJvm() {}

  public static void main(String[] args) throws Exception {
    EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
    System.out.println("READY " + pg.pid() + " " + pg.dataDirectory());
    System.out.flush();
    if (args.length > 0 && args[0].equals("hang")) {
      // blocks until the parent kills this JVM (stdin stays open)
      int ignored = System.in.read();
      System.out.println("stdin closed: " + ignored);
    }
    // returning ends the JVM normally: the shutdown hook must stop the server
  }
}
