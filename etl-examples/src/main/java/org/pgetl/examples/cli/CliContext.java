package org.pgetl.examples.cli;

import java.io.PrintStream;
import org.pgetl.Shutdown;

/**
 * What every command gets from {@link Main}: where to print, and the handle that Ctrl-C requests.
 *
 * @param out results and the demo's progress
 * @param err errors and status lines
 * @param stop requested when the running command should stop cleanly
 */
record CliContext(PrintStream out, PrintStream err, Shutdown stop) {}
