#!/bin/bash
# ctest demo_mlp_train: starts a sim worker with the build's twins, runs
# examples/mlp/train.py through the stub, and passes when train.py says OK.
#   run_demo_test.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d)
worker_pid=""
cleanup() {
  [[ -n $worker_pid ]] && { kill "$worker_pid" 2>/dev/null || true; wait "$worker_pid" 2>/dev/null || true; }
  rm -rf "$dir"
}
trap cleanup EXIT
"$build/bin/hipr-worker" --device sim --listen 127.0.0.1:0 --port-file "$dir/port" --sim-memory 1G \
  --sim-kernels "$build/sim-kernels" --code-cache "$dir/code-cache" --log-level info >"$dir/worker.log" 2>&1 &
worker_pid=$!
for _ in $(seq 200); do [[ -s $dir/port ]] && break; sleep 0.05; done
[[ -s $dir/port ]] || { echo "the worker did not start"; cat "$dir/worker.log"; exit 1; }
status=0
HIPR_SERVER=127.0.0.1:$(cat "$dir/port") HIPR_STATS=1 LD_PRELOAD=$build/lib/libhip_client_stub.so \
  /usr/bin/python3 "$here/train.py" --lib "$build/examples/libhipr_mlp.so" || status=$?
if ((status != 0)) || grep -q "\[error\]" "$dir/worker.log"; then
  echo "---- worker log"; cat "$dir/worker.log"
  ((status != 0)) || status=1
fi
exit $status
