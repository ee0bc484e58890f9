#!/usr/bin/python3
"""Kernel twins from the installed prefix, the three ways a user builds them
(ctest installed_twins; docs/operations.md, "Kernel twins for the sim
device"):

  1. cmake --install the build into a fresh prefix;
  2. a CMake project outside the tree (cmake_project/) finds hipr with
     find_package(hipr) from that prefix alone and builds its programs and
     their twins: two sources with the program's own flags, a program without
     kernels (its twin says so and succeeds), a hiprtc program's code object
     (hipr::rtc_compile) and a kernel with inline assembly (the program
     builds; its twin alone fails, naming the kernel and the construct);
  3. a Makefile project (make_project/) builds its program with hipcc and its
     twins with the installed hipr-twin; hipr-twin on the assembly program
     builds the good source's twin and fails the other's alone;
  4. the installed hipr-worker --device sim runs every program through the
     installed hipr-run with those twins, and the programs check their
     results element by element.

  run_installed.py --build-dir BUILD --source-dir SRC --work-dir DIR
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time


class Failure(Exception):
    pass


def run(argv, cwd=None, env=None, timeout=900, expect_rc=0):
    print("+ " + " ".join(argv), flush=True)
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    out = p.stdout + p.stderr
    if expect_rc is not None and (p.returncode == 0) != (expect_rc == 0):
        raise Failure("%s exited %d (want %s):\n%s" % (" ".join(argv), p.returncode,
                                                      "0" if expect_rc == 0 else "non-zero", out[-6000:]))
    return out


def expect_in(text, needle, what):
    if needle not in text:
        raise Failure("%s: %r not in the output:\n%s" % (what, needle, text[-4000:]))


def clean_env():
    """No hint of the source tree: the programs find hipr through the prefix."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPR_") and k != "LD_PRELOAD"}
    return env


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", required=True)
    p.add_argument("--source-dir", required=True, help="tests/install in hipr's source tree")
    p.add_argument("--work-dir", required=True)
    args = p.parse_args()
    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")
    env = clean_env()

    # 1. The prefix.
    run(["cmake", "--install", args.build_dir, "--prefix", prefix])
    for path in ("bin/hipr-twin", "bin/hipr-inspect", "bin/hipr-worker", "bin/hipr-run", "bin/hipr-rtc-compile",
                 "lib/libhip_client_stub.so", "lib/cmake/hipr/hiprConfig.cmake", "share/hipr/twin/twin_rewrite.py",
                 "share/hipr/twin/hipr_twin_prelude.h", "share/hipr/twin/include/hip/hip_runtime.h"):
        if not os.path.exists(os.path.join(prefix, path)):
            raise Failure("the install has no " + path)
    # Every hip device module the build made (5.x, and 6.x/7.x where HIPR_ROCM_PREFIXES named
    # them), side by side; hipr-abi-check, run as installed, finds every HIP function they call
    # defined by the installed stub (the chain relies on it).
    modules = sorted(m for m in os.listdir(os.path.join(args.build_dir, "lib", "hipr-worker"))
                     if m.startswith("libhipr_device_hip") and m.endswith(".so"))
    for m in modules:
        if not os.path.exists(os.path.join(prefix, "lib", "hipr-worker", m)):
            raise Failure("the install has no lib/hipr-worker/" + m)
    out = run([os.path.join(prefix, "bin/hipr-abi-check"), os.path.join(prefix, "lib", "hipr-worker")], env=env)
    if "; 0 symbols missing" not in out or ("stub %s" % os.path.join(prefix, "lib", "libhip_client_stub.so")) not in out:
        raise Failure("hipr-abi-check on the installed hip device modules:\n" + out)
    print("installed hip device modules: %s; hipr-abi-check finds all they call in the stub" % ", ".join(modules))

    # 2. The CMake project, from a copy (nothing under hipr's tree).
    cproj = os.path.join(work, "cmake_project")
    shutil.copytree(os.path.join(args.source_dir, "cmake_project"), cproj)
    cbuild = os.path.join(work, "cmake_build")
    run(["cmake", "-S", cproj, "-B", cbuild, "-G", "Ninja", "-DCMAKE_PREFIX_PATH=" + prefix], env=env)
    run(["cmake", "--build", cbuild], env=env)  # The programs; no twin is part of ALL.
    for twin in ("scale_app", "rtc_app"):
        run(["cmake", "--build", cbuild, "--target", "simtwin_" + twin], env=env)
    out = run(["cmake", "--build", cbuild, "--target", "simtwin_host_only"], env=env)
    expect_in(out, "has no device code", "simtwin_host_only")
    out = run(["cmake", "--build", cbuild, "--target", "simtwin_asm_kernel"], env=env, expect_rc=1)
    expect_in(out, "lane_mask", "simtwin_asm_kernel names the kernel")
    expect_in(out, "inline assembly", "simtwin_asm_kernel names the construct")
    ctwins = os.path.join(cbuild, "sim-kernels")
    stamps = sorted(f for f in os.listdir(ctwins) if f.startswith("scale_app."))
    if stamps != ["scale_app.main.twin", "scale_app.scale.twin"]:
        raise Failure("scale_app's stamps: %s" % stamps)
    libraries = [f for f in os.listdir(ctwins) if f.endswith(".so")]
    if len(libraries) != 3:  # main.hip, scale.hip, rtc_kernel.hip
        raise Failure("%s holds %d twins, want 3: %s" % (ctwins, len(libraries), libraries))

    # 3. The Makefile project and hipr-twin.
    mproj = os.path.join(work, "make_project")
    shutil.copytree(os.path.join(args.source_dir, "make_project"), mproj)
    out = run(["make", "-C", mproj, "HIPR_PREFIX=" + prefix], env=env)
    expect_in(out, "no twin for", "hipr-twin on main.hip (no kernels)")
    expect_in(out, "vadd.hip -> ", "hipr-twin on vadd.hip")
    mtwins = os.path.join(mproj, "sim-kernels")
    if len([f for f in os.listdir(mtwins) if f.endswith(".so")]) != 1:
        raise Failure("%s: want exactly vadd.hip's twin: %s" % (mtwins, os.listdir(mtwins)))
    # One source's twin fails alone: scale.hip's is built, asm_kernel.hip's is not.
    partial = os.path.join(work, "partial-twins")
    out = run([os.path.join(prefix, "bin/hipr-twin"), "--binary", os.path.join(cbuild, "asm_kernel"),
               "--source", os.path.join(cproj, "asm_kernel.hip"), "--output-dir", partial], env=env, expect_rc=1)
    expect_in(out, "lane_mask", "hipr-twin names the kernel")
    out = run([os.path.join(prefix, "bin/hipr-twin"), "--binary", os.path.join(cbuild, "scale_app"),
               "--source", os.path.join(cproj, "scale.hip"), "--source", os.path.join(cproj, "no_such.hip"),
               "--output-dir", partial, "--", "-I", os.path.join(cproj, "include"), "-DOFFSET=7", "-O3"],
              env=env, expect_rc=1)
    expect_in(out, "no_such.hip", "hipr-twin names the failed source")
    if len([f for f in os.listdir(partial) if f.endswith(".so")]) != 1:
        raise Failure("%s: want scale.hip's twin alone: %s" % (partial, os.listdir(partial)))
    # The hiprtc code object through hipr-twin: the same twin as the CMake project's.
    rtc_twins = os.path.join(work, "rtc-twins")
    run([os.path.join(prefix, "bin/hipr-twin"), "--binary", os.path.join(cbuild, "rtc_kernel.co"),
         "--source", os.path.join(cproj, "rtc_kernel.hip"), "--output-dir", rtc_twins, "--", "-DALPHA=2"], env=env)
    rtc = os.listdir(rtc_twins)
    if len(rtc) != 1 or rtc[0] not in libraries:
        raise Failure("hipr-twin on rtc_kernel.co made %s, not one of %s" % (rtc, libraries))
    out = run([os.path.join(prefix, "bin/hipr-twin"), "--binary", os.path.join(cbuild, "host_only"),
               "--source", os.path.join(cproj, "host_only.hip"), "--output-dir", partial], env=env)
    expect_in(out, "no device code", "hipr-twin on a program without kernels")

    # 4. The installed worker runs them all.
    port_file = os.path.join(work, "worker.port")
    log = open(os.path.join(work, "worker.log"), "wb")
    worker = subprocess.Popen([os.path.join(prefix, "bin/hipr-worker"), "--device", "sim", "--listen", "127.0.0.1:0",
                               "--port-file", port_file, "--code-cache", os.path.join(work, "code-cache"),
                               "--sim-kernels", ctwins, "--sim-kernels", mtwins],
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 20
        port = None
        while port is None and time.monotonic() < deadline:
            if worker.poll() is not None:
                raise Failure("the worker exited at start-up:\n" + open(log.name).read())
            if os.path.exists(port_file) and open(port_file).read().strip().isdigit():
                port = int(open(port_file).read())
            time.sleep(0.05)
        if not port:
            raise Failure("the worker wrote no port")
        hipr_run = [os.path.join(prefix, "bin/hipr-run"), "--server", "127.0.0.1:%d" % port]
        for program, expect in ((os.path.join(cbuild, "scale_app"), "scale_app: PASS"),
                                (os.path.join(cbuild, "host_only"), "host_only: PASS"),
                                (os.path.join(cbuild, "rtc_app"), "rtc_app: PASS"),
                                (os.path.join(mproj, "vadd"), "vadd: PASS")):
            expect_in(run(hipr_run + [program], env=env, timeout=120), expect, program)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        log.close()
    print("installed_twins: PASS")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (Failure, subprocess.TimeoutExpired) as e:
        print("installed_twins: FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
