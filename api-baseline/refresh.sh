#!/bin/sh
# Refreshes the API baselines (one jar per published library module) from the current sources.
#
# Run it only in a change that alters the public API on purpose, and commit the jars with
# that change: from then on, `mvn verify` compares the built jars with these. Extra arguments go
# to Maven (for example -o to stay offline). Needs the JDK's jar tool on the PATH.
set -eu
cd "$(dirname "$0")/.."
modules="etl-destination-api etl-core etl-postgres-store etl-testkit etl-destination-postgres etl-destination-duckdb etl-kafka-connect"
mvn -B -q -pl "$(echo $modules | tr ' ' ',')" -am package \
  -DskipTests -Djapicmp.skip -Dspotless.check.skip "$@"
for module in $modules; do
  jar=$(find "$module/target" -maxdepth 1 -name "$module-*.jar" \
    ! -name '*-tests.jar' ! -name '*-sources.jar' ! -name '*-javadoc.jar' | head -n 1)
  if [ -z "$jar" ]; then
    echo "no jar of $module in $module/target" >&2
    exit 1
  fi
  # keep the exported packages only: org.pgetl.core.internal and org.pgetl.destination.internal
  # are not API and not compared; the module descriptor goes too, since it names packages the
  # copy leaves out (and japicmp compares classes only)
  work=$(mktemp -d)
  (cd "$work" && jar xf "$OLDPWD/$jar" && rm -rf org/pgetl/core/internal org/pgetl/destination/internal META-INF/maven module-info.class)
  rm -f "api-baseline/$module.jar"
  jar --create --file "api-baseline/$module.jar" --no-manifest -C "$work" .
  rm -rf "$work"
  echo "api-baseline/$module.jar <- $jar"
done
