#!/bin/sh
# check_remoting.sh PYTHON ANNOTATIONS DECLARATIONS INCLUDE_DIR CLIENT_GEN_DIR WORKER_GEN_DIR
#
# ctest remoting_generated_deterministic: runs shim_gen/gen_remoting.py twice
# per side into scratch directories and fails unless both runs are byte-equal
# to each other and to what the build generated (so the generated code
# depends on the inputs alone and the build's copy is current).
set -eu
python=$1 annotations=$2 declarations=$3 include_dir=$4 client_gen=$5 worker_gen=$6
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for side in client worker; do
  for run in 1 2; do
    "$python" "$here/gen_remoting.py" --annotations "$annotations" --declarations "$declarations" \
      --include-dir "$include_dir" --side "$side" --out-dir "$scratch/$side.$run"
  done
  diff -r "$scratch/$side.1" "$scratch/$side.2" || { echo "gen_remoting.py --side $side is not deterministic"; exit 1; }
done
for f in "$scratch"/client.1/*; do
  diff -u "$f" "$client_gen/$(basename "$f")" || { echo "the build's client remoting is stale"; exit 1; }
done
for f in "$scratch"/worker.1/*; do
  diff -u "$f" "$worker_gen/$(basename "$f")" || { echo "the build's worker remoting is stale"; exit 1; }
done
echo "generated remoting: deterministic and current ($(ls "$scratch/client.1" "$scratch/worker.1" | grep -c '\.'))"
