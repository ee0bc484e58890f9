#!/usr/bin/env bash
# run_with_worker.sh <hipr-worker> <program> [args...]
#
# Starts <hipr-worker> on an ephemeral loopback port with the sim device,
# runs <program> with HIPR_SERVER pointing at it, then stops the worker.
# Exits with the program's status; prints the worker's log if it fails.
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 <hipr-worker> <program> [args...]" >&2
  exit 2
fi
worker=$1
shift
dir=$(mktemp -d)
"$worker" --listen 127.0.0.1:0 --device sim --sim-memory 1G --port-file "$dir/port" \
  >"$dir/worker.log" 2>&1 &
worker_pid=$!
cleanup() {
  kill "$worker_pid" 2>/dev/null
  wait "$worker_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 100); do
  [[ -s $dir/port ]] && break
  sleep 0.1
done
if [[ ! -s $dir/port ]]; then
  echo "$0: the worker did not start:" >&2
  cat "$dir/worker.log" >&2
  exit 1
fi
HIPR_SERVER=127.0.0.1:$(cat "$dir/port") "$@"
status=$?
if [[ $status -ne 0 ]]; then
  echo "--- worker log ---" >&2
  cat "$dir/worker.log" >&2
fi
exit $status
