#!/usr/bin/env bash
# ctest bench_rdma_smoke: `hipr-bench --rdma`, short (one round, 16 MiB, no
# big copy), must print its table with the rdma rows, say what the figures
# measure (the verbs double, or this host's device), and show that the
# session moved to rdma (the worker's "transport rdma (device ...)" line,
# which hipr-bench reports). The figures themselves are not checked.
# Usage: rdma_bench_test.sh HIPR_BENCH BUILD_DIR
set -euo pipefail
bench=$1
build=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$bench" --root "$build" --rdma --rounds 1 --size 16M --big-copy 0 >"$out" 2>&1; then
  cat "$out"
  echo "FAIL: hipr-bench --rdma exited with an error"
  exit 1
fi
cat "$out"
fail=0
expect() {  # PATTERN WHAT: an extended regular expression the output must match
  grep -qE -- "$1" "$out" || { echo "FAIL: no $2 (/$1/)"; fail=1; }
}
expect '^== transfers and round trips over rdma ' "rdma heading"
expect '^(!! NOT A NIC\.|== rdma on )' "statement of what the figures measure"
expect '^figure +hipr +baseline +ratio' "table header"
expect '^rdma null sync call vs raw TCP ping-pong +[0-9.]+ us' "null-call row"
for row in 'H2D 16 MiB vs raw TCP upload' 'H2D 16 MiB pinned vs memcpy' 'D2H 16 MiB vs raw TCP download' \
    'D2H 16 MiB pinned vs memcpy'; do
  expect "^rdma $row +[0-9.]+ GiB/s" "row '$row'"
done
expect '^== sessions on rdma: [1-9]' "session moved to rdma"
if grep -q '^!! NOT A NIC\.' "$out"; then
  expect 'transport rdma \(device hipr_double0[;)]' "session on the verbs double's device"
fi
if (( fail )); then exit 1; fi
echo "PASS"
