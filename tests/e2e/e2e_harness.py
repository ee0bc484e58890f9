"""The harness of the end-to-end scenarios (run_e2e.py): worker and program processes, the
build tree, environments, /proc maps and readelf helpers. Stdlib only."""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STUB_FILE = "libhip_client_stub.so"
DROPIN_NAMES = ("libamdhip64.so", "libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so.7")
REAL_RUNTIME_PREFIXES = ("libamdhip64", "libhsa-runtime64", "libhsakmt")
SIM_MEMORY = "2G"
SIM_MEMORY_BYTES = 2 << 30
SCENARIO_LIMIT_S = 280  # ctest's TIMEOUT is 300.

# Exit codes of the test programs (tests/e2e/common.h).
EXIT_PASS = 0
EXIT_CHECK_FAILED = 1
EXIT_LINK_LOST = 3
EXIT_OTHER_HIP_ERROR = 4
EXIT_NO_ERROR = 5

T0 = time.monotonic()


class Failure(Exception):
    """A failed check; the message says what was expected and what happened."""


def log(message):
    print("[e2e %7.2fs] %s" % (time.monotonic() - T0, message), flush=True)


def describe_rc(rc):
    if rc is None:
        return "still running"
    if rc < 0:
        try:
            return "killed by %s" % signal.Signals(-rc).name
        except ValueError:
            return "killed by signal %d" % -rc
    return "exit code %d" % rc


class Registry:
    """Every child started, so the watchdog and the cleanup can kill them all."""

    def __init__(self):
        self.lock = threading.Lock()
        self.children = []

    def add(self, child):
        with self.lock:
            self.children.append(child)

    def all(self):
        with self.lock:
            return list(self.children)


REGISTRY = Registry()


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Program:
    """A test program in its own process group; stdout/stderr collected line by line."""

    def __init__(self, name, argv, env, cwd=None):
        self.name = name
        self.argv = argv
        self.started = time.monotonic()
        self.ended = None
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.pid = self.proc.pid
        self.cond = threading.Condition()
        self.lines = []  # (stream, text)
        self.open_streams = 2
        self.readers = [threading.Thread(target=self._read, args=(self.proc.stdout, "out"), daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, "err"), daemon=True)]
        for t in self.readers:
            t.start()
        REGISTRY.add(self)
        log("started %s (pid %d): %s" % (name, self.pid, " ".join(argv)))

    def _read(self, stream, tag):
        for raw in iter(stream.readline, b""):
            with self.cond:
                self.lines.append((tag, raw.decode("utf-8", "replace").rstrip("\n")))
                self.cond.notify_all()
        with self.cond:
            self.open_streams -= 1
            self.cond.notify_all()

    def text(self, stream):
        with self.cond:
            return [t for s, t in self.lines if s == stream]

    def wait_for(self, pattern, timeout, what=None):
        """Waits for a stdout line matching `pattern`; returns the match."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        with self.cond:
            while True:
                while seen < len(self.lines):
                    stream, line = self.lines[seen]
                    seen += 1
                    m = regex.search(line) if stream == "out" else None
                    if m:
                        return m
                if self.open_streams == 0:
                    try:
                        self.proc.wait(10)
                    except subprocess.TimeoutExpired:
                        pass  # Closed its output but lives on: reported as still running.
                    failed = [t for s, t in self.lines if s == "err" and t.startswith("E2E_FAIL")]
                    raise Failure("%s ended (%s) before printing %s%s" % (
                        self.name, describe_rc(self.proc.returncode), what or repr(pattern),
                        ": " + failed[0] if failed else ""))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure("%s printed no %s within %.0f s" % (self.name, what or repr(pattern), timeout))
                self.cond.wait(min(left, 0.5))

    def send_line(self, text="go"):
        try:
            self.proc.stdin.write((text + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise Failure("cannot write to %s's stdin: %s" % (self.name, e))

    def wait(self, timeout):
        """Waits for the exit; on timeout kills the program and fails."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("%s did not exit within %.0f s (killed)" % (self.name, timeout))
        self.ended = time.monotonic()
        for t in self.readers:
            t.join(5)
        return rc

    def kill(self):
        kill_group(self.pid)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def transcript(self):
        with self.cond:
            lines = list(self.lines)
        out = ["---- %s (pid %d, %s): %s" % (self.name, self.pid, describe_rc(self.proc.poll()),
                                            " ".join(self.argv))]
        out += ["  %s| %s" % (s, t) for s, t in lines[-200:]]
        if len(lines) > 200:
            out.insert(1, "  (first %d lines omitted)" % (len(lines) - 200))
        return "\n".join(out)


def read_proc_stat(pid):
    """(comm, ppid) of a live process, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return None
    lpar, rpar = data.index("("), data.rindex(")")
    fields = data[rpar + 2:].split()
    return data[lpar + 1:rpar], int(fields[1])


def cpu_ticks(pid):
    """User + system CPU time of a live process (all its threads), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat(5)).


