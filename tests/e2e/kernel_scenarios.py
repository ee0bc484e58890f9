"""Kernel scenarios of run_e2e.py: launches through every path, the module API, code-object
shipping and its cache, and kernels without a twin. Mixed into run_e2e.Scenario. Stdlib only."""
import hashlib
import json
import os
import re
import shutil
import subprocess

import time

from e2e_harness import Failure, Worker, client_env, cpu_ticks, describe_rc, log, run_to_pass, Program

# What the worker logs for each module it loads (worker_service/session/session_modules.cc).
MODULE_LOG = re.compile(r"session (\d+): module (\d+) '([^']*)' \(([0-9a-f]{64}), (\d+) bytes\) from ([a-z (4)]+):")


# The sim worker's default device (an MI250X).
SIM_TARGET = "gfx90a:sramecc+:xnack-"

# api_table rows that do not run against the chain's hip device, and why (docs/operations.md).
_NO_SHAREABLE = ("the hip device does not support shareable memory handles yet: the runtime's are file "
                 "descriptors of one session process, which another session cannot open")
CHAIN_SKIPPED_ROWS = {
    "hipMemExportToShareableHandle": _NO_SHAREABLE,
    "hipMemImportFromShareableHandle": _NO_SHAREABLE,
}


def compatible(code_target, device_target=SIM_TARGET):
    """Target-id rule: same processor; a feature the code pins (+/-) is not pinned otherwise."""
    code = code_target.split(":")
    device = device_target.split(":")
    if code[0] != device[0]:
        return False
    pinned = {f[:-1]: f[-1] for f in device[1:]}
    return all(pinned.get(f[:-1], f[-1]) == f[-1] for f in code[1:])


