#!/usr/bin/env bash
# check_exports.sh <built-stub.so> <symbols-file>...
#
# Verifies that a built client stub exports exactly the union of the ABIs
# recorded in the symbols files (client_stub/abi/libamdhip64.so.{5,6,7}.symbols):
# every "<name> <node>" line as a defined dynamic symbol name@@node, and
# nothing else except an unversioned `dlopen`. The absolute (A) symbols naming the
# version nodes themselves are ignored (GNU ld emits them, lld does not).
# Exits 1 listing every difference; 2 on usage errors.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 <built-stub.so> <symbols-file>..." >&2
  exit 2
fi
stub=$1
shift
symbol_files=("$@")
symbols="${symbol_files[*]}"  # For messages.
for f in "$stub" "${symbol_files[@]}"; do
  if [[ ! -r $f ]]; then
    echo "$0: cannot read $f" >&2
    exit 2
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Expected: name@@node for every non-comment line.
cat "${symbol_files[@]}" | grep -v '^[[:space:]]*#' | awk 'NF { print $1 "@@" $2 }' | LC_ALL=C sort -u >"$tmp/expected"

# Actual: defined dynamic symbols except the version-node (A) ones, minus
# one unversioned dlopen. Depending on the binutils version nm prints an
# unversioned symbol of a versioned library as "dlopen", "dlopen@Base" or
# "dlopen@@<soname>"; all mean version index 1 (*global*).
nm -D --with-symbol-versions --defined-only "$stub" >"$tmp/nm"
awk '$2 != "A" { print $3 }' "$tmp/nm" |
  { grep -v -x -E 'dlopen(@@?(Base|[^@]*\.so[.0-9]*))?' || true; } |
  LC_ALL=C sort >"$tmp/actual"

status=0
missing=$(LC_ALL=C comm -23 "$tmp/expected" "$tmp/actual")
unexpected=$(LC_ALL=C comm -13 "$tmp/expected" "$tmp/actual")
if [[ -n $missing ]]; then
  echo "Missing from $stub (expected name@@node not exported):"
  sed 's/^/  /' <<<"$missing"
  status=1
fi
if [[ -n $unexpected ]]; then
  echo "Unexpected in $stub (exported but not in $symbols, or wrong version):"
  sed 's/^/  /' <<<"$unexpected"
  status=1
fi
if [[ $status -eq 0 ]]; then
  echo "OK: $stub exports the $(wc -l <"$tmp/expected") symbols of $symbols (plus dlopen if present)."
fi
exit $status