def process_table():
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = read_proc_stat(int(entry))
            if st:
                table[int(entry)] = st
    return table


class Worker:
    """hipr-worker on 127.0.0.1, port 0, in its own process group: `--device sim`, or the chain.

    The chain (Worker.device = "chain", run_e2e.py --device chain) is what a client meets on a
    GPU node, without one: a `--device hip` worker whose hip device binds, as its
    libamdhip64.so.5, to hipr's own stub (--hip-runtime), which forwards to a second, `sim`
    worker (`self.inner`). Kernels run there, with the same twins; the client sees device
    addresses a runtime it does not control picked. Arguments for the sim (--sim-*, --no-twins)
    go to the inner worker, the rest to the one clients reach."""

    # "shm": the worker also listens on a unix socket and clients reach it there (HIPR_SERVER=unix:...,
    # the shared-memory transport). "rdma": worker and clients run on the verbs double (rdma_env) and
    # clients force rdma (HIPR_SERVER=rdma://...), so a session that stayed on tcp fails. Set by
    # run_e2e.py --transport.
    transport = "tcp"
    # For "rdma": LD_LIBRARY_PATH (the double as libibverbs.so.1) and HIPR_VERBS_DOUBLE_DIR (this run's
    # fabric), for the worker and its clients. Set by use_verbs_double().
    rdma_env = None
    # "sim", "chain" (above), or "hip": the node's real GPUs. Set by run_e2e.py --device.
    device = "sim"
    # The chain's hip device module: the one built for this ROCm major (5: Debian 12's HIP 5.2; 6, 7:
    # against Debian's ROCm 6.4 / 7.2, see HIPR_ROCM_PREFIXES). Set by run_e2e.py --hip-major.
    hip_major = 5

    def __init__(self, build, tmp, name="worker", extra_args=(), device=None, transport=None):
        self.name = name
        self.device = device or Worker.device
        transport = transport or Worker.transport
        self.port_file = os.path.join(tmp, name + ".port")
        self.log_path = os.path.join(tmp, name + ".log")
        extra_args = list(extra_args)
        self.inner = None
        env = base_env()
        if transport == "rdma":
            env.update(Worker.rdma_env)
        if self.device == "hip":
            # A GPU node's own worker (deploy/hipr-dev gpu-check): arguments for the sim dropped.
            _, extra_args = self.split_sim_args(extra_args)
            self.argv = [build.worker, "--listen", "127.0.0.1:0", "--port-file", self.port_file, "--device", "hip",
                         "--log-level", "info"]
        elif self.device == "chain":
            sim_args, extra_args = self.split_sim_args(extra_args)
            # The inner worker is reached over tcp whatever the client's transport.
            self.inner = Worker(build, tmp, name + "-sim", sim_args, device="sim", transport="tcp")
            env["HIPR_SERVER"] = self.inner.server
            self.argv = [build.worker, "--listen", "127.0.0.1:0", "--port-file", self.port_file, "--device", "hip",
                         "--hip-runtime", build.stub, "--hip-module", build.hip_module(Worker.hip_major),
                         "--log-level", "info"]
        else:
            self.argv = [build.worker, "--listen", "127.0.0.1:0", "--port-file", self.port_file, "--device", "sim",
                         "--sim-memory", SIM_MEMORY, "--log-level", "info"]
        # Every worker gets its own code-object cache (never the system's) and the twins built
        # with the tests, unless the scenario says otherwise.
        if "--code-cache" not in extra_args:
            self.argv += ["--code-cache", os.path.join(tmp, name + "-code-cache")]
        if "--no-twins" in extra_args:
            extra_args.remove("--no-twins")
        elif os.path.isdir(build.twins) and self.device == "sim":
            self.argv += ["--sim-kernels", build.twins]
        self.argv += extra_args
        self.unix_path = None
        if transport == "shm":
            self.unix_path = os.path.join(tmp, name + ".sock")
            self.argv += ["--listen-unix", self.unix_path]
        # Should the driver itself be killed (no cleanup), the worker dies with it; its zygote and
        # sessions follow the worker (their own PR_SET_PDEATHSIG). setpriv execs: the pid stays.
        setpriv = shutil.which("setpriv")
        launch = [setpriv, "--pdeathsig", "KILL", "--"] + self.argv if setpriv else self.argv
        self.log_file = open(self.log_path, "wb")
        self.proc = subprocess.Popen(launch, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     stderr=subprocess.STDOUT, start_new_session=True, env=env)
        self.pid = self.proc.pid
        REGISTRY.add(self)
        deadline = time.monotonic() + 20
        self.port = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure("%s exited at start-up (%s)" % (name, describe_rc(self.proc.returncode)))
            try:
                with open(self.port_file) as f:
                    text = f.read().strip()
                if text.isdigit() and int(text) > 0:
                    self.port = int(text)
                    break
            except OSError:
                pass
            time.sleep(0.05)
        if self.port is None:
            raise Failure("%s wrote no port to %s within 20 s" % (name, self.port_file))
        self.server = "127.0.0.1:%d" % self.port
        if self.unix_path:
            self.server = "unix:" + self.unix_path
        if transport == "rdma":
            self.server = "rdma://" + self.server
        log("%s (pid %d) listening on %s" % (name, self.pid, self.server))

    @staticmethod
    def split_sim_args(args):
        """(arguments for the sim, the rest): --sim-X [VALUE] and --no-twins."""
        sim, rest = [], []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--no-twins" or a == "--sim-force-staging":
                sim.append(a)
            elif a.startswith("--sim-"):
                sim += args[i:i + 2]
                i += 1
            else:
                rest.append(a)
            i += 1
        return sim, rest

    def alive(self):
        return self.proc.poll() is None

    def group_members(self):
        return [pid for pid in process_table() if self._pgid(pid) == self.pid]

    @staticmethod
    def _pgid(pid):
        try:
            return os.getpgid(pid)
        except OSError:
            return None

    def session_pids(self):
        """Session processes: grandchildren of the worker (worker -> zygote -> session)."""
        table = process_table()
        zygotes = [p for p, (_, ppid) in table.items() if ppid == self.pid]
        return sorted(p for p, (comm, ppid) in table.items() if ppid in zygotes and comm.startswith("hipr-s"))

    def kill_group(self, sig=signal.SIGKILL):
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def wait_group_gone(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.proc.poll()
            if not self.group_members():
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        """SIGTERM, then SIGKILL for whatever of the group is left after 5 s."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                log("%s ignored SIGTERM for 5 s; killing its process group" % self.name)
        self.kill()

    def kill(self):
        self.kill_group(signal.SIGKILL)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.wait_group_gone(5)
        self.log_file.close()

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def transcript(self):
        lines = self.log_text().splitlines()
        out = ["---- %s (pid %d, %s): %s" % (self.name, self.pid, describe_rc(self.proc.poll()),
                                            " ".join(self.argv))]
        if len(lines) > 300:
            out.append("  (first %d lines omitted)" % (len(lines) - 300))
        out += ["  log| " + line for line in lines[-300:]]
        return "\n".join(out)

    def error_lines(self):
        return [line for line in self.log_text().splitlines() if "[error]" in line or "[critical]" in line]


# ---- Environment, paths, maps ---------------------------------------------------------------


def base_env():
    """The caller's environment without loader or hipr settings."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT") and not k.startswith("HIPR_")}
    return env


class Build:
    def __init__(self, build_dir, bin_dir):
        self.dir = os.path.abspath(build_dir)
        self.bin = os.path.abspath(bin_dir or os.path.join(self.dir, "tests", "e2e"))
        self.worker = os.path.join(self.dir, "bin", "hipr-worker")
        self.stub = os.path.join(self.dir, "lib", STUB_FILE)
        self.dropin = os.path.join(self.dir, "lib", "hipr")
        self.twins = os.path.join(self.dir, "sim-kernels")
        self.inspect = os.path.join(self.dir, "bin", "hipr-inspect")

    def hip_module(self, major):
        """The hip device module built for ROCm `major` (5: libhipr_device_hip.so)."""
        name = "libhipr_device_hip%s.so" % ("" if major == 5 else major)
        path = os.path.join(self.dir, "lib", "hipr-worker", name)
        if not os.path.isfile(path):
            raise Failure("%s is missing: build it (ROCm %d: HIPR_ROCM_PREFIXES, deploy/fetch-rocm.sh)" % (path, major))
        return path

    def program(self, name):
        path = os.path.join(self.bin, name)
        if not os.access(path, os.X_OK):
            raise Failure("test program %s is missing: build the project first (cmake --build)" % path)
        return path

    def check_runtime(self, need_dropin=False):
        for path, what in ((self.worker, "hipr-worker"), (self.stub, "the client stub")):
            if not os.path.isfile(path):
                raise Failure("%s is missing (%s): build the project first" % (what, path))
        if need_dropin:
            stub_real = os.path.realpath(self.stub)
            for name in DROPIN_NAMES:
                path = os.path.join(self.dropin, name)
                if not os.path.exists(path):
                    raise Failure("drop-in %s is missing" % path)
                if os.path.realpath(path) != stub_real:
                    raise Failure("drop-in %s resolves to %s, not the stub %s (a copy would load a second stub)"
                                  % (path, os.path.realpath(path), stub_real))


def client_env(build, server, mode):
    """mode: 'preload', 'dropin' or 'both'. server None leaves HIPR_SERVER unset."""
    env = base_env()
    env["HIPR_E2E_HANDSHAKE"] = "1"
    # What serves the program: "sim", or "hip" (the chain or a GPU: a hip device, whose runtime picks
    # device addresses, so the client reserves each allocation's range, not one window).
    env["HIPR_E2E_DEVICE"] = "sim" if Worker.device == "sim" else "hip"
    if server is not None:
        env["HIPR_SERVER"] = server
    if mode in ("preload", "both"):
        env["LD_PRELOAD"] = build.stub
    if mode in ("dropin", "both"):
        env["LD_LIBRARY_PATH"] = build.dropin
    if mode not in ("preload", "dropin", "both"):
        raise ValueError(mode)
    if Worker.rdma_env and server is not None and server.startswith("rdma://"):
        add_verbs_double(env)
    return env


def use_verbs_double(build, tmp):
    """Workers and rdma:// clients of this run get the verbs double: the build's libibverbs.so.1 stand-in
    and a fresh fabric directory under tmp."""
    lib_dir = os.path.join(build.dir, "verbs-double")
    if not os.path.isfile(os.path.join(lib_dir, "libibverbs.so.1")):
        raise Failure("the verbs double %s/libibverbs.so.1 is missing: build the project first" % lib_dir)
    fabric = os.path.join(tmp, "verbs-fabric")
    os.makedirs(fabric, exist_ok=True)
    Worker.rdma_env = {"LD_LIBRARY_PATH": lib_dir, "HIPR_VERBS_DOUBLE_DIR": fabric}


def add_verbs_double(env):
    """Puts the verbs double into a client's environment (before any drop-in directory)."""
    lib_dir = Worker.rdma_env["LD_LIBRARY_PATH"]
    env["LD_LIBRARY_PATH"] = lib_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["HIPR_VERBS_DOUBLE_DIR"] = Worker.rdma_env["HIPR_VERBS_DOUBLE_DIR"]


def strip_deleted(path):
    """A file replaced on disk while mapped (the stub rebuilt during a run) shows as "<path> (deleted)"."""
    return path[:-len(" (deleted)")] if path.endswith(" (deleted)") else path


def check_live_maps(program):
    """Reads /proc/<pid>/maps of the (paused) program: no real runtime, one stub file."""
    path = "/proc/%d/maps" % program.pid
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Failure("cannot read %s: %s" % (path, e))
    stub_files = set()
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        file_path = strip_deleted(parts[5])
        base = os.path.basename(file_path)
        if base.startswith(REAL_RUNTIME_PREFIXES):
            raise Failure("%s: the real HIP runtime is mapped: %s" % (program.name, line))
        if base == STUB_FILE:
            stub_files.add((parts[3], parts[4], file_path))
    if not stub_files:
        raise Failure("%s: %s is not mapped (%s)" % (program.name, STUB_FILE, path))
    if len(stub_files) != 1:
        raise Failure("%s: %d copies of the stub are mapped: %s" % (program.name, len(stub_files), sorted(stub_files)))
    log("%s: live maps OK (one stub: %s; no libamdhip64/libhsa-runtime64/libhsakmt)"
        % (program.name, next(iter(stub_files))[2]))


def run_to_pass(name, argv, env, timeout, cwd=None):
    """Runs a self-checking program: waits for its pause, checks its maps, lets it finish."""
    program = Program(name, argv, env, cwd)
    program.wait_for(r"^E2E_PAUSE (\d+)$", timeout, "E2E_PAUSE (its checks did not all pass)")
    check_live_maps(program)
    program.send_line()
    rc = program.wait(30)
    if rc != EXIT_PASS:
        raise Failure("%s: %s, expected exit code 0" % (name, describe_rc(rc)))
    if not any(line.startswith("E2E_PASS") for line in program.text("out")):
        raise Failure("%s exited 0 without printing E2E_PASS" % name)
    log("%s passed in %.2f s" % (name, program.ended - program.started))
    return program


def readelf(args):
    tool = shutil.which("readelf")
    if tool is None:
        raise Failure("readelf (binutils) is not installed")
    result = subprocess.run([tool] + args, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise Failure("readelf %s failed: %s" % (" ".join(args), result.stderr.strip()))
    return result.stdout


def needed_libraries(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf(["-d", path]))


# ---- Scenarios ------------------------------------------------------------------------------


def cleanup():
    for child in reversed(REGISTRY.all()):
        if isinstance(child, Worker):
            child.stop()
        else:
            child.kill()


def dump_transcripts():
    for child in REGISTRY.all():
        print(child.transcript(), flush=True)


def watchdog_fire(scenario):
    log("FAIL e2e_%s: the scenario exceeded %d s; killing everything" % (scenario, SCENARIO_LIMIT_S))
    dump_transcripts()
    for child in REGISTRY.all():
        kill_group(child.pid)
    os._exit(1)
