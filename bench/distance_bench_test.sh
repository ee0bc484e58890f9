#!/usr/bin/env bash
# ctest bench_distance_smoke: `hipr-bench --rtt 20ms --steps 3` prints its
# table, the programs pass their own checks through hipr-delay-proxy, the
# round trips through the proxy are the loopback run's (the proxy adds time,
# never calls), and each run's wall time is at least its round trips times
# the RTT (so the delay was really applied). The figures are not checked
# otherwise.
# Usage: distance_bench_test.sh HIPR_BENCH BUILD_DIR
set -euo pipefail
bench=$1
build=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$bench" --root "$build" --rtt 20ms --steps 3 >"$out" 2>&1; then
  cat "$out"
  echo "FAIL: hipr-bench --rtt exited with an error"
  exit 1
fi
cat "$out"
awk '
  $1 == "workload" { header = 1; next }
  ($1 == "demo" || $1 == "loop") && $2 == "loopback" { trips[$1] = $4; obs[$1] = $5; seen[$1] = 1; next }
  ($1 == "demo" || $1 == "loop") && $2 == "20ms" {
    rows++
    if ($4 != trips[$1]) { printf "FAIL: %s made %s round trips through the proxy, %s on loopback\n", $1, $4, trips[$1]; bad = 1 }
    if ($5 != obs[$1]) { printf "FAIL: %s observed %s results through the proxy, %s on loopback\n", $1, $5, obs[$1]; bad = 1 }
    if ($3 + 0 < $4 * 0.020) { printf "FAIL: %s took %s s for %s round trips of 20 ms: no delay?\n", $1, $3, $4; bad = 1 }
    if ($4 < $5) { printf "FAIL: %s: fewer round trips (%s) than observations (%s)\n", $1, $4, $5; bad = 1 }
  }
  END {
    if (!header) { print "FAIL: no table header"; bad = 1 }
    if (!seen["loop"]) { print "FAIL: no loopback row for the loop"; bad = 1 }
    if (rows < 1) { print "FAIL: no 20ms rows"; bad = 1 }
    exit bad
  }' "$out"
grep -q '^   hipMemcpy' "$out" || { echo "FAIL: no per-function round trips"; exit 1; }
echo "PASS"
