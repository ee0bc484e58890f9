#!/usr/bin/python3
"""hipr-smi against two real sim workers, with real sessions holding memory.

    smi_test.py --smi BIN --worker BIN --stub LIB

Worker A authenticates two tenants (alice, bob); worker B serves two sim
devices to the same tenants. Programs of alice and bob, each loading the stub
(ctypes: hipMalloc through the real library, over real sockets), hold device
memory while hipr-smi asks both workers as alice, then as bob. Checked, from
--json: each worker's version, device kind, transport and devices; the
sessions listed are exactly the asking tenant's (its holder, with the bytes it
holds, and hipr-smi itself), never the other tenant's; the worker-wide memory
counts both; an unreachable worker is reported and makes the exit status 1
while the others are still shown; the table form says the same. Stdlib only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20

# A program of one tenant: allocates ARGV[1] bytes ARGV[4] times on device
# ARGV[2] through the stub, says so, and holds them until its stdin closes.
# (From a device's second allocation on, the stub allocates in a lease the
# worker takes ahead: hipr-smi shows it.)
HOLDER = r"""
import ctypes, sys
hip = ctypes.CDLL(sys.argv[3])
assert hip.hipSetDevice(int(sys.argv[2])) == 0
for _ in range(int(sys.argv[4])):
    ptr = ctypes.c_void_p()
    rc = hip.hipMalloc(ctypes.byref(ptr), ctypes.c_size_t(int(sys.argv[1])))
    assert rc == 0, "hipMalloc: %d" % rc
