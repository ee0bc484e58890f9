#!/usr/bin/python3
"""End-to-end scenarios for hipr: real programs, real dynamic linker, real worker.

Each scenario starts its own `hipr-worker --device sim` on 127.0.0.1 (port 0), runs programs
built by Debian's hipcc through the stub (LD_PRELOAD of libhip_client_stub.so and/or the
drop-in libamdhip64.so.N folder on LD_LIBRARY_PATH), checks what they print and how they exit,
reads /proc/<pid>/maps of the live programs (they pause for it: HIPR_E2E_HANDSHAKE), and kills
the worker at the end. Every child runs under a timeout and the whole scenario under a
watchdog: nothing may hang. On failure it prints the failed check, every program's output and
the worker's log, and exits 1.

    /usr/bin/python3 run_e2e.py --build-dir BUILD --scenario NAME [--bin-dir DIR] [--verbose]
    /usr/bin/python3 run_e2e.py --build-dir BUILD --list

Stdlib only. ctest runs one test per scenario (tests/e2e/CMakeLists.txt).
"""
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


def process_table():
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = read_proc_stat(int(entry))
            if st:
                table[int(entry)] = st
    return table


class Worker:
    """hipr-worker --device sim on 127.0.0.1, port 0, in its own process group."""

    def __init__(self, build, tmp, name="worker"):
        self.name = name
        self.port_file = os.path.join(tmp, name + ".port")
        self.log_path = os.path.join(tmp, name + ".log")
        self.argv = [build.worker, "--listen", "127.0.0.1:0", "--port-file", self.port_file, "--device", "sim",
                     "--sim-memory", SIM_MEMORY, "--log-level", "info"]
        # Should the driver itself be killed (no cleanup), the worker dies with it; its zygote and
        # sessions follow the worker (their own PR_SET_PDEATHSIG). setpriv execs: the pid stays.
        setpriv = shutil.which("setpriv")
        launch = [setpriv, "--pdeathsig", "KILL", "--"] + self.argv if setpriv else self.argv
        self.log_file = open(self.log_path, "wb")
        self.proc = subprocess.Popen(launch, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     stderr=subprocess.STDOUT, start_new_session=True, env=base_env())
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
        log("%s (pid %d) listening on %s" % (name, self.pid, self.server))

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
    if server is not None:
        env["HIPR_SERVER"] = server
    if mode in ("preload", "both"):
        env["LD_PRELOAD"] = build.stub
    if mode in ("dropin", "both"):
        env["LD_LIBRARY_PATH"] = build.dropin
    if mode not in ("preload", "dropin", "both"):
        raise ValueError(mode)
    return env


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


