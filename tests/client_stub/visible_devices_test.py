#!/usr/bin/python3
"""HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES on the
client select among a real sim worker's devices as ROCm selects among local
GPUs.

    visible_devices_test.py --worker BIN --stub LIB

One worker serves three sim devices (PCI buses c1, c2, c3). Each case runs a
fresh program that loads the real stub (ctypes) with the variables set, and
reads what HIP says: the device count, each device's PCI bus id and UUID,
and that a memset and copy-back on device 0 work on the selection.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smi_test import start_worker  # noqa: E402

PROGRAM = r"""
import ctypes, json, sys
hip = ctypes.CDLL(sys.argv[1])
count = ctypes.c_int(-1)
rc = hip.hipGetDeviceCount(ctypes.byref(count))
out = {"rc": rc, "count": count.value, "buses": [], "uuids": []}
if rc == 0:
    for d in range(count.value):
        bus = ctypes.create_string_buffer(32)
        assert hip.hipDeviceGetPCIBusId(bus, 32, d) == 0
        out["buses"].append(bus.value.decode())
        uuid = ctypes.create_string_buffer(16)
        assert hip.hipDeviceGetUuid(uuid, d) == 0
        out["uuids"].append(uuid.raw.decode("latin-1"))
    # Work on device 0 lands on the device selected.
    assert hip.hipSetDevice(0) == 0
    p = ctypes.c_void_p()
    assert hip.hipMalloc(ctypes.byref(p), ctypes.c_size_t(4096)) == 0
    assert hip.hipMemset(p, 0x5a, ctypes.c_size_t(4096)) == 0
    back = (ctypes.c_ubyte * 4096)()
    assert hip.hipMemcpy(back, p, ctypes.c_size_t(4096), 2) == 0  # hipMemcpyDeviceToHost
    out["memset_ok"] = all(b == 0x5a for b in back)
print(json.dumps(out))
"""


def run(args, server, **env_vars):
    env = {k: v for k, v in os.environ.items() if not k.endswith("VISIBLE_DEVICES")}
    env.update({"HIPR_SERVER": server, "HIPR_LOG_LEVEL": "error", "HIPR_CONNECT_RETRY_S": "0"})
    env.update(env_vars)
    r = subprocess.run([sys.executable, "-c", PROGRAM, args.stub], env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit("FAIL: the program with %s died: %s" % (env_vars, r.stderr))
    return json.loads(r.stdout.strip().splitlines()[-1])


def expect(args, server, buses, **env_vars):
    got = run(args, server, **env_vars)
    want = ["0000:%s:00.0" % b for b in buses]
    if got["rc"] != 0 or got["buses"] != want or not got["memset_ok"]:
        raise SystemExit("FAIL: with %s HIP shows %s, wanted buses %s" % (env_vars, got, want))
    print("ok: %s -> %s" % (env_vars or "nothing set", ", ".join(buses)))
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True)
    ap.add_argument("--stub", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        class Paths:
            worker = args.worker
        proc, server = start_worker(Paths, tmp, "three", ["--sim-devices", "3"])
        try:
            every = expect(args, server, ["c1", "c2", "c3"])
            expect(args, server, ["c3", "c1"], HIP_VISIBLE_DEVICES="2,0")
            expect(args, server, ["c2"], HIP_VISIBLE_DEVICES="1,7,0")  # The list ends at the first invalid entry.
            expect(args, server, ["c2", "c3"], HIP_VISIBLE_DEVICES="1,1,2")  # Twice counts once.
            expect(args, server, ["c3"], CUDA_VISIBLE_DEVICES="2")
            expect(args, server, ["c2"], HIP_VISIBLE_DEVICES="1", CUDA_VISIBLE_DEVICES="2")  # HIP's wins.
            expect(args, server, ["c1", "c2", "c3"], HIP_VISIBLE_DEVICES="")  # Empty: unset.
            expect(args, server, ["c3"], ROCR_VISIBLE_DEVICES="1,2", HIP_VISIBLE_DEVICES="1")  # HIP's over ROCr's.
            third = every["uuids"][2]
            got = expect(args, server, ["c3", "c1"], HIP_VISIBLE_DEVICES="GPU-%s,0" % third)
            if got["uuids"][0] != third:
                raise SystemExit("FAIL: the device chosen by UUID reports UUID %r, not %r" % (got["uuids"][0], third))
            none = run(args, server, HIP_VISIBLE_DEVICES="5")
            if none["rc"] != 100 or none["count"] > 0:  # hipErrorNoDevice
                raise SystemExit("FAIL: a selection of no device should give hipErrorNoDevice: %s" % none)
            print("ok: HIP_VISIBLE_DEVICES=5 -> hipErrorNoDevice")
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print("visible_devices_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
