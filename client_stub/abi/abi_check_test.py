#!/usr/bin/python3
"""hipr-abi-check against a library that needs more than the stub has, and against Debian's ROCm
libraries, which must need nothing the stub lacks.

  abi_check_test.py --abi-check BIN --stub STUB --newer DIR --newer-hiprtc FILE [--rocm-libs DIR]...

* --newer: a library built against a fake libamdhip64.so.7 that defines hipFutureFunction in a
  node hip_7.9, and a fake libhiprtc.so.7 that defines hiprtcVersion and hiprtcFutureFunction
  unversioned (abi/testdata/): the check must exit 1 and name exactly hipFutureFunction@hip_7.9
  and hiprtcFutureFunction, and count hipMalloc@hip_4.2 and hiprtcVersion, which the stub has,
  as needs met.
* --newer-hiprtc: that fake libhiprtc itself: two unversioned hiprtc* defined, and
  hiprtcFutureFunction, which the stub lacks, named.
* --rocm-libs: each directory of Debian's ROCm 6.4 or 7.2 libraries and libhiprtc
  (deploy/fetch-rocm.sh --libraries): exit 0, nothing missing, and each of the libraries that need
  libamdhip64 in both majors (NEED_RUNTIME) reported as needing it, with the HIP symbols they
  reference counted (so the check is not empty). Debian's libhiprtc.so.N must define its hiprtc*
  without a version (what makes a wheel's own libhiprtc lose to the preloaded stub: see
  docs/operations.md), every one of them also defined by the stub.
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
    ap.add_argument("--newer-hiprtc", required=True)
    ap.add_argument("--rocm-libs", action="append", default=[])
    args = ap.parse_args()
    failures = []

    rc, report = run(args, [args.newer])
    files = [f for f in report["files"] if f["hip_symbols"] > 0]
    expected = ["hipFutureFunction@hip_7.9", "hiprtcFutureFunction (unversioned, from libhiprtc)"]
    if rc != 1 or len(files) != 1 or sorted(files[0]["missing"]) != expected or \
            files[0]["hip_symbols"] != 2 or files[0]["hiprtc_symbols"] != 2:
        failures.append("newer library: exit %d, report %s; expected exit 1 and exactly %s missing of 2 HIP and "
                        "2 hiprtc references" % (rc, json.dumps(report), expected))
    else:
        print("newer library: hipFutureFunction@hip_7.9 and hiprtcFutureFunction named, hipMalloc@hip_4.2 and "
              "hiprtcVersion met")

    rc, report = run(args, [args.newer_hiprtc])
    files = report["files"]
    if rc != 1 or len(files) != 1 or files[0]["hiprtc_defined"] != 2 or files[0]["hiprtc_versions"] or \
            files[0]["missing"] != ["hiprtcFutureFunction (defined here, not by the stub)"]:
        failures.append("newer libhiprtc: exit %d, report %s; expected exit 1, 2 unversioned hiprtc* and "
                        "hiprtcFutureFunction named" % (rc, json.dumps(report)))
    else:
        print("newer libhiprtc: 2 unversioned hiprtc* defined, hiprtcFutureFunction named as not in the stub")

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
        # The premise of the hiprtc rule, from Debian's own libhiprtc: unversioned, nothing the stub lacks.
        hiprtc = [f for f in report["files"] if f["path"].rsplit("/", 1)[-1].startswith("libhiprtc.so.")]
        references = sum(f["hiprtc_symbols"] for f in report["files"])
        if len(hiprtc) != 1 or hiprtc[0]["hiprtc_defined"] < 15 or hiprtc[0]["hiprtc_versions"]:
            failures.append("%s: expected one libhiprtc.so.N defining 15 or more hiprtc* without a version: %s"
                            % (libs, json.dumps(hiprtc)))
        else:
            print("  %s: %d hiprtc* defined without a version, all in the stub; %d unversioned hiprtc* references "
                  "in the libraries, answered by the stub"
                  % (hiprtc[0]["path"].rsplit("/", 1)[-1], hiprtc[0]["hiprtc_defined"], references))

    if not args.rocm_libs:
        print("no --rocm-libs given (HIPR_ROCM_LIBRARY_DIRS is empty): Debian's ROCm libraries were not checked")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