class Scenario:
    def __init__(self, build, tmp):
        self.build = build
        self.tmp = tmp
        self.workers = []

    def worker(self, name="worker"):
        w = Worker(self.build, self.tmp, name)
        self.workers.append(w)
        return w

    def report_worker_errors(self, worker):
        errors = worker.error_lines()
        for line in errors[:20]:
            log("note: %s logged: %s" % (worker.name, line))

    # 1. memory_preload / memory_dropin / memory_both

    def memory(self, mode):
        self.build.check_runtime(need_dropin=mode != "preload")
        w = self.worker()
        argv = [self.build.program("memory"), "--total-mem", str(SIM_MEMORY_BYTES)]
        run_to_pass("memory (%s)" % mode, argv, client_env(self.build, w.server, mode), timeout=200)
        if not w.alive():
            raise Failure("the worker died during the run (%s)" % describe_rc(w.proc.returncode))
        self.report_worker_errors(w)

    def scenario_memory_preload(self):
        self.memory("preload")

    def scenario_memory_dropin(self):
        self.memory("dropin")

    def scenario_memory_both(self):
        self.memory("both")

    # 2. errors

    def scenario_errors(self):
        self.build.check_runtime()
        w = self.worker()
        run_to_pass("errors", [self.build.program("errors")], client_env(self.build, w.server, "preload"), 120)
        if not w.alive():
            raise Failure("the worker died during the errors run (%s)" % describe_rc(w.proc.returncode))

    # 3. unreachable

    def scenario_unreachable(self):
        self.build.check_runtime()
        # A port on which nothing listens: bound, then closed.
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        closed = "127.0.0.1:%d" % s.getsockname()[1]
        s.close()
        for label, server in (("closed port " + closed, closed), ("HIPR_SERVER unset", None)):
            env = client_env(self.build, server, "preload")
            started = time.monotonic()
            program = run_to_pass("unreachable (%s)" % label, [self.build.program("unreachable")], env, 20)
            took = program.ended - started
            first = [line for line in program.text("out") if line.startswith("E2E_FIRST_CALL")]
            log("%s: %s; whole run %.2f s" % (label, first[0] if first else "?", took))
            stderr = program.text("err")
            stub_lines = [line for line in stderr if line.startswith("hipr[")]
            if not any("HIPR_SERVER" in line for line in stderr):
                raise Failure("%s: stderr does not mention HIPR_SERVER:\n%s" % (label, "\n".join(stderr)))
            if len(stub_lines) != 1:
                raise Failure("%s: expected one clear log line from the stub, got %d:\n%s"
                              % (label, len(stub_lines), "\n".join(stub_lines)))
            log("%s: the stub said: %s" % (label, stub_lines[0]))

    # 4. worker_killed / session_killed

    def start_copy_loop(self, w, name):
        program = Program(name, [self.build.program("copy_loop"), "--max-seconds", "120"],
                          client_env(self.build, w.server, "preload"))
        program.wait_for(r"^E2E_LOOPING (\d+)$", 60, "E2E_LOOPING")
        check_live_maps(program)
        time.sleep(1.0)  # Well into the copies.
        return program

    def expect_link_lost(self, program, killed_at, limit_s, event="the kill"):
        rc = program.wait(limit_s + 20)
        took = program.ended - killed_at
        errors = [line for line in program.text("out") if line.startswith("E2E_HIP_ERROR")]
        if rc != EXIT_LINK_LOST:
            raise Failure("%s: %s after %s, expected exit code %d (hipErrorNoDevice, then every call "
                          "failing fast): %s" % (program.name, describe_rc(rc), event, EXIT_LINK_LOST,
                                                 errors[0] if errors else "no HIP error reported"))
        if took > limit_s:
            raise Failure("%s noticed the lost link only %.2f s after %s (limit %.0f s)"
                          % (program.name, took, event, limit_s))
        log("%s: %s; exited %.2f s after %s" % (program.name, errors[0] if errors else "?", took, event))
        for line in program.text("err"):
            if line.startswith("hipr["):
                log("%s: the stub said: %s" % (program.name, line))

    def scenario_worker_killed(self):
        self.build.check_runtime()
        w = self.worker()
        program = self.start_copy_loop(w, "copy_loop")
        members = w.group_members()
        log("SIGKILL to the worker's process group %d (%d processes: %s)" % (w.pid, len(members), members))
        killed_at = time.monotonic()
        w.kill_group(signal.SIGKILL)
        if not w.wait_group_gone(5):
            raise Failure("worker processes survived SIGKILL: %s" % w.group_members())
        self.expect_link_lost(program, killed_at, 10)

    def scenario_session_killed(self):
        self.build.check_runtime()
        w = self.worker()
        program = self.start_copy_loop(w, "copy_loop")
        sessions = w.session_pids()
        if len(sessions) != 1:
            raise Failure("expected one session process (worker -> zygote -> hipr-s*), found %s" % sessions)
        log("SIGKILL to session process %d (%s)" % (sessions[0], read_proc_stat(sessions[0])))
        killed_at = time.monotonic()
        os.kill(sessions[0], signal.SIGKILL)
        self.expect_link_lost(program, killed_at, 5)
        if not w.alive():
            raise Failure("the worker died with its session (%s)" % describe_rc(w.proc.returncode))
        # The worker goes on serving.
        run_to_pass("copy_loop (second client)", [self.build.program("copy_loop"), "--iterations", "3"],
                    client_env(self.build, w.server, "preload"), 60)
        if not w.alive():
            raise Failure("the worker died serving the second client")

    def scenario_worker_frozen(self):
        """Beyond the kill cases: a worker that stops answering without closing anything (SIGSTOP:
        no FIN, no RST). The client must give up after its peer timeout (HIPR_PEER_TIMEOUT_MS,
        default 10 s), never hang."""
        self.build.check_runtime()
        w = self.worker()
        program = self.start_copy_loop(w, "copy_loop")
        log("SIGSTOP to the worker's process group %d" % w.pid)
        stopped_at = time.monotonic()
        w.kill_group(signal.SIGSTOP)
        try:
            self.expect_link_lost(program, stopped_at, 15, "the SIGSTOP")
        finally:
            w.kill_group(signal.SIGKILL)

    # 5. two_clients

    def scenario_two_clients(self):
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        clients = [Program("isolation seed %d" % seed,
                           [self.build.program("isolation"), "--seed", str(seed), "--rounds", "20"], env)
                   for seed in (11, 22)]
        addrs = []
        for c in clients:
            c.wait_for(r"^E2E_READY (\d+)$", 60, "E2E_READY")
            m = [line for line in c.text("out") if line.startswith("E2E_ADDRS")]
            addrs.append(m[0].split()[2:] if m else [])
        sessions = w.session_pids()
        if len(sessions) != 2:
            raise Failure("expected two session processes for two clients, found %s" % sessions)
        shared = sorted(set(addrs[0]) & set(addrs[1]))
        log("two session processes %s; device addresses in common: %s" % (sessions, shared or "none"))
        for c in clients:  # Both run their rounds at the same time.
            c.send_line()
        for c in clients:
            c.wait_for(r"^E2E_PAUSE (\d+)$", 120, "E2E_PAUSE (its checks did not all pass)")
            check_live_maps(c)
        for c in clients:
            c.send_line()
        for c in clients:
            rc = c.wait(30)
            if rc != EXIT_PASS:
                raise Failure("%s: %s, expected exit code 0" % (c.name, describe_rc(rc)))
            log("%s passed in %.2f s" % (c.name, c.ended - c.started))

    # 6. kernel_library

    def scenario_kernel_library(self):
        self.build.check_runtime(need_dropin=True)
        for user_name, lib_name, runtime_needed in (("kernel_user", "libkern.so", True),
                                                    ("kernel_user_early", "libkern_early.so", False)):
            user = self.build.program(user_name)
            lib = os.path.join(self.build.bin, lib_name)
            needed = needed_libraries(user)
            if lib_name not in needed or "libamdhip64.so.5" not in needed:
                raise Failure("%s's DT_NEEDED is %s; expected %s and libamdhip64.so.5" % (user_name, needed, lib_name))
            lib_needs_runtime = any(n.startswith("libamdhip64") for n in needed_libraries(lib))
            if lib_needs_runtime != runtime_needed:
                raise Failure("%s: DT_NEEDED %s; expected %s libamdhip64" % (
                    lib_name, needed_libraries(lib), "a" if runtime_needed else "no"))
            if ".hip_fatbin" not in readelf(["-S", "-W", lib]):
                raise Failure("%s has no .hip_fatbin section" % lib_name)
        w = self.worker()
        for user_name, lib_name in (("kernel_user", "libkern.so"), ("kernel_user_early", "libkern_early.so")):
            for mode in ("preload", "dropin"):
                env = client_env(self.build, w.server, mode)
                early = lib_name == "libkern_early.so" and mode == "preload"
                if early:
                    env["LD_DEBUG"] = "files"  # Prints each "calling init: <object>" on stderr.
                program = run_to_pass("%s (%s)" % (user_name, mode), [self.build.program(user_name)], env, 60)
                if early:
                    inits = [os.path.basename(m.group(1)) for line in program.text("err")
                             for m in [re.search(r"calling init: (\S+)", line)] if m]
                    if lib_name not in inits or STUB_FILE not in inits:
                        raise Failure("LD_DEBUG=files shows no init of %s or %s: %s" % (lib_name, STUB_FILE, inits))
                    if inits.index(lib_name) > inits.index(STUB_FILE):
                        raise Failure("%s was initialised after the stub (%s): the early-registration case "
                                      "is not exercised" % (lib_name, inits))
                    log("%s: %s registered its kernels before the stub's constructors ran (init order %s)"
                        % (user_name, lib_name, " -> ".join(inits)))

    # 7. dlopen_runpath

    def scenario_dlopen_runpath(self):
        self.build.check_runtime()
        main = self.build.program("dlopen_main")
        dynamic = readelf(["-d", main])
        m = re.search(r"\((RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[([^\]]*)\]", dynamic)
        if not m or "$ORIGIN/plugins" not in m.group(2).split(":"):
            raise Failure("dlopen_main has no RUNPATH/RPATH $ORIGIN/plugins:\n%s" % dynamic)
        log("dlopen_main: %s %s" % (m.group(1), m.group(2)))
        if not os.path.isfile(os.path.join(self.build.bin, "plugins", "libplugin.so")):
            raise Failure("plugins/libplugin.so is missing")
        for other in (os.path.join(self.build.bin, "libplugin.so"), os.path.join(self.build.dir, "lib", "libplugin.so")):
            if os.path.exists(other):
                raise Failure("%s exists: libplugin.so must be reachable only through RUNPATH" % other)
        w = self.worker()
        # cwd is the temp dir, so nothing relative to it can find the plugin either.
        run_to_pass("dlopen_main", [main], client_env(self.build, w.server, "preload"), 60, cwd=self.tmp)

    # 8. python_ctypes

    def scenario_python_ctypes(self):
        self.build.check_runtime()
        w = self.worker()
        script = os.path.join(HERE, "ctypes_client.py")
        run_to_pass("ctypes_client.py", ["/usr/bin/python3", script], client_env(self.build, w.server, "preload"), 60)