def roc_obj_entry_sha256(path, target=SIM_TARGET):
    """SHA-256 of the entry of the program's fat binary that runs on `target`, located by Debian's
    roc-obj-ls (not by hipr's own parser) and read straight from the file."""
    out = subprocess.run(["roc-obj-ls", path], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise Failure("roc-obj-ls %s failed: %s" % (path, out.stderr.strip()))
    digests = []
    for line in out.stdout.splitlines():
        m = re.search(r"hipv4-amdgcn-amd-amdhsa--(\S+)\s+file://.*#offset=(\d+)&size=(\d+)", line)
        if m and compatible(m.group(1), target):
            with open(path, "rb") as f:
                f.seek(int(m.group(2)))
                digests.append(hashlib.sha256(f.read(int(m.group(3)))).hexdigest())
    if len(digests) != 1:
        raise Failure("roc-obj-ls shows %d %s entries in %s:\n%s" % (len(digests), target, path, out.stdout))
    return digests[0]


def bundle_entry_sha256(path, tmp, target="gfx90a"):
    """SHA-256 of the `target` entry of a bare offload bundle (hipcc --genco), extracted by clang's
    own clang-offload-bundler-15 (roc-obj-ls reads only host binaries)."""
    out_path = os.path.join(tmp, os.path.basename(path) + "." + target)
    r = subprocess.run(["clang-offload-bundler-15", "--type=o", "--unbundle", "--input=" + path,
                        "--output=" + out_path, "--targets=hipv4-amdgcn-amd-amdhsa--" + target],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise Failure("clang-offload-bundler-15 --unbundle %s failed: %s" % (path, r.stderr.strip()))
    with open(out_path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def module_loads(worker):
    """(session, module, name, sha256, bytes, source) for every module the worker loaded."""
    return [m.groups() for m in MODULE_LOG.finditer(worker.log_text())]


class KernelScenarios:
    def scenario_kernels(self):
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        run_to_pass("kernels", [self.build.program("kernels")], env, timeout=200)
        program = run_to_pass("kernels --printf", [self.build.program("kernels"), "--printf"], env, timeout=60)
        out = program.text("out")
        for block in (0, 1):
            want = "kernel says hello from block %d: value=42" % block
            if out.count(want) != 1:
                raise Failure("device printf: expected the line %r once on the client's stdout, got:\n%s"
                              % (want, "\n".join(out)))
        if out.index("[kernels] synchronized after say_hello") < max(
                out.index(l) for l in out if "kernel says hello" in l):
            raise Failure("device printf output arrived after the synchronize returned:\n%s" % "\n".join(out))
        log("device printf reached the client's stdout before hipDeviceSynchronize returned")
        self.report_worker_errors(w)

    def scenario_module_api(self):
        self.build.check_runtime(need_dropin=True)
        w = self.worker()
        co_file = os.path.join(self.build.bin, "module_kernels.co")
        if not os.path.isfile(co_file):
            raise Failure("%s is missing: build the project first" % co_file)
        for mode in ("preload", "dropin"):
            run_to_pass("module_api (%s)" % mode, [self.build.program("module_api"), co_file],
                        client_env(self.build, w.server, mode), timeout=120)
        # Answered as to a 6.x caller (launch limits differ: module_api.hip).
        env = client_env(self.build, w.server, "preload")
        env["HIPR_ABI_MAJOR"] = "6"
        run_to_pass("module_api (preload, 6.x answers)", [self.build.program("module_api"), co_file], env,
                    timeout=120)

    def scenario_code_shipping(self):
        """A first run ships exactly the program's gfx90a code object (by SHA-256 against roc-obj's
        extraction); a second run ships nothing; a restarted worker still has it."""
        self.build.check_runtime()
        program = self.build.program("kernels")
        want = roc_obj_entry_sha256(program)
        cache = os.path.join(self.tmp, "shared-code-cache")
        w = self.worker("worker", ["--code-cache", cache])
        env = client_env(self.build, w.server, "preload")
        run_to_pass("kernels (first run)", [program], env, timeout=200)
        first = module_loads(w)
        shipped = [l for l in first if l[5].startswith("the client")]
        if len(shipped) != 1 or shipped[0][3] != want:
            raise Failure("the first run shipped %s; expected exactly the gfx90a entry %s" % (
                [(l[2], l[3], l[5]) for l in shipped], want))
        if shipped[0][5] != "the client (lz4)":
            raise Failure("the code object travelled uncompressed (%s)" % shipped[0][5])
        log("first run shipped one code object, %s (%s bytes), lz4-compressed" % (want[:16], shipped[0][4]))
        run_to_pass("kernels (second run)", [program], env, timeout=200)
        second = module_loads(w)[len(first):]
        if not second or any(not l[5].startswith("the code cache") for l in second):
            raise Failure("the second run did not load from the cache: %s" % second)
        w.stop()
        w2 = self.worker("restarted", ["--code-cache", cache])
        run_to_pass("kernels (after a restart)", [program], client_env(self.build, w2.server, "preload"), 200)
        third = module_loads(w2)
        if not third or any(l[3] != want or not l[5].startswith("the code cache") for l in third):
            raise Failure("after a restart the module did not come from the disk cache: %s" % third)
        log("second run and a restarted worker shipped nothing (cache hits)")

    def scenario_missing_twin(self):
        self.build.check_runtime()
        w = self.worker("worker", ["--no-twins"])
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("kernel_user --no-twin", [self.build.program("kernel_user"), "--no-twin"], env, 60)
        err = "\n".join(program.text("err"))
        if "e2e_scale" not in err or "twin" not in err:
            raise Failure("the client's log does not name the kernel without a twin:\n%s" % err)
        log("a launch without a twin failed with hipErrorNoBinaryForGpu, naming the kernel")

    def scenario_twin_mismatch(self):
        """A twin file that stands for another code object is refused: the worker checks the hash the
        twin records, so the kernels are unavailable and the client says why."""
        self.build.check_runtime()
        kern_sha = roc_obj_entry_sha256(os.path.join(self.build.bin, "libkern.so"))
        other_sha = bundle_entry_sha256(os.path.join(self.build.bin, "module_kernels.co"), self.tmp)
        if kern_sha == other_sha:
            raise Failure("libkern.so and module_kernels.co have the same code object")
        other = os.path.join(self.build.twins, other_sha + ".so")
        if not os.path.isfile(other):
            raise Failure("the twin %s is missing: build the project first" % other)
        twins = os.path.join(self.tmp, "forged-twins")
        os.makedirs(twins)
        shutil.copy(other, os.path.join(twins, kern_sha + ".so"))  # module_kernels' twin under libkern's name.
        w = self.worker("worker", ["--no-twins", "--sim-kernels", twins])
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("kernel_user --no-twin", [self.build.program("kernel_user"), "--no-twin"], env, 60)
        err = "\n".join(program.text("err"))
        if kern_sha not in err or "e2e_scale" not in err:
            raise Failure("the client's log does not explain the refused twin:\n%s" % err)
        log("a twin recording another code object's hash was refused")

    def scenario_rocm_libs(self):
        """Debian's librocsparse and librocrand dlopened through the stub: thousands of
        registrations ship nothing; one rocrand call ships exactly one code object, the gfx90a entry
        of librocrand's bundle (SHA-256 against roc-obj-ls's offsets), and its launch fails with a
        missing-twin error naming a kernel of that code object."""
        self.build.check_runtime()
        lib_dir = "/usr/lib/x86_64-linux-gnu"
        rocrand = os.path.join(lib_dir, "librocrand.so.1")
        for lib in ("librocsparse.so.0", "librocrand.so.1"):
            if not os.path.isfile(os.path.join(lib_dir, lib)):
                raise Failure("%s is missing: install librocsparse0 and librocrand1 (deploy/hipr-dev does)" % lib)
        want = roc_obj_entry_sha256(rocrand)
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        env["HIPR_STATS"] = "1"
        program = run_to_pass("rocm_libs", [self.build.program("rocm_libs")], env, timeout=120)
        out = program.text("out")
        err = "\n".join(program.text("err"))
        for line in out:
            m = re.match(r"\[rocm_libs\] dlopen\((\S+)\) took ([0-9.]+) s", line)
            if m and float(m.group(2)) >= 1.0:
                raise Failure("dlopen of %s (its kernel registrations) took %s s" % (m.group(1), m.group(2)))
        loads = module_loads(w)
        if len(loads) != 1 or loads[0][3] != want or not loads[0][5].startswith("the client"):
            raise Failure("expected exactly one code object shipped, librocrand's gfx90a entry %s; the worker "
                          "loaded %s" % (want, [(l[2], l[3], l[5]) for l in loads]))
        m = re.search(r"kernel '([^']+)' cannot run on device 0: the sim device has no usable kernel twin", err)
        if not m:
            raise Failure("the client did not report the missing twin:\n%s" % err)
        inspect = subprocess.run([self.build.inspect, "--json", "--target", "gfx90a", rocrand],
                                 capture_output=True, text=True, timeout=120)
        if inspect.returncode != 0:
            raise Failure("hipr-inspect %s failed: %s" % (rocrand, inspect.stderr))
        kernels = set()
        for bundle in json.loads(inspect.stdout)["bundles"]:
            for entry in bundle["entries"]:
                if entry["sha256"] == want and entry["code_object"]:
                    kernels.update(k["name"] for k in entry["code_object"]["kernels"])
        if m.group(1) not in kernels:
            raise Failure("the refused kernel %s is not in the shipped code object" % m.group(1))
        # HIPR_STATS=1: the stub's own count of what happened.
        reg = re.search(r"registrations: (\d+) fat binaries, (\d+) kernels, \d+ variables, ([0-9.]+) s", err)
        if not reg:
            raise Failure("no registration stats (HIPR_STATS=1) on the client's stderr:\n%s" % err)
        if int(reg.group(2)) < 12000 or float(reg.group(3)) >= 1.0:
            raise Failure("registrations: %s kernels in %s s; expected about 12,000 in well under a second"
                          % (reg.group(2), reg.group(3)))
        if not re.search(r"modules: 1 loaded, 1 shipped", err):
            raise Failure("the stub's stats do not show exactly one module shipped:\n%s" % err)
        log("rocm_libs: %s fat binaries, %s kernels registered in %s s; one code object shipped (%s, %s bytes); "
            "launch of %s refused for lack of a twin" % (reg.group(1), reg.group(2), reg.group(3), want[:16],
                                                         loads[0][4], m.group(1)))

    def scenario_managed(self):
        """__managed__ variables: host code uses the stub's mirrors, kernels the worker's device copies
        (managed.hip checks every value); the client's debug log shows each device copy made once."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        env["HIPR_LOG_LEVEL"] = "debug"
        program = run_to_pass("managed", [self.build.program("managed")], env, timeout=120)
        err = "\n".join(program.text("err"))
        made = re.findall(r"__managed__ variable '(\w+)' \((\d+) bytes\): device copy at 0x[0-9a-f]+", err)
        want = {("counter", "4"), ("ramp", "256"), ("pair", "8"), ("big", "1048576")}
        if sorted(made) != sorted(want):
            raise Failure("expected one device copy per managed variable %s; the client made %s"
                          % (sorted(want), made))
        # The allocation's read-backs: on the sim, which watches managed memory
        # where the kernel can tell, the second brings only the pages written
        # since the first (the kernel's two, and the one the host pushed); the
        # first is whole, since clearing the allocation wrote every page.
        reads = [int(n) for n in re.findall(r"allocation at 0x[0-9a-f]+ \(1048576 bytes\): read back (\d+) bytes", err)]
        if len(reads) != 2:
            raise Failure("expected the 1 MiB allocation to be read back after each of two steps; the client logged %s"
                          % reads)
        if w.device == "sim" and "no write tracking" not in w.log_text() and reads[1] != 3 * 4096:
            raise Failure("the sim watches managed memory, so the second read-back should bring three pages, "
                          "not %s bytes" % reads[1])
        log("managed: 4 variables mirrored, each device copy made once; the allocation read back as %s bytes"
            % reads)

    def scenario_threads(self):
        """One client thread's hipStreamSynchronize must not stop another thread's copy from reaching
        the device (threads.hip: its kernel spins until that copy sets a flag; a watchdog fails it)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("threads", [self.build.program("threads")], env, timeout=90)
        lines = [l for l in program.text("out") if l.startswith("A waited")]
        if len(lines) != 2:
            raise Failure("expected the async and the blocking round, got:\n%s" % "\n".join(program.text("out")))
        for line in lines:
            log("threads: %s" % line)

    def scenario_per_thread(self):
        """-fgpu-default-stream=per-thread: each host thread's default stream is its own (the _spt
        entry points); per_thread.hip deadlocks (its watchdog fails it) if they are one stream."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        run_to_pass("per_thread", [self.build.program("per_thread")], env, timeout=90)
        spt = subprocess.run(["nm", "-D", self.build.program("per_thread")], capture_output=True, text=True).stdout
        for name in ("hipLaunchKernel_spt", "hipMemcpy_spt", "hipStreamSynchronize_spt"):
            if name not in spt:
                raise Failure("per_thread does not call %s: not built with per-thread default streams" % name)
        log("per_thread: the program's _spt calls used per-thread streams")

    def scenario_callbacks(self):
        """hipStreamAddCallback: run on the client, in stream order, holding the stream (callbacks.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("callbacks", [self.build.program("callbacks")], env, timeout=90)
        for line in program.text("out"):
            if line.startswith(("the stream waited", "20 callbacks", "a blocking copy")):
                log("callbacks: %s" % line)

    def scenario_graphs(self):
        """Stream capture and executable graphs: a captured graph replayed 100 times, host copies read
        and written at launch, fork/join capture, the explicit API, capture rules (graphs.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        env["HIPR_STATS"] = "1"
        program = run_to_pass("graphs", [self.build.program("graphs")], env, timeout=120)
        for line in program.text("out"):
            if line.startswith(("a captured graph", "a graph with host", "fork/join", "independent branches",
                                "capture rules")):
                log("graphs: %s" % line)
        # 100 + 1 + 3 + 3 launches of graphs the worker holds, one frame each;
        # the graph with host copies (3 launches) is replayed by the client.
        err = "\n".join(program.text("err"))
        want = "hipr: stats: graphs: 107 launches of executable graphs held by the worker"
        if want not in err:
            raise Failure("expected %r on the client's stderr, got:\n%s" % (want, err))
        log("graphs: %s" % want)

    def scenario_async_semantics(self):
        """Deferred errors at the next synchronize and not before, blocking uploads that return once
        their source is consumed, async device-to-host copies into pinned and pageable memory, mixed
        stream order (async_semantics.hip). The worker fails the
        kernel e2e_fails when it runs (--sim-fail-kernel), as a faulting kernel on a GPU."""
        self.build.check_runtime()
        w = self.worker(extra_args=["--sim-fail-kernel", "e2e_fails"])
        env = client_env(self.build, w.server, "preload")
        env["HIPR_LOG_LEVEL"] = "debug"
        program = run_to_pass("async_semantics", [self.build.program("async_semantics")], env, timeout=120)
        for line in program.text("out"):
            if line.startswith(("a failing kernel", "a blocking upload", "async copies", "an async copy", "20 rounds",
                                "allocation churn", "memory freed", "a blocking memset", "a stream synchronize",
                                "with managed memory", "leased allocations", "a device synchronize")):
                log("async_semantics: %s" % line)
        if not any(line.startswith("a blocking upload") for line in program.text("out")):
            raise Failure("async_semantics did not report its blocking-upload checks")
        # The churn's 20 allocations: after the first, each takes the block the
        # step before freed, with no round trip (memory/free_blocks.h).
        reused = [l for l in program.text("err") if "hipMalloc: reusing the freed block" in l]
        if len(reused) < 19:
            raise Failure("expected the allocation churn's last 19 hipMallocs to reuse freed blocks; %d did"
                          % len(reused))
        log("async_semantics: %d hipMallocs reused a freed block with no round trip" % len(reused))
        # Small allocations are placed in a lease (memory/memory_leases.h):
        # the check of leased allocations makes 24 and asks for few leases.
        if not any(line.startswith("leased allocations") for line in program.text("out")):
            raise Failure("async_semantics did not report its leased-allocation checks")
        # Only a sim worker leases (capability memory-lease); the chain's hip
        # device does not, and its client then asks for every allocation.
        leases = [l for l in program.text("err") if "leased at" in l and "no round trip" in l]
        if Worker.device == "chain":
            if leases:
                raise Failure("the hip device offers no memory lease, yet the client took %d" % len(leases))
        elif not 1 <= len(leases) <= 8:
            raise Failure("expected the sim worker to lease memory for small hipMallocs a few times; %d leases"
                          % len(leases))
        log("async_semantics: %d leases served the small hipMallocs" % len(leases))
        # The blocking memsets and stream synchronizes that guarded only
        # device memory returned at once, each raising a stream fence
        # (session/stream_fences.h).
        for want in ("a blocking memset", "a stream synchronize", "a device synchronize", "with managed memory"):
            if not any(line.startswith(want) for line in program.text("out")):
                raise Failure("async_semantics did not report its check %r" % want)
        fences = [l for l in program.text("err") if "stream fence" in l and "raised on device" in l]
        if len(fences) < 6:
            raise Failure("expected 3 blocking memsets and 3 stream synchronizes to return at once behind a "
                          "stream fence; %d did" % len(fences))
        log("async_semantics: %d blocking calls returned behind a stream fence" % len(fences))
        skipped = [l for l in program.text("err") if "hipDeviceSynchronize: nothing the host can observe" in l]
        if len(skipped) < 3:
            raise Failure("expected the 3 device synchronizes that guarded only device memory to return at once; "
                          "%d did" % len(skipped))

    def scenario_newer_entry_points(self):
        """hipLaunchHostFunc (in stream order and as a graph's host node), hipStreamGetDevice,
        hipEventRecord_spt, hipModuleLaunchCooperativeKernel: exported by the stub though Debian's
        5.2 library lacks them (newer_entry_points.hip, linked against the stub)."""
        self.build.check_runtime()
        w = self.worker()
        co_file = os.path.join(self.build.bin, "module_kernels.co")
        program = run_to_pass("newer_entry_points", [self.build.program("newer_entry_points"), co_file],
                              client_env(self.build, w.server, "preload"), timeout=120)
        for line in program.text("out"):
            if line.startswith(("hipLaunchHostFunc", "hipStreamGetDevice", "hipModuleLaunchCooperativeKernel",
                                "hipGetProcAddress")):
                log("newer_entry_points: %s" % line)

    def scenario_mixed_majors(self):
        """A 5.x program and libraries linked against the 6.x and 7.x ABIs (link-only
        libamdhip64.so.6/.so.7) in one process: each gets its own major's answers (hipMemoryType
        numbering, hipGetLastError rule, struct layouts, graph node types) from the one stub. Through the drop-in names: a program needing libamdhip64.so.6 cannot be served by
        LD_PRELOAD alone (the stub's SONAME is libamdhip64.so.5)."""
        self.build.check_runtime(need_dropin=True)
        w = self.worker()
        program = run_to_pass("mixed_majors", [self.build.program("mixed_majors")],
                              client_env(self.build, w.server, "dropin"), timeout=60)
        reports = [l for l in program.text("out") if l.startswith(("lib6:", "lib7:", "main5:"))]
        for line in reports:
            log("mixed_majors: %s" % line)
        if len(reports) != 3:
            raise Failure("mixed_majors: expected the reports of lib6, lib7 and main5, got %r" % reports)
        # Against a hip worker, each library built for a newer major than its runtime is named once
        # at session start (the chain's runtime is the module's major); a sim serves every major.
        runtime_major = Worker.hip_major if Worker.device == "chain" else None
        for major in (6, 7):
            warned = [l for l in program.text("err") if "libmajor%d.so was built for ROCm %d" % (major, major) in l]
            expected = 1 if runtime_major is not None and major > runtime_major else 0
            if len(warned) != expected:
                raise Failure("mixed_majors: libmajor%d.so was named %d times against a %s worker, expected %d"
                              % (major, len(warned), "HIP %d" % runtime_major if runtime_major else "sim",
                                 expected))

    def scenario_idle_cpu(self):
        """An idle client and its idle session process use no CPU: the receive spin (HIPR_SPIN_US,
        --spin-us) ends and every thread sleeps. graphs.hip leaves its session open with the flusher
        and the host-callback thread started, then waits in its pause while both are measured."""
        self.build.check_runtime()
        w = self.worker()
        program = Program("graphs", [self.build.program("graphs")], client_env(self.build, w.server, "preload"))
        program.wait_for(r"^E2E_PAUSE (\d+)$", 120, "E2E_PAUSE")
        sessions = w.session_pids()
        if len(sessions) != 1:
            raise Failure("expected one session process, found %s" % sessions)
        time.sleep(0.5)  # Past any spin and the last replies.
        before = (cpu_ticks(program.pid), cpu_ticks(sessions[0]))
        idle_s = 3.0
        time.sleep(idle_s)
        after = (cpu_ticks(program.pid), cpu_ticks(sessions[0]))
        program.send_line()
        rc = program.wait(30)
        if rc != 0:
            raise Failure("graphs exited with %s" % rc)
        ticks = os.sysconf("SC_CLK_TCK")
        client_ms = (after[0] - before[0]) * 1000.0 / ticks
        session_ms = (after[1] - before[1]) * 1000.0 / ticks
        log("idle_cpu: over %.0f s idle, the client used %.0f ms of CPU, its session process %.0f ms"
            % (idle_s, client_ms, session_ms))
        # Heartbeat and flusher wake-ups cost microseconds; 30 ms allows for tick granularity.
        if client_ms > 30 or session_ms > 30:
            raise Failure("an idle client or session is burning CPU: client %.0f ms, session %.0f ms in %.0f s"
                          % (client_ms, session_ms, idle_s))

    def scenario_device_query(self):
        """Every attribute and property field through the stub, for each sim model and each ABI major
        (device_query.hip): refused exactly where ROCm refuses, equal to the struct fields, equal to the
        figures AMD publishes. In the chain, the majors up to the hip device module's: a program of a
        newer major than the GPU node's runtime cannot have the attributes that runtime lacks."""
        self.build.check_runtime()
        majors = [m for m in (5, 6, 7) if Worker.device != "chain" or m <= Worker.hip_major]
        for model in ("mi250x", "mi210", "mi100", "mi300x"):
            w = self.worker(name="worker-" + model, extra_args=["--sim-model", model])
            for major in majors:
                env = client_env(self.build, w.server, "preload")
                if major != 5:
                    env["HIPR_ABI_MAJOR"] = str(major)
                run_to_pass("device_query %s %d.x" % (model, major),
                            [self.build.program("device_query"), model, str(major)], env, timeout=60)
            w.stop()

    def scenario_copy_kinds(self):
        """Copies whose kind does not match the pointers, every family (copy_kinds.hip): the pointers
        decide, as in ROCm; the mismatches ROCm refuses are refused."""
        self.build.check_runtime()
        w = self.worker(extra_args=["--sim-devices", "2"])
        run_to_pass("copy_kinds", [self.build.program("copy_kinds")], client_env(self.build, w.server, "preload"),
                    timeout=120)

    def scenario_runtime_extras(self):
        """Pitched allocation and 2-D memsets, stream-ordered allocation, host registration, peer
        access and copies between two sim devices, primary contexts, cache configuration and PCI bus
        ids (runtime_extras.hip)."""
        self.build.check_runtime()
        w = self.worker(extra_args=["--sim-devices", "2"])
        program = run_to_pass("runtime_extras", [self.build.program("runtime_extras")],
                              client_env(self.build, w.server, "preload"), timeout=120)
        for line in program.text("out"):
            if line.startswith(("hipMallocPitch", "hipMallocAsync", "hipMalloc3D", "hipHostRegister", "peer access",
                                "primary")):
                log("runtime_extras: %s" % line)

    def scenario_generated_api(self):
        """The functions with generated remoting (shim_gen/annotations.txt), one table row each with
        behavioural checks, against two sim devices (generated_api.hip, linked against the stub).
        Fails unless the rows cover every annotated function."""
        self.build.check_runtime()
        w = self.worker(extra_args=["--sim-devices", "2"])
        program = run_to_pass("generated_api", [self.build.program("generated_api")],
                              client_env(self.build, w.server, "preload"), timeout=120)
        passed = set()
        for line in program.text("out"):
            if line.startswith("generated row passed: "):
                passed.add(line.split(": ", 1)[1].strip())
        annotations = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shim_gen",
                                   "annotations.txt")
        annotated = set()
        with open(annotations, encoding="utf-8") as f:
            for line in f:
                text = line.split("#", 1)[0].strip()
                if text and text.split()[0] != "struct":
                    annotated.add(text.split()[0])
        missing = sorted(annotated - passed)
        if missing:
            raise Failure("generated_api has no passing row for: " + ", ".join(missing))
        log("generated_api: %d rows passed, covering all %d annotated functions" % (len(passed), len(annotated)))

    def scenario_api_table(self):
        """The hand-written HIP functions, one table row each with behavioural checks, against two
        sim devices (api_table_memory.hip, api_table_runtime.hip, api_table_array.hip: arrays and
        textures, api_table_rtc.hip: runtime
        compilation, its kernels in rtc/; all linked against the stub). Fails
        unless the rows cover every function client_stub/abi/handwritten.txt marks remoted or local
        and tests/e2e/api_table_pending.txt does not list, and if a listed one has a row. Then
        every unsupported entry point (api_unsupported.hip): the generated ones return
        hipErrorNotSupported on every call, the hand-written ones fail in their own types, and the
        stub logs each name once however often it is called."""
        self.build.check_runtime()
        here = os.path.dirname(os.path.abspath(__file__))
        root = os.path.join(here, "..", "..")
        w = self.worker(extra_args=["--sim-devices", "2"])
        passed = set()
        skipped = set()
        skip = CHAIN_SKIPPED_ROWS if Worker.device != "sim" else {}
        for function, why in sorted(skip.items()):
            log("api_table: row %s not run on this device: %s" % (function, why))
        for name in ("api_table_memory", "api_table_runtime", "api_table_array", "api_table_rtc"):
            env = client_env(self.build, w.server, "preload")
            env["HIPR_RTC_DIR"] = os.path.join(here, "rtc")
            env["HIPR_E2E_SKIP_ROWS"] = ",".join(sorted(skip))
            program = run_to_pass(name, [self.build.program(name)], env, timeout=120)
            rows = [line.split(": ", 1)[1].strip() for line in program.text("out")
                    if line.startswith("api row passed: ")]
            skipped.update(line.split(": ", 1)[1].strip() for line in program.text("out")
                           if line.startswith("api row skipped: "))
            log("%s: %d rows passed" % (name, len(rows)))
            passed.update(rows)
        if skipped != set(skip):
            raise Failure("rows skipped %s, expected exactly %s" % (sorted(skipped), sorted(skip)))
        passed.update(skipped)  # Each named above, with its reason.

        def names(path, kinds=None):
            found = []
            with open(path, encoding="utf-8") as f:
                for line in f:
                    words = line.split("#", 1)[0].split()
                    if words and (kinds is None or (len(words) == 2 and words[1] in kinds)):
                        found.append(words[0])
            return found
        handwritten = set(names(os.path.join(root, "client_stub", "abi", "handwritten.txt"), ("remoted", "local")))
        pending = names(os.path.join(here, "api_table_pending.txt"))
        unknown = sorted(set(pending) - handwritten)
        if unknown:
            raise Failure("api_table_pending.txt lists functions that are not hand-written remoted or local: "
                          + ", ".join(unknown))
        stale = sorted(set(pending) & passed)
        if stale:
            raise Failure("these functions have passing rows; delete them from api_table_pending.txt: "
                          + ", ".join(stale))
        missing = sorted(handwritten - set(pending) - passed)
        if missing:
            raise Failure("no passing api_table row for: " + ", ".join(missing))
        log("api_table: %d of %d hand-written remoted/local functions have a passing row; %d pending"
            % (len(handwritten & passed), len(handwritten), len(pending)))

        generated = os.path.join(self.build.dir, "client_stub", "gen", "unsupported_exports.cc")
        with open(generated, encoding="utf-8") as f:
            unsupported = re.findall(r'^HIPR_UNSUPPORTED_ENTRY\(\w+, "([^"]+)"\)', f.read(), re.M)
        if len(unsupported) < 20:  # A floor against a broken generator; the list shrinks as functions land.
            raise Failure("only %d generated unsupported entries in %s" % (len(unsupported), generated))
        list_file = os.path.join(self.tmp, "unsupported.txt")
        with open(list_file, "w", encoding="utf-8") as f:
            f.write("\n".join(unsupported) + "\n")
        program = run_to_pass("api_unsupported", [self.build.program("api_unsupported"), list_file],
                              client_env(self.build, w.server, "preload"), timeout=120)
        ok = {line.split(": ", 1)[1].strip() for line in program.text("out") if line.startswith("unsupported ok: ")}
        not_ok = sorted(set(unsupported) - ok)
        if not_ok:
            raise Failure("api_unsupported did not check: " + ", ".join(not_ok))
        logged = {}
        for line in program.text("err"):
            m = re.search(r"(\S+) is not supported by hipr; returning hipErrorNotSupported", line)
            if m:
                logged[m.group(1)] = logged.get(m.group(1), 0) + 1
        wrong = sorted("%s (%d lines)" % (n, logged.get(n, 0)) for n in unsupported if logged.get(n, 0) != 1)
        if wrong:
            raise Failure("the stub did not log these unsupported functions exactly once: " + ", ".join(wrong[:20]))
        log("api_unsupported: %d generated and %d hand-written unsupported entries answer with their documented "
            "errors; each generated one logged once" % (len(unsupported), len(ok) - len(unsupported)))

    def scenario_fork_child(self):
        """A forked child opens its own session and never writes to the parent's: the parent's queued
        work, graph and copies still work after the child ran (fork_child.hip). Two sessions."""
        self.build.check_runtime()
        w = self.worker()
        program = run_to_pass("fork_child", [self.build.program("fork_child")],
                              client_env(self.build, w.server, "preload"), timeout=120)
        for line in program.text("out"):
            if line.startswith(("child:", "parent:")):
                log("fork_child: %s" % line)
        if not w.alive():
            raise Failure("the worker died")

    def scenario_ipc(self):
        """IPC memory and event handles between two processes, two sessions of one worker: the
        child (the program run again) opens the parent's allocation, reads and writes it, waits for
        the parent's interprocess event, closes a handle behind a sleeping host callback and a copy on the null
        stream, and bad handles fail (ipc.hip)."""
        self.build.check_runtime()
        w = self.worker()
        program = run_to_pass("ipc", [self.build.program("ipc")],
                              client_env(self.build, w.server, "preload"), timeout=120)
        lines = [l for l in program.text("out") if l.startswith(("child:", "parent:"))]
        for line in lines:
            log("ipc: %s" % line)
        # The hip device has no shareable handles (CHAIN_SKIPPED_ROWS): no shared physical memory report.
        want = 4 if Worker.device != "sim" else 5
        if len(lines) != want:
            raise Failure("ipc: expected %d reports of the child and the parent, got %r" % (want, lines))
        if not w.alive():
            raise Failure("the worker died")

    def scenario_twin_fault(self):
        """A kernel whose twin writes past its shared memory faults on the sim: the session ends with
        an error naming the kernel, the block, the thread and the address, in the client's log and in
        the worker's, and the worker goes on serving (twin_fault.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        cases = (("dynamic", "write_past_dynamic_shared(int*, int)", "(1, 0, 0)", "(3, 0, 0)"),
                 ("static", "write_past_static_shared(int*, int)", "(0, 1, 0)", "(5, 0, 0)"))
        for mode, kernel, block, thread in cases:
            program = run_to_pass("twin_fault " + mode, [self.build.program("twin_fault"), mode], env, 60)
            want = "kernel %s faulted in block %s, thread %s: SIGSEGV at address 0x" % (kernel, block, thread)
            err = "\n".join(program.text("err"))
            if want not in err or "killed by signal 11" not in err:
                raise Failure("twin_fault %s: the client's log does not name the fault (%r):\n%s" % (mode, want, err))
            if want not in w.log_text():
                raise Failure("twin_fault %s: the worker's log does not name the fault (%r):\n%s"
                              % (mode, want, w.log_text()[-3000:]))
            log("twin_fault %s: %s" % (mode, next(l for l in err.splitlines() if want in l).strip()))
        run_to_pass("kernel_user after the faults", [self.build.program("kernel_user")], env, 60)
        log("the worker served a new session after the faulting ones")

    def scenario_warp_ops(self):
        """Shuffles at every width and votes, on full, partial and divergent wavefronts, checked
        element by element against a host reference (warp_ops.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("warp_ops", [self.build.program("warp_ops")], env, 120)
        for line in program.text("out"):
            if line.startswith("[warp_ops]"):
                log(line)

    def scenario_coop_groups(self):
        """Cooperative groups in a block (thread_block, run-time and compile-time tiles, coalesced
        groups of a divergent branch) and the grid's ranks, checked against a host reference
        (coop_groups.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("coop_groups", [self.build.program("coop_groups")], env, 120)
        for line in program.text("out"):
            if line.startswith("[coop_groups]"):
                log(line)

    def scenario_coop_grid(self):
        """grid_group::sync() in a cooperative launch: rounds of a grid reduction whose every phase
        needs every block's previous results, checked against a host reference; cooperative grids
        larger than the device holds at once are hipErrorCooperativeLaunchTooLarge; on the sim, a
        grid barrier in a plain launch fails the kernel, naming it in the worker's log (coop_grid.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("coop_grid", [self.build.program("coop_grid")], env, 180)
        for line in program.text("out"):
            if line.startswith("[coop_grid]"):
                log(line)
        if not w.alive():
            raise Failure("the worker died during the run (%s)" % describe_rc(w.proc.returncode))
        if env.get("HIPR_E2E_DEVICE") == "sim":
            want = "grid_group::sync() (a grid-wide barrier) in a launch that is not cooperative"
            lines = [l for l in w.log_text().splitlines() if want in l]
            if not lines or "grid_rounds" not in lines[0]:
                raise Failure("coop_grid: the worker's log does not name the kernel whose grid barrier was in a "
                              "plain launch (%r):\n%s" % (want, w.log_text()[-3000:]))
            log("coop_grid: %s" % lines[0].strip())

    def scenario_half_ops(self):
        """__half and __half2 (hip_fp16.h): conversions, moves, arithmetic, comparisons and math,
        bit-exact against a host reference on edge values (signed zeros, subnormals, ties, overflow,
        NaN) and random triples; approximated math within 1-2 ulp (half_ops.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("half_ops", [self.build.program("half_ops")], env, 180)
        for line in program.text("out"):
            if line.startswith("[half_ops]"):
                log(line)

    def scenario_stress(self):
        """16 threads x 1,000 mixed async calls through one session, every result checked (stress.hip)."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        program = run_to_pass("stress", [self.build.program("stress")], env, timeout=240)
        for line in program.text("out"):
            if "mixed calls" in line:
                log("stress: %s" % line)
