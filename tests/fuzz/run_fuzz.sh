#!/bin/bash
# run_fuzz.sh [SECONDS]: builds the fuzz targets with clang-15, libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/, configured as
# deploy/hipr-dev sanitize does) and fuzzes each for SECONDS (default 60),
# one after the other, from its generated seeds and the corpus earlier runs
# grew (README.md here).
#
# A target keeps going after a finding (libFuzzer -fork=1, one process at a
# time): every crash, hang, leak or out-of-memory is saved in
# BUILD/fuzz/<target>/ (crash-*, timeout-*, leak-*, oom-*) and classified
# against known_issues.txt. Exit 0: nothing but known issues; 1: something
# new (its report is printed); 2: it could not build or start.
#
# Environment: BUILD (the build dir, default <repo>/build-asan), TARGETS
# (default "wire_fuzz session_fuzz code_object_fuzz"), JOBS (build
# parallelism, default 2).
set -uo pipefail

seconds=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BUILD:-$repo/build-asan}
targets=${TARGETS:-wire_fuzz session_fuzz code_object_fuzz}
jobs=${JOBS:-2}
known=$here/known_issues.txt

log() { printf 'run_fuzz: %s\n' "$*" >&2; }

rt=$(clang++-15 -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a
if [[ ! -f $rt ]]; then
  log "$rt is missing: apt-get install -y clang-15 libclang-common-15-dev"
  exit 2
fi

if [[ ! -f $build/CMakeCache.txt ]] || ! grep -q '^HIPR_LIBFUZZER:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-15 -DCMAKE_CXX_COMPILER=clang++-15 \
    -DHIPR_SANITIZE=ON -DHIPR_LIBFUZZER=ON -DHIPR_E2E=OFF >/dev/null || exit 2
fi
build_targets=()
for t in $targets; do build_targets+=("$t" "${t%_fuzz}_seeds"); done
log "building ${build_targets[*]} in $build"
if ! cmake --build "$build" -j "$jobs" --target "${build_targets[@]}" >"$build/run_fuzz_build.log" 2>&1; then
  tail -30 "$build/run_fuzz_build.log"
  exit 2
fi

# Prints one line per finding in libFuzzer's log $2 of target $1: KNOWN (a
# line of known_issues.txt matches) or NEW. Returns 1 if any is NEW.
classify() {
  awk -v target="$1" -v known="$known" '
    BEGIN {
      while ((getline line < known) > 0) {
        if (line ~ /^[ \t]*(#|$)/) continue
        split(line, f, /[ \t]+/)
        if (f[1] == target) { n++; kind[n] = f[2]; frame[n] = f[3] }
      }
    }
    /== ?ERROR: |: runtime error: / { open = 1; stack = $0; next }
    open && /^SUMMARY: / {
      open = 0
      hit = 0
      for (i = 1; i <= n; i++) if (index($0, kind[i]) && index(stack, frame[i])) hit = i
      if (hit) { print "KNOWN (" kind[hit] " in " frame[hit] "): " $0 }
      else { print "NEW: " $0; print stack; bad = 1 }
      next
    }
    open { stack = stack "\n" $0 }
    END { exit bad }' "$2"
}

# Leaks are checked at the end of every input (LSan); -rss_limit_mb bounds a
# session's sim memory (2 x 64 MiB) and the sanitizers' own with room to
# spare; -timeout: one input is one short session.
flags=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" -max_len=262144
       -rss_limit_mb=3072 -malloc_limit_mb=2048 -timeout=20 -print_final_stats=1)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
artifacts() { ls "$1" | grep -E '^(crash|timeout|leak|oom|slow-unit)-' | sort; }
rc=0
for t in $targets; do
  bin=$(find "$build" -name "$t" -type f -perm -u+x | awk 'NR == 1')
  gen=$(find "$build" -name "${t%_fuzz}_seeds" -type f -perm -u+x | awk 'NR == 1')
  work=$build/fuzz/$t
  rm -rf "$work/seeds"
  mkdir -p "$work/corpus" "$work/seeds"
  if [[ $t == code_object_fuzz && -f $repo/build/tests/e2e/libkern.so ]]; then
    "$gen" "$work/seeds" "$repo/build/tests/e2e/libkern.so" || exit 2
  else
    "$gen" "$work/seeds" || exit 2
  fi
  before=$(artifacts "$work")
  log "$t: $seconds s"
  (cd "$work" && "$bin" corpus seeds "${flags[@]}" >"$work/fuzz.log" 2>&1)
  status=$?
  # libFuzzer's last progress line: runs, coverage, features, corpus,
  # exec/s and oom/timeout/crash counts.
  grep -E '^#[0-9]+: ' "$work/fuzz.log" | tail -1 | sed "s/^/$t: /"
  # The findings: the reports in the log, and each new input replayed (what
  # the first pass over the corpus finds is saved but not reported there).
  found=$(comm -13 <(echo "$before") <(artifacts "$work"))
  cp "$work/fuzz.log" "$work/findings.log"
  for a in $found; do
    (cd "$work" && timeout 300 "$bin" -timeout=20 -rss_limit_mb=3072 -malloc_limit_mb=2048 "$a" \
      >>"$work/findings.log" 2>&1)
  done
  verdicts=$(classify "$t" "$work/findings.log")
  classified=$?
  [[ -n $verdicts ]] && sed "s/^/$t: /" <<<"$verdicts"
  if ((classified != 0)); then
    rc=1
  elif [[ -n $found ]] && ! grep -q '^KNOWN' <<<"$verdicts"; then
    log "$t: $(wc -w <<<"$found") input(s) failed once but not when replayed: $found (in $work; see fuzz.log)"
    rc=1
  elif ((status != 0)) && [[ -z $found ]]; then
    log "$t: libFuzzer exited $status with no finding; see $work/fuzz.log"
    tail -5 "$work/fuzz.log" >&2
    rc=1
  fi
done
exit $rc
