#!/bin/bash
# run_fuzz.sh [SECONDS]: builds the code-object fuzz target with clang-15 and
# libFuzzer (-fsanitize=fuzzer,address,undefined) and runs it for SECONDS
# (default 120) over a seed corpus of constructed inputs plus the bundles of
# a hipcc-built library. (tests/fuzz/run_fuzz.sh fuzzes the same target from
# the CMake build, beside the wire and session targets.)
#
# Needs clang-15 and its libclang_rt.fuzzer-x86_64.a, which Debian 12 ships in
# libclang-common-15-dev (a dependency of clang-15):
#   apt-get install -y clang-15 libclang-common-15-dev
# plus libssl-dev, zlib1g-dev, libzstd-dev and libmsgpack-cxx-dev.
#
# Environment: OUT (work dir, default <repo>/build-co-fuzz), HOST_ELF (a
# hipcc-built binary whose bundles seed the corpus, default
# <repo>/build-co/tests/e2e/libkern.so if it exists), JOBS (parallel fuzzing
# jobs, default 1). Crash inputs land in $OUT (crash-*); exit status is
# libFuzzer's (0: no crash found).
set -euo pipefail

seconds=${1:-120}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${OUT:-$repo/build-co-fuzz}
host_elf=${HOST_ELF:-$repo/build-co/tests/e2e/libkern.so}
jobs=${JOBS:-1}
cxx=${CXX_FUZZ:-clang++-15}

rt=$($cxx -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a
if [[ ! -f $rt ]]; then
  echo "run_fuzz.sh: $rt is missing: apt-get install -y libclang-common-15-dev" >&2
  exit 2
fi

mkdir -p "$out/corpus" "$out/seeds"
lib_sources=(amdgpu_elf.cc bundle.cc elf_reader.cc host_fatbin.cc metadata.cc sha256.cc target_id.cc)
srcs=()
for s in "${lib_sources[@]}"; do srcs+=("$here/$s"); done
srcs+=("$repo/protocol/status.cc")
common=(-std=c++20 -g -DMSGPACK_NO_BOOST -I"$repo")
libs=(-lcrypto -lz -lzstd)

echo "building $out/code_object_fuzz with $cxx"
$cxx "${common[@]}" -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "${srcs[@]}" "$here/code_object_fuzz.cc" "${libs[@]}" -o "$out/code_object_fuzz"
$cxx "${common[@]}" -O1 "${srcs[@]}" "$here/code_object_seeds.cc" "${libs[@]}" -o "$out/code_object_seeds"

seed_args=("$out/seeds")
if [[ -f $host_elf ]]; then seed_args+=("$host_elf"); else echo "no $host_elf: constructed seeds only"; fi
"$out/code_object_seeds" "${seed_args[@]}"

cd "$out"
# -rss_limit_mb/-malloc_limit_mb: a CCOB may legitimately expand to the
# decompression cap; inputs of a few KiB never should reach these limits.
flags=(-max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1)
# With -jobs, libFuzzer forks workers logging to fuzz-N.log; one job runs here.
if (( jobs > 1 )); then flags+=(-jobs="$jobs" -workers="$jobs"); fi
exec ./code_object_fuzz corpus seeds "${flags[@]}"
