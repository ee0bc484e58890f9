#!/usr/bin/python3
"""ctypes client: a Python program that loads HIP the way ctypes-based tools do.

Run under LD_PRELOAD of the hipr stub (run_e2e.py does): ctypes.CDLL("libamdhip64.so.5")
must hand back the stub (it interposes dlopen), and a 1 MiB round trip must come back intact.
Checks its own /proc/self/maps: the stub is mapped, the real libamdhip64 / HSA runtime are not.
Prints "E2E_PASS ctypes_client" at the end; exits 1 with "E2E_FAIL ..." on any mismatch.
Under the driver (HIPR_E2E_HANDSHAKE set) it prints "E2E_PAUSE <pid>" and waits for one line
on stdin before exiting, so the driver can read /proc/<pid>/maps of the live process.
"""
import ctypes
import os
import select
import sys

HIP_SUCCESS = 0
HIP_MEMCPY_HOST_TO_DEVICE = 1
HIP_MEMCPY_DEVICE_TO_HOST = 2
STUB_FILE = "libhip_client_stub.so"
REAL_RUNTIME_PREFIXES = ("libamdhip64", "libhsa-runtime64", "libhsakmt")


def fail(message):
    sys.stdout.flush()
    sys.stderr.write("E2E_FAIL ctypes_client.py: %s\n" % message)
    sys.stderr.flush()
    os._exit(1)


def read_maps():
    """[(start, end, perms, dev, inode, path)] of this process."""
    maps = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            if path.endswith(" (deleted)"):  # Replaced on disk while mapped (e.g. the stub rebuilt).
                path = path[:-len(" (deleted)")]
            maps.append((start, end, parts[1], parts[3], parts[4], path))
    return maps


def mapping_of(address):
    for start, end, perms, _, _, path in read_maps():
        if start <= address < end:
            return perms, path
    return None, None


def main():
    hip = ctypes.CDLL("libamdhip64.so.5")
    errname = hip.hipGetErrorName
    errname.restype = ctypes.c_char_p
    errname.argtypes = [ctypes.c_int]

    def check(call, *args):
        err = call(*args)
        if err != HIP_SUCCESS:
            fail("%s returned %s (%d)" % (call.__name__, errname(err).decode(), err))

    # The handle is the stub: its hipMalloc lies in the stub's file. So do the handles of the
    # names that do not match the stub's SONAME, which only the stub's dlopen can redirect.
    malloc_address = ctypes.cast(hip.hipMalloc, ctypes.c_void_p).value
    for name in ("libamdhip64.so.5", "libamdhip64.so", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"):
        other = hip if name == "libamdhip64.so.5" else ctypes.CDLL(name)
        address = ctypes.cast(other.hipMalloc, ctypes.c_void_p).value
        _, path = mapping_of(address)
        if path is None or os.path.basename(path) != STUB_FILE:
            fail("ctypes.CDLL(%r).hipMalloc (%#x) lies in %r, not the stub" % (name, address, path))
        if address != malloc_address:
            fail("ctypes.CDLL(%r).hipMalloc is %#x, libamdhip64.so.5's is %#x" % (name, address, malloc_address))

    count = ctypes.c_int(-1)
    check(hip.hipGetDeviceCount, ctypes.byref(count))
    if count.value < 1:
        fail("device count %d" % count.value)

    free0, total0 = ctypes.c_size_t(0), ctypes.c_size_t(0)
    check(hip.hipMemGetInfo, ctypes.byref(free0), ctypes.byref(total0))
    if not 0 < free0.value <= total0.value:
        fail("hipMemGetInfo: free %d of %d" % (free0.value, total0.value))

    n = 1 << 20
    pattern = bytes((i * 131 + (i >> 9) * 7 + 3) & 0xFF for i in range(n))
    src = ctypes.create_string_buffer(pattern, n)
    dst = ctypes.create_string_buffer(n)
    dev = ctypes.c_void_p()
    check(hip.hipMalloc, ctypes.byref(dev), ctypes.c_size_t(n))
    if not dev.value:
        fail("hipMalloc returned a null pointer")
    perms, path = mapping_of(dev.value)
    if perms is None or not perms.startswith("---"):
        fail("device address %#x is host-accessible (mapping %r %r)" % (dev.value, perms, path))
    free1, total1 = ctypes.c_size_t(0), ctypes.c_size_t(0)
    check(hip.hipMemGetInfo, ctypes.byref(free1), ctypes.byref(total1))
    if free1.value + n > free0.value:
        fail("free memory %d with 1 MiB allocated, %d before" % (free1.value, free0.value))

    check(hip.hipMemcpy, dev, src, ctypes.c_size_t(n), HIP_MEMCPY_HOST_TO_DEVICE)
    check(hip.hipMemcpy, dst, dev, ctypes.c_size_t(n), HIP_MEMCPY_DEVICE_TO_HOST)
    if dst.raw != pattern:
        first = next(i for i in range(n) if dst.raw[i] != pattern[i])
        fail("round trip: byte %d is %#x, expected %#x" % (first, dst.raw[first], pattern[first]))
    check(hip.hipFree, dev)

    free2, total2 = ctypes.c_size_t(0), ctypes.c_size_t(0)
    check(hip.hipMemGetInfo, ctypes.byref(free2), ctypes.byref(total2))
    if free2.value != free0.value or total2.value != total0.value:
        fail("hipMemGetInfo after hipFree: %d of %d, at the start %d of %d"
             % (free2.value, total2.value, free0.value, total0.value))

    # Nothing of the real runtime is mapped; exactly one stub file is.
    stub_files = set()
    for _, _, _, dev, inode, path in read_maps():
        base = os.path.basename(path)
        if base.startswith(REAL_RUNTIME_PREFIXES):
            fail("the real HIP runtime is mapped: %s" % path)
        if base == STUB_FILE:
            stub_files.add((dev, inode))
    if len(stub_files) != 1:
        fail("%d stub files mapped" % len(stub_files))
    print("[ctypes_client] %d device(s); 1 MiB round trip OK; free memory back to %d of %d"
          % (count.value, free2.value, total2.value))
    print("maps: the stub is mapped once; no real libamdhip64 / libhsa-runtime64 / libhsakmt")

    if os.environ.get("HIPR_E2E_HANDSHAKE"):
        print("E2E_PAUSE %d" % os.getpid(), flush=True)
        ready, _, _ = select.select([sys.stdin], [], [], 120)
        if not ready or not sys.stdin.readline():
            fail("no go-ahead from the driver on stdin")
    print("E2E_PASS ctypes_client", flush=True)


if __name__ == "__main__":
    main()
