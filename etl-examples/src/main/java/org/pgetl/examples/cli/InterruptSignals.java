package org.pgetl.examples.cli;

import java.io.PrintStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.pgetl.Shutdown;

/**
 * Turns Ctrl-C (SIGINT) and SIGTERM into a request to stop cleanly: the first signal requests the
 * command's {@link Shutdown}; a second one exits at once (shutdown hooks still stop an embedded
 * server).
 *
 * <p>A shutdown hook would not do: the JVM runs every hook at once, so the embedded PostgreSQL of
 * the demo would stop while the pipeline still catches up. The signal handler keeps the JVM alive
 * until the command has finished. It is installed through {@code sun.misc.Signal} (module {@code
 * jdk.unsupported}, present in every OpenJDK build), looked up reflectively; where it is missing, a
 * shutdown hook requests the stop instead.
 */
final class InterruptSignals {
  private InterruptSignals() {}

  /**
   * Installs the handlers.
   *
   * @param stop requested by the first signal
   * @param err where the notice goes
   */
  static void install(Shutdown stop, PrintStream err) {
    Runnable onSignal =
        () -> {
          if (stop.request()) {
            err.println();
            err.println("stopping cleanly (press Ctrl-C again to exit at once)");
          } else {
            err.println("exiting at once");
            System.exit(Main.EXIT_INTERRUPTED);
          }
        };
    boolean interrupt = installSignalHandler("INT", onSignal);
    boolean terminate = installSignalHandler("TERM", onSignal);
    if (!interrupt && !terminate) {
      Runtime.getRuntime().addShutdownHook(new Thread(stop::request, "pgetl-cli-stop-on-exit"));
    }
  }

  private static boolean installSignalHandler(String name, Runnable action) {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Object signal = signalClass.getConstructor(String.class).newInstance(name);
      InvocationHandler invocation =
          (Object proxy, Method method, Object[] args) -> {
            if (method.getName().equals("handle")) {
              action.run();
              return null;
            }
            return switch (method.getName()) {
              case "hashCode" -> System.identityHashCode(proxy);
              case "equals" -> proxy == args[0];
              default -> "pgetl signal handler";
            };
          };
      Object handler =
          Proxy.newProxyInstance(
              InterruptSignals.class.getClassLoader(), new Class<?>[] {handlerClass}, invocation);
      signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, handler);
      return true;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }
}
