package org.pgetl.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.pgetl.Shutdown;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The build tells NullAway that picocli sets every option field before a command runs; that holds
 * only for options that are required or have a default. Every other option may stay null, and its
 * field must say so, or NullAway would let the command read it unchecked.
 */
class CliOptionsTest {

  @Test
  void everyOptionThatMayBeAbsentIsDeclaredNullable() {
    PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream());
    CommandLine cli = Main.commandLine(new CliContext(nowhere, nowhere, new Shutdown()));
    List<String> mayBeAbsent = new ArrayList<>();
    List<String> notNullable = new ArrayList<>();
    collect(cli.getCommandSpec(), mayBeAbsent, notNullable);

    // the options known to be optional without a default are found, so the walk is not vacuous
    assertThat(mayBeAbsent)
        .contains(
            "DemoCommand.postgresVersion",
            "ReplicateCommand.createPublication",
            "LifecycleCommand$Change.reason",
            "TablesCommand$Target.sourceUrl");
    assertThat(notNullable).as("options that may be absent but are not @Nullable").isEmpty();
  }

  private static void collect(
      CommandSpec spec, List<String> mayBeAbsent, List<String> notNullable) {
    List<ArgSpec> args = new ArrayList<>(spec.options());
    args.addAll(spec.positionalParameters());
    for (ArgSpec a : args) {
      if (!(a.userObject() instanceof Field f)
          || !f.getDeclaringClass().getPackageName().equals(Main.class.getPackageName())
          || f.getType().isPrimitive()
          || a.required()
          || a.defaultValue() != null
          || a.initialValue() != null) {
        continue;
      }
      Class<?> owner = f.getDeclaringClass();
      String name =
          owner.getName().substring(owner.getPackageName().length() + 1) + "." + f.getName();
      if (!mayBeAbsent.contains(name)) {
        mayBeAbsent.add(name);
        if (!f.getAnnotatedType().isAnnotationPresent(Nullable.class)) {
          notNullable.add(name);
        }
      }
    }
    for (CommandLine sub : spec.subcommands().values()) {
      collect(sub.getCommandSpec(), mayBeAbsent, notNullable);
    }
  }
}
