#!/usr/bin/env bash
# Model-checks the protocol models in this folder with spin: each model must verify without an
# error, and each mutant (a model with one rule removed) must fail with the violation it is
# meant to show. Build products go to a temporary directory that is removed at exit.
# Usage: spec/check.sh        (needs spin and gcc; installs nothing)
set -euo pipefail

missing=()
command -v spin >/dev/null 2>&1 || missing+=(spin)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "spec/check.sh: ${missing[*]} not found; install first" \
    "(Debian: apt-get install -y ${missing[*]})" >&2
  exit 2
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/pgetl-spec.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$here"/*.pml "$work"/
cd "$work"

# pan stops at this many MB instead of exhausting the machine
memlim=1024
failures=0
started=$(date +%s)

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# verify MODEL LABEL SPIN_FLAGS GCC_FLAGS PAN_FLAGS: the model must verify with no error and a
# complete search. GCC_FLAGS carry the optimisation level: -O2 pays off only for a long search.
verify() {
  local model=$1 label=$2 spin_flags=$3 gcc_flags=$4 pan_flags=$5 out t0 tb t1
  rm -f pan pan.* ./*.trail
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  spin $spin_flags -a "$model" >spin.log 2>&1 ||
    { cat spin.log >&2; fail "$label: spin -a"; return; }
  # shellcheck disable=SC2086
  gcc -w -DMEMLIM=$memlim $gcc_flags -o pan pan.c || { fail "$label: gcc"; return; }
  tb=$(date +%s%N)
  # shellcheck disable=SC2086
  out=$(./pan $pan_flags 2>&1) || true
  t1=$(date +%s%N)
  if ! grep -q 'errors: 0$' <<<"$out" ||
    grep -Eqi 'max search depth too small|out of memory|search not completed' <<<"$out"; then
    echo "$out" | grep -Ev '^\s*$' | head -40 >&2
    if ls ./*.trail >/dev/null 2>&1; then
      # shellcheck disable=SC2086
      spin $spin_flags -t "$model" 2>&1 | sed -n '1,/^spin: /p' | head -60 >&2
    fi
    fail "$label: the model does not verify"
    return
  fi
  printf '%-48s ok  %8s states  depth %4s  search %4.1f s  (build %3.1f s)\n' "$label" \
    "$(awk '/states, stored/ {print $1; exit}' <<<"$out")" \
    "$(sed -n 's/.*depth reached \([0-9]*\),.*/\1/p' <<<"$out" | head -1)" \
    "$(awk -v ns=$((t1 - tb)) 'BEGIN {print ns / 1e9}')" \
    "$(awk -v ns=$((tb - t0)) 'BEGIN {print ns / 1e9}')"
}

# mutant MODEL MUTANT EXPECTED: the mutant must fail, and its counterexample (the
# shortest, by breadth-first search) must end with a violation message matching EXPECTED (an
# extended regular expression).
# Optional: SPIN_FLAGS (the bounds of the mutant's run), SEARCH (-DBFS, the default, for the
# shortest counterexample, or "" for a depth-first one where breadth-first needs too much memory)
# and MEMORY (MB).
mutant() {
  local model=$1 name=$2 expected=$3 spin_flags=${4:-} search=${5--DBFS} mem=${6:-$memlim}
  local label out trail
  label="$model -D$name${spin_flags:+ $spin_flags}"
  rm -f pan pan.* ./*.trail
  # shellcheck disable=SC2086
  spin $spin_flags -D"$name" -a "$model" >spin.log 2>&1 ||
    { cat spin.log >&2; fail "$label: spin -a"; return; }
  # shellcheck disable=SC2086
  gcc -w -O0 -DMEMLIM=$mem -DSAFETY -DNOCLAIM $search -o pan pan.c ||
    { fail "$label: gcc"; return; }
  out=$(./pan 2>&1) || true
  if grep -q 'errors: 0$' <<<"$out" || ! ls ./*.trail >/dev/null 2>&1; then
    fail "$label: the mutant passed; the rule it removes is not checked"
    return
  fi
  # the replayed story: the printf lines up to the failed assertion
  # shellcheck disable=SC2086
  trail=$(spin $spin_flags -D"$name" -t "$model" 2>&1 | sed -n '1,/^spin: /p' |
    grep -Ev '^(ltl |spin: )' || true)
  if ! grep -Eq "violated: $expected" <<<"$trail"; then
    echo "$trail" >&2
    fail "$label: failed, but not with \"violated: $expected\""
    return
  fi
  printf '%-48s fails as expected (%s steps): %s\n' "$label" \
    "$(grep -c . <<<"$trail")" "$expected"
  if [ -n "${SPEC_VERBOSE:-}" ]; then
    sed 's/^ */      /' <<<"$trail"
  fi
}

