#!/usr/bin/python3
"""wheel_client: Python loading HIP extensions laid out as PyTorch's ROCm wheels lay out theirs.

    wheel_client.py PACKAGE_LIB_DIR

PACKAGE_LIB_DIR (torchlike/lib) holds libwheel_ext.so and libwheel_old.so (DT_NEEDED libamdhip64.so,
DT_RPATH $ORIGIN) and libamdhip64.so, a ROCm 6 runtime stand-in whose functions abort. Run under
LD_PRELOAD of the hipr stub alone: each extension's wheel_run() must pass (kernel results, ROCm 6
answers), and the stand-in must never be mapped (each extension and this script check the maps).
It also holds the wheel's own libhiprtc.so (unversioned hiprtc*, as the real ones) and
libwheel_rtc.so, linked against it as PyTorch's libcaffe2_nvrtc.so is: that library's hiprtc* must
be the stub's, while dlsym on the bundled file's own handle reaches the bundled functions, whose
compiler's dlopen("libamdhip64.so") reaches the stub.
Prints "E2E_PASS wheel_client" at the end; exits 1 with "E2E_FAIL ..." on any mismatch.
"""
import ctypes
import os
import select
import sys


def fail(message):
    sys.stdout.flush()
    sys.stderr.write("E2E_FAIL wheel_client.py: %s\n" % message)
    sys.stderr.flush()
    os._exit(1)


def mapped_files():
    files = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) > 5 and parts[5].startswith("/"):
                files.add(parts[5].strip())
    return files


def main():
    lib_dir = os.path.abspath(sys.argv[1])
    stand_in = os.path.join(lib_dir, "libamdhip64.so")
    if not os.path.isfile(stand_in):
        fail("%s is missing: the fixture needs a runtime file beside the extensions" % stand_in)
    # PyTorch imports its extensions with RTLD_GLOBAL | RTLD_LAZY.
    mode = os.RTLD_GLOBAL | os.RTLD_LAZY
    for name in ("libwheel_ext.so", "libwheel_old.so"):
        ext = ctypes.CDLL(os.path.join(lib_dir, name), mode=mode)
        if stand_in in mapped_files() or os.path.realpath(stand_in) in mapped_files():
            fail("loading %s mapped the runtime beside it (%s)" % (name, stand_in))
        if ext.wheel_run() != 0:
            fail("%s: wheel_run failed" % name)
        print("[wheel_client] %s: kernel, ROCm 6 pointer types and version, maps clean" % name)
    # The wheel bundles its own libhiprtc; ATen opens libcaffe2_nvrtc.so (linked against it) with
    # RTLD_LOCAL and takes the addresses of its hiprtc* references. They bind to the stub.
    stub = next((p for p in os.environ.get("LD_PRELOAD", "").replace(":", " ").split()
                 if "libhip_client_stub" in p), None)
    if stub is None:
        fail("LD_PRELOAD names no hipr stub: %r" % os.environ.get("LD_PRELOAD"))
    rtc = ctypes.CDLL(os.path.join(lib_dir, "libwheel_rtc.so"), mode=os.RTLD_LOCAL | os.RTLD_NOW)
    served = ctypes.create_string_buffer(4096)
    major = ctypes.c_int(-1)
    rc = rtc.wheel_rtc_run(served, ctypes.c_size_t(len(served)), ctypes.byref(major))
    if rc != 0:
        fail("libwheel_rtc.so: wheel_rtc_run returned %d" % rc)
    if os.path.realpath(served.value.decode()) != os.path.realpath(stub):
        fail("libwheel_rtc.so's hiprtcCreateProgram is served by %s, not by the stub %s" % (served.value, stub))
    if major.value != 9:
        fail("libwheel_rtc.so's hiprtcVersion says %d, not the stub's 9" % major.value)
    bundled_path = os.path.join(lib_dir, "libhiprtc.so")
    if os.path.realpath(bundled_path) not in mapped_files():
        fail("the bundled %s is not mapped, though libwheel_rtc.so needs it" % bundled_path)
    print("[wheel_client] libwheel_rtc.so: hiprtc* served by the stub; the bundled libhiprtc.so mapped, not called")
    # A program that opens the bundled file itself and looks its functions up on that handle gets them.
    bundled = ctypes.CDLL(bundled_path, mode=os.RTLD_LOCAL | os.RTLD_NOW)
    bundled.hiprtcGetErrorString.restype = ctypes.c_char_p
    if bundled.hiprtcGetErrorString(0) != b"bundled libhiprtc":
        fail("dlsym on the bundled libhiprtc's handle did not reach its own functions")
    if bundled.hiprtcCompileProgram(None, 0, None) != 0:
        fail("the bundled libhiprtc's compiler found no device through dlopen(\"libamdhip64.so\")")
    if bundled.bundled_runtime_file(served, ctypes.c_size_t(len(served))) != 0 or \
            os.path.realpath(served.value.decode()) != os.path.realpath(stub):
        fail("the bundled libhiprtc's dlopen(\"libamdhip64.so\") reached %s, not the stub" % served.value)
    print("[wheel_client] dlsym on the bundled libhiprtc: its own functions; its runtime lookup reaches the stub")
    # Triton's AMD driver dlopens torch/lib/libamdhip64.so by path and requires a driver major of 6 or
    # more: the stub serves the path itself, answering in the major of the file it names (read, never
    # loaded) to code that has no libamdhip64 of its own (ctypes here).
    hip = ctypes.CDLL(stand_in, mode=mode)
    if stand_in in mapped_files() or os.path.realpath(stand_in) in mapped_files():
        fail("dlopen(%s) mapped that file instead of serving the stub" % stand_in)
    version = ctypes.c_int(0)
    if hip.hipDriverGetVersion(ctypes.byref(version)) != 0 or version.value < 60000000:
        fail("hipDriverGetVersion through dlopen(%s) says %d, a ROCm 6 runtime file" % (stand_in, version.value))
    print("[wheel_client] dlopen of the bundled runtime's path: the stub, driver version %d" % version.value)
    for path in mapped_files():
        base = os.path.basename(path)
        if base.startswith(("libamdhip64", "libhsa-runtime64", "libhsakmt")):
            fail("a HIP runtime other than the stub is mapped: %s" % path)
    if os.environ.get("HIPR_E2E_HANDSHAKE"):
        print("E2E_PAUSE %d" % os.getpid(), flush=True)
        ready, _, _ = select.select([sys.stdin], [], [], 120)
        if not ready or not sys.stdin.readline():
            fail("no go-ahead from the driver on stdin")
    print("E2E_PASS wheel_client", flush=True)


if __name__ == "__main__":
    main()
