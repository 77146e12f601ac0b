#!/usr/bin/env bash
# Regenerates the API baselines that the build's compatibility check (japicmp, at verify) compares with:
# api-baseline/<artifactId>.jar, the classes of the module's exported packages (no package named internal), and
# api-baseline/<artifactId>.txt, their public and protected signatures (javap), so that the diff of a commit that
# changes the API can be read.
#
#   scripts/api-baseline.sh                      every module whose pom sets <japicmp.skip>false</japicmp.skip>
#   scripts/api-baseline.sh sandbox-api ...      only these
#
# Run it in the commit that changes the API on purpose (see docs/api.md, "API compatibility"). It builds the modules from
# a clean state (tests skipped) and writes only under api-baseline/; the jars are reproducible (fixed entry order and
# timestamps), so regenerating an unchanged API changes no file.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ $# -gt 0 ]; then
  modules=("$@")
else
  mapfile -t modules < <(grep -l '<japicmp.skip>false</japicmp.skip>' ./*/pom.xml | xargs -n1 dirname | xargs -n1 basename | LC_ALL=C sort)
fi
[ ${#modules[@]} -gt 0 ] || { echo "api-baseline: no module to baseline" >&2; exit 1; }
for m in "${modules[@]}"; do
  # The baseline is named by artifactId; every checked module's directory is its artifactId.
  grep -q "<artifactId>$m</artifactId>" "$m/pom.xml" || { echo "api-baseline: $m/pom.xml: artifactId is not $m" >&2; exit 1; }
done

echo "[api-baseline] building ${modules[*]}"
mvn -B -ntp -q -pl "$(IFS=,; echo "${modules[*]}")" -am clean package \
  -DskipTests -Djapicmp.skip=true -Dmaven.javadoc.skip=true -Dmaven.source.skip=true

mkdir -p api-baseline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for m in "${modules[@]}"; do
  jar=$(ls "$m"/target/"$m"-*.jar | grep -Ev -- '-(sources|javadoc|tests|all)\.jar$' | head -n1)
  dir="$work/$m"
  mkdir -p "$dir"
  (cd "$dir" && jar --extract --file "$root/$jar")
  # Only what the check compares: the exported packages' classes (no internal package, no resources, no descriptor).
  find "$dir" -type d -name internal -prune -exec rm -rf {} +
  rm -rf "$dir/META-INF" "$dir/module-info.class"
  find "$dir" -type f ! -name '*.class' -delete
  mapfile -t classes < <(cd "$dir" && find . -type f -name '*.class' | sed 's|^\./||' | LC_ALL=C sort)
  [ ${#classes[@]} -gt 0 ] || { echo "api-baseline: $m has no exported class" >&2; exit 1; }
  rm -f "api-baseline/$m.jar"
  (cd "$dir" && jar --create --no-manifest --date=2000-01-01T00:00:00Z --file "$root/api-baseline/$m.jar" "${classes[@]}")
  # Readable signatures, one class after the other, in the same order.
  (cd "$dir" && javap -protected -cp . "${classes[@]}") | grep -v '^Compiled from' > "api-baseline/$m.txt"
  echo "[api-baseline] api-baseline/$m.jar: ${#classes[@]} classes"
done