SCENARIOS = sorted(name[len("scenario_"):] for name in dir(Scenario) if name.startswith("scenario_"))


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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", required=True, help="the CMake build tree")
    parser.add_argument("--bin-dir", help="where the e2e programs are (default BUILD/tests/e2e)")
    parser.add_argument("--scenario", choices=SCENARIOS)
    parser.add_argument("--list", action="store_true", help="list the scenarios")
    parser.add_argument("--verbose", action="store_true", help="print every program's output even on success")
    args = parser.parse_args()
    if args.list:
        print("\n".join(SCENARIOS))
        return 0
    if not args.scenario:
        parser.error("--scenario is required")
    build = Build(args.build_dir, args.bin_dir)

    def terminated(signum, frame):
        raise Failure("the driver received %s" % signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, terminated)
    watchdog = threading.Timer(SCENARIO_LIMIT_S, watchdog_fire, args=(args.scenario,))
    watchdog.daemon = True
    watchdog.start()
    tmp = tempfile.mkdtemp(prefix="hipr-e2e-%s-" % args.scenario)
    scenario = Scenario(build, tmp)
    ok = False
    try:
        getattr(scenario, "scenario_" + args.scenario)()
        ok = True
    except Failure as e:
        log("FAIL e2e_%s: %s" % (args.scenario, e))
    except Exception:
        import traceback
        traceback.print_exc()
        log("FAIL e2e_%s: the driver itself failed" % args.scenario)
    finally:
        watchdog.cancel()
        cleanup()
    if not ok or args.verbose:
        dump_transcripts()
    if not ok:
        if os.listdir(tmp):
            print("(worker logs and port files kept in %s)" % tmp, flush=True)
        else:
            os.rmdir(tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    log("PASS e2e_%s" % args.scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main())