assert hip.hipDeviceSynchronize() == 0
print("holding", flush=True)
sys.stdin.read()
"""


def start_worker(args, tmp, name, extra):
    port_file = os.path.join(tmp, name + ".port")
    proc = subprocess.Popen([args.worker, "--device", "sim", "--listen", "127.0.0.1:0", "--port-file", port_file,
                             "--log-level", "warn"] + extra)
    for _ in range(200):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return proc, "127.0.0.1:" + open(port_file).read().strip()
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("FAIL: worker %s did not start" % name)


def env_for(server, token):
    env = dict(os.environ)
    env.update({"HIPR_SERVER": server, "HIPR_TOKEN": token, "HIPR_LOG_LEVEL": "warn"})
    return env


def hold(args, server, token, size, device, count=1):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(size), str(device), args.stub, str(count)],
                         env=env_for(server, token),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != "holding":
        p.kill()
        raise SystemExit("FAIL: a holder of %d bytes on %s did not start (%r)" % (size, server, line))
    return p


def smi(args, servers, token, *extra):
    r = subprocess.run([args.smi, "--server", ",".join(servers)] + list(extra), env=env_for(servers[0], token),
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def check_tenant(args, a, b, tenant, token, held_a, held_b_dev1, both_a):
    rc, out, err = smi(args, [a, b], token, "--json")
    check(rc == 0, "hipr-smi as %s exited %d: %s" % (tenant, rc, err))
    workers = json.loads(out)["workers"]
    check([w["server"] for w in workers] == [a, b], "workers in the order given: %s" % out)
    for w in workers:
        check("error" not in w and "status_error" not in w, "worker %s answered: %s" % (w["server"], w))
        check(w["device_kind"] == "sim" and w["transport"] == "tcp" and w["worker_version"], "hello facts: %s" % w)
        check(w["tenant"] == tenant, "tenant shown as %r, wanted %r" % (w["tenant"], tenant))
        check(w["health"] == "the sim device has no sensors", "why no readings: %r" % w["health"])
        for d in w["devices"]:
            check(d["name"] and d["target"].startswith("gfx") and d["memory_total"] > 0, "device facts: %s" % d)
            check(d["temperature_c"] is None and d["power_w"] is None and d["busy_percent"] is None,
                  "the sim has no sensors, yet hipr-smi shows readings: %s" % d)
        mine = [s for s in w["sessions"] if s["this"]]
        check(len(mine) == 1 and mine[0]["session_id"] == w["session_id"], "hipr-smi's own session: %s" % w)
        check(all(s["leased"] == 0 for s in w["sessions"]), "one allocation each leases nothing: %s" % w)
        others = sorted(s["memory"] for s in w["sessions"] if not s["this"])
        wanted = held_a if w["server"] == a else held_b_dev1
        check(others == wanted, "%s's sessions on %s hold %s, wanted %s (another tenant's shown, or one missing)" %
              (tenant, w["server"], others, wanted))
    check(len(workers[1]["devices"]) == 2, "worker B serves two sim devices: %s" % workers[1]["devices"])
    check(workers[0]["worker_memory_used"] == both_a,
          "worker A's memory of all sessions: %d, wanted %d" % (workers[0]["worker_memory_used"], both_a))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smi", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--stub", required=True)
    args = ap.parse_args()
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        auth = os.path.join(tmp, "tenants")
        with open(auth, "w") as f:
            f.write("alice alice-secret-0123456789\nbob bob-secret-0123456789\n")
        os.chmod(auth, 0o600)
        try:
            wa, a = start_worker(args, tmp, "a", ["--auth-file", auth])
            wb, b = start_worker(args, tmp, "b", ["--auth-file", auth, "--sim-devices", "2"])
            procs += [wa, wb]
            alice, bob = "alice:alice-secret-0123456789", "bob:bob-secret-0123456789"
            procs.append(hold(args, a, alice, 64 * MIB, 0))
            procs.append(hold(args, a, bob, 32 * MIB, 0))
            procs.append(hold(args, b, alice, 16 * MIB, 1))
            check_tenant(args, a, b, "alice", alice, [64 * MIB], [16 * MIB], 96 * MIB)
            check_tenant(args, a, b, "bob", bob, [32 * MIB], [], 96 * MIB)

            # The table a person reads says the same.
            rc, out, err = smi(args, [a], alice)
            check(rc == 0, "table form exited %d: %s" % (rc, err))
            for text in ("sim device", "transport tcp", "sessions of tenant 'alice'", "(this hipr-smi)", "64.0 MiB",
                         "no sensor readings"):
                check(text in out, "the table lacks %r:\n%s" % (text, out))
            check("32.0 MiB" not in out, "the table shows bob's session to alice:\n%s" % out)

            # A worker that is not there: reported, the other still shown, exit 1.
            rc, out, err = smi(args, ["127.0.0.1:1", a], alice, "--json")
            workers = json.loads(out)["workers"]
            check(rc == 1, "an unreachable worker should make the exit status 1, not %d" % rc)
            check("error" in workers[0] and "refused" in workers[0]["error"], "unreachable worker: %s" % workers[0])
            check("error" not in workers[1] and workers[1]["tenant"] == "alice", "the reachable one: %s" % workers[1])

            # A wrong credential: a clear refusal, not a listing.
            rc, out, err = smi(args, [a], "alice:wrong-secret-0123456789", "--json")
            w = json.loads(out)["workers"][0]
            check(rc == 1 and "error" in w and "sessions" not in w, "a wrong secret was not refused: %s" % out)
            # Two allocations: the second is placed in a lease, which the
            # session's memory includes and hipr-smi tells apart.
            procs.append(hold(args, b, bob, MIB, 0, count=2))
            rc, out, err = smi(args, [b], bob, "--json")
            held = [s for s in json.loads(out)["workers"][0]["sessions"] if not s["this"]]
            check(rc == 0 and len(held) == 1, "bob's session on B: %s %s" % (out, err))
            check(held[0]["memory"] == 65 * MIB and held[0]["leased"] == 63 * MIB,
                  "two 1 MiB allocations, the second in a 64 MiB lease: %s" % held[0])
            rc, out, err = smi(args, [b], bob)
            check(rc == 0 and "63.0 MiB of it leased, not allocated yet" in out, "the table: %s" % out)
            # No worker named at all: usage error.
            r = subprocess.run([args.smi], env={k: v for k, v in os.environ.items() if k != "HIPR_SERVER"},
                               capture_output=True, text=True, timeout=30)
            check(r.returncode == 2 and "HIPR_SERVER" in r.stderr, "no worker named: %d %s" % (r.returncode, r.stderr))
        finally:
            for p in reversed(procs):
                if p.stdin:
                    p.stdin.close()
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    print("smi_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