echo "== spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p'), gcc $(gcc -dumpversion)"

echo "== acknowledgements.pml: streaming acknowledgements of one stream"
verify acknowledgements.pml "acknowledgements.pml (safety)" "" "-O2 -DSAFETY" "-m100000"
mutant acknowledgements.pml MUTANT_DURABLE_COVERS_UNANSWERED "no loss: .* <= DURABLE_POINT"
mutant acknowledgements.pml MUTANT_IDLE_IGNORES_DISCARD "no loss: .* <= CONFIRMED_FLUSH"
mutant acknowledgements.pml MUTANT_IDLE_IGNORES_CARRIED "no loss: .* <= CONFIRMED_FLUSH"

echo "== lifecycle.pml: destination lifecycle around an in-flight write"
verify lifecycle.pml "lifecycle.pml (safety + bounded liveness)" "" "-O0 -DSAFETY -DNOCLAIM" \
  "-m100000"
verify lifecycle.pml "lifecycle.pml (LTL: delivered)" "" "-O0" "-a -N delivered -m100000"
mutant lifecycle.pml MUTANT_LATE_DURABLE_IGNORED "an event already durable is delivered again"
mutant lifecycle.pml MUTANT_PAUSE_LOOKS_IDLE "the confirmed flush covers events not delivered"
mutant lifecycle.pml MUTANT_RESUME_WITHOUT_WAIT "an event already durable is delivered again"

echo "== handoff.pml: table-sync / apply-worker hand-off with crashes"
verify handoff.pml "handoff.pml (safety + bounded liveness)" "" "-O0 -DSAFETY" "-m100000"
mutant handoff.pml MUTANT_CATCHUP_SNAPSHOT_ONLY "a change is applied before an earlier one"
mutant handoff.pml MUTANT_READY_BEFORE_DURABLE "a change already in the copy is applied again"
mutant handoff.pml MUTANT_OWNERSHIP_STRICT "a change is applied before an earlier one"

echo "== chunks.pml: chunked copy of a streaming table, watermarks, crashes"
# exact (COLLAPSE) search: 8.3M states, about 1.8 GB and 17 s
verify chunks.pml "chunks.pml (safety, 2 transactions, a crash)" "-DTXS=2 -DATTEMPTS=3" \
  "-O2 -DSAFETY -DCOLLAPSE -DMEMLIM=2048" "-m100000 -w24"
chunk_bounds="-DTXS=2 -DATTEMPTS=3 -DCRASHES=0"
mutant chunks.pml MUTANT_NO_XID_CHECK "a copied row differs" "$chunk_bounds" -DBFS 2048
mutant chunks.pml MUTANT_NO_BARRIER "a copied row differs" "$chunk_bounds" "" 2048
mutant chunks.pml MUTANT_NO_WAIT "a copied row differs" "$chunk_bounds" -DBFS 2048
mutant chunks.pml MUTANT_WINDOW_DROP "a copied row differs" "$chunk_bounds" -DBFS 2048
mutant chunks.pml MUTANT_NO_REREAD "a copied row differs" "$chunk_bounds" -DBFS 2048
mutant chunks.pml MUTANT_DONE_BEFORE_DURABLE "a copied row differs" "-DTXS=2 -DATTEMPTS=3" \
  -DBFS 2048

echo "== finished in $(($(date +%s) - started)) s"
if [ "$failures" -gt 0 ]; then
  echo "spec/check.sh: $failures check(s) failed" >&2
  exit 1
fi
echo "all models verify; every mutant fails"
