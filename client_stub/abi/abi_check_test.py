#!/usr/bin/python3
"""hipr-abi-check against a library that needs more than the stub has, and against Debian's ROCm
libraries, which must need nothing the stub lacks.

  abi_check_test.py --abi-check BIN --stub STUB --newer DIR [--rocm-libs DIR]...

* --newer: a library built against a fake libamdhip64.so.7 that defines hipFutureFunction in a
  node hip_7.9 (abi/testdata/): the check must exit 1 and name exactly hipFutureFunction@hip_7.9,
  and count hipMalloc@hip_4.2, which the stub has, as a need met.
* --rocm-libs: each directory of Debian's ROCm 6.4 or 7.2 libraries (deploy/fetch-rocm.sh
  --libraries): exit 0, nothing missing, and each of the libraries that need libamdhip64 in both
  majors (NEED_RUNTIME) reported as needing it, with the HIP symbols they reference counted (so
  the check is not empty).
"""

import argparse
import json
import subprocess
import sys

# The fetched libraries whose DT_NEEDED names libamdhip64 in both majors (hipBLAS reaches HIP
# through rocBLAS; hipRAND 6.4 names libamdhip64.so.6 but uses none of it, 7.2 does not name it).
NEED_RUNTIME = ("libMIOpen.so", "librocfft.so", "libhipfft.so", "librocrand.so", "libhipsolver.so", "libhipsparse.so")


def run(args, paths):
    proc = subprocess.run([args.abi_check, "--stub", args.stub, "--json", *paths], capture_output=True, text=True)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit("FAIL: hipr-abi-check printed no JSON (exit %d): %s" % (proc.returncode, proc.stderr))
    return proc.returncode, report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--abi-check", required=True)
    ap.add_argument("--stub", required=True)
    ap.add_argument("--newer", required=True)
    ap.add_argument("--rocm-libs", action="append", default=[])
    args = ap.parse_args()
    failures = []

    rc, report = run(args, [args.newer])
    files = [f for f in report["files"] if f["hip_symbols"] > 0]
    if rc != 1 or len(files) != 1 or files[0]["missing"] != ["hipFutureFunction@hip_7.9"] or \
            files[0]["hip_symbols"] != 2:
        failures.append("newer library: exit %d, report %s; expected exit 1 and exactly hipFutureFunction@hip_7.9 "
                        "missing of 2" % (rc, json.dumps(report)))
    else:
        print("newer library: hipFutureFunction@hip_7.9 named, hipMalloc@hip_4.2 met")

    for libs in args.rocm_libs:
        rc, report = run(args, [libs])
        needing = [f for f in report["files"] if f["needs_runtime"]]
        missing = sorted({m for f in report["files"] for m in f["missing"]})
        elsewhere = sorted({e for f in report["files"] for e in f["loads_elsewhere"]})
        symbols = sum(f["hip_symbols"] for f in needing)
        print("%s: %d files checked, %d need the HIP runtime (%d symbol references), %d missing; "
              "still loaded from elsewhere: %s" % (libs, report["files_checked"], len(needing), symbols, len(missing),
                                                   ", ".join(elsewhere) or "nothing"))
        for f in needing:
            print("  %s: %d" % (f["path"].rsplit("/", 1)[-1], f["hip_symbols"]))
        if rc != 0 or missing:
            failures.append("%s: exit %d, missing %s" % (libs, rc, missing))
        names = [f["path"].rsplit("/", 1)[-1] for f in needing]
        absent = [n for n in NEED_RUNTIME if not any(x.startswith(n) for x in names)]
        if absent or symbols < 100:
            failures.append("%s: %s not reported as needing the HIP runtime, %d symbol references in all"
                            % (libs, absent, symbols))

    if not args.rocm_libs:
        print("no --rocm-libs given (HIPR_ROCM_LIBRARY_DIRS is empty): Debian's ROCm libraries were not checked")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
