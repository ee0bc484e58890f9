#!/usr/bin/python3
"""End-to-end scenarios for hipr: real programs, real dynamic linker, real worker.

Each scenario starts its own `hipr-worker --device sim` on 127.0.0.1 (port 0), runs programs
built by Debian's hipcc through the stub (LD_PRELOAD of libhip_client_stub.so and/or the
drop-in libamdhip64.so.N folder on LD_LIBRARY_PATH), checks what they print and how they exit,
reads /proc/<pid>/maps of the live programs (they pause for it: HIPR_E2E_HANDSHAKE), and kills
the worker at the end. Every child runs under a timeout and the whole scenario under a
watchdog: nothing may hang. On failure it prints the failed check, every program's output and
the worker's log, and exits 1.

    /usr/bin/python3 run_e2e.py --build-dir BUILD --scenario NAME [--bin-dir DIR] [--transport shm] [--verbose]
    /usr/bin/python3 run_e2e.py --build-dir BUILD --list

The harness lives in e2e_harness.py, the kernel scenarios in kernel_scenarios.py. Stdlib only.
ctest runs one test per scenario (tests/e2e/CMakeLists.txt).
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from e2e_harness import *  # noqa: F401,F403 (the harness is this driver's vocabulary)
from e2e_harness import Failure, Worker, log
from compress_scenarios import CompressScenarios
from kernel_scenarios import KernelScenarios


class Scenario(KernelScenarios, CompressScenarios):
    def __init__(self, build, tmp):
        self.build = build
        self.tmp = tmp
        self.workers = []

    def worker(self, name="worker", extra_args=()):
        w = Worker(self.build, self.tmp, name, extra_args)
        self.workers.append(w)
        return w

    def report_worker_errors(self, worker):
        errors = worker.error_lines()
        for line in errors[:20]:
            log("note: %s logged: %s" % (worker.name, line))

    # 1. memory_preload / memory_dropin / memory_both

    def memory(self, mode, worker_args=()):
        self.build.check_runtime(need_dropin=mode != "preload")
        w = self.worker(extra_args=list(worker_args))
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

    def scenario_memory_staged(self):
        """The memory checks (1 B to 256 MiB byte-exact, 2-D copies, offsets) with every copy through
        the staging pipeline (--sim-force-staging), as on the hip device."""
        self.memory("preload", ["--sim-force-staging"])

    # 2. errors

    def scenario_errors(self):
        self.build.check_runtime()
        w = self.worker()
        run_to_pass("errors", [self.build.program("errors")], client_env(self.build, w.server, "preload"), 120)
        if not w.alive():
            raise Failure("the worker died during the errors run (%s)" % describe_rc(w.proc.returncode))

    # 3'. rdma selection (the transport itself: --transport rdma)

    def check_rdma_sessions(self):
        """After a scenario run with --transport rdma: every worker moved its sessions to rdma."""
        for w in self.workers:
            text = w.log_text()
            if "transport: RDMA devices hipr_double0" not in text:
                raise Failure("%s did not report the verbs double's device at start-up:\n%s" % (w.name, text))
            moved = text.count("transport rdma (device hipr_double0;")
            if moved == 0:
                raise Failure("%s moved no session to rdma:\n%s" % (w.name, text))
            log("%s: %d session(s) on rdma" % (w.name, moved))

    def scenario_rdma_selection(self):
        """Selecting the transport where rdma cannot be had. With no RDMA device (this machine, no
        verbs double): plain host:port stays on tcp and says why at info level, and rdma://host:port
        fails at the first call with one stub line naming rdma. With the double on both sides but the
        worker's --rdma-device off: plain host:port stays on tcp (the worker declined), rdma:// fails
        saying so. HIPR_RDMA=0 stays on tcp without trying. Devices on both sides that cannot reach
        each other (the client on another fabric of the double): the probe fails with the verbs
        status, plain host:port stays on tcp and both logs say why, rdma:// fails naming the cause,
        and the worker serves the next client over rdma."""
        self.build.check_runtime()
        w = self.worker()
        if "transport: " not in w.log_text():
            raise Failure("the worker did not report its RDMA devices at start-up:\n%s" % w.log_text())
        no_device = "clients stay on tcp" in w.log_text()
        argv = [self.build.program("memory"), "--total-mem", str(SIM_MEMORY_BYTES)]

        def stays_on_tcp(label, server, extra, words):
            env = client_env(self.build, server, "preload")
            env.update(extra)
            env["HIPR_LOG_LEVEL"] = "info"
            program = run_to_pass("rdma selection (%s)" % label, argv, env, 200)
            lines = [line for line in program.text("err") if "transport tcp" in line]
            if not lines or words not in lines[0]:
                raise Failure("%s: expected a stub line 'transport tcp ... %s', got:\n%s"
                              % (label, words, "\n".join(program.text("err"))))
            log("%s: the stub said: %s" % (label, lines[0]))

        def fails_clearly(label, server, extra, words):
            env = client_env(self.build, server, "preload")
            env.update(extra)
            program = run_to_pass("rdma selection (%s)" % label, [self.build.program("unreachable")], env, 20)
            stub_lines = [line for line in program.text("err") if line.startswith("hipr[")]
            if len(stub_lines) != 1 or "rdma://" not in stub_lines[0] or words not in stub_lines[0]:
                raise Failure("%s: expected one stub line naming rdma:// and saying '%s', got:\n%s"
                              % (label, words, "\n".join(stub_lines)))
            log("%s: the stub said: %s" % (label, stub_lines[0]))

        if no_device:
            stays_on_tcp("no device, host:port", w.server, {}, "no usable rdma here")
            fails_clearly("no device, rdma://", "rdma://" + w.server, {}, "this client cannot use rdma")
        else:
            log("this machine has an RDMA device: the no-device cases are skipped")
        stays_on_tcp("HIPR_RDMA=0", w.server, {"HIPR_RDMA": "0"}, "HIPR_RDMA=0")
        # The double on both sides, the worker's rdma off.
        use_verbs_double(self.build, self.tmp)
        off = Worker(self.build, self.tmp, "worker-rdma-off", ["--rdma-device", "off"], transport="rdma")
        self.workers.append(off)
        if "rdma off (--rdma-device off)" not in off.log_text():
            raise Failure("the worker with --rdma-device off did not say so:\n%s" % off.log_text())
        plain = off.server[len("rdma://"):]
        double = {}
        add_verbs_double(double)
        stays_on_tcp("worker declines, host:port", plain, double, "the worker declined rdma")
        fails_clearly("worker declines, rdma://", off.server, {}, "declined")
        if "transport rdma" in off.log_text():
            raise Failure("the worker with --rdma-device off moved a session to rdma")
        # Both sides have a device, on different fabrics: the client's queue pair never reaches the
        # worker's, its probe fails after the RC retries (IBV_WC_RETRY_EXC_ERR), and the worker,
        # which waits for the client's verdict before it switches, stays on tcp too.
        on = Worker(self.build, self.tmp, "worker-rdma-on", [], transport="rdma")
        self.workers.append(on)
        plain = on.server[len("rdma://"):]
        other_fabric = os.path.join(self.tmp, "verbs-fabric-elsewhere")
        os.makedirs(other_fabric, exist_ok=True)
        elsewhere = {}
        add_verbs_double(elsewhere)
        elsewhere["HIPR_VERBS_DOUBLE_DIR"] = other_fabric
        cause = "IBV_WC_RETRY_EXC_ERR"
        stays_on_tcp("unreachable, host:port", plain, elsewhere, "cannot be reached from this one")
        text = on.log_text()
        stayed = [line for line in text.splitlines() if "staying on tcp: the client's probe" in line]
        if len(stayed) != 1 or cause not in stayed[0] or "transport rdma" in text:
            raise Failure("unreachable, host:port: expected one worker line saying it stays on tcp because "
                          "of %s, and no session on rdma:\n%s" % (cause, text))
        log("unreachable, host:port: the worker said: %s" % stayed[0].strip())
        fails_clearly("unreachable, rdma://", on.server, elsewhere, "cannot be reached from this one")
        stayed = [line for line in on.log_text().splitlines() if "staying on tcp: the client's probe" in line]
        if len(stayed) != 2 or cause not in stayed[1]:
            raise Failure("unreachable, rdma://: the worker did not say why:\n%s" % on.log_text())
        if not on.alive():
            raise Failure("the worker died after an unreachable client (%s)" % describe_rc(on.proc.returncode))
        # The next client, on the worker's fabric, gets rdma.
        env = client_env(self.build, on.server, "preload")
        run_to_pass("rdma selection (reachable after unreachable)", argv, env, 200)
        if on.log_text().count("transport rdma (device hipr_double0;") != 1:
            raise Failure("the reachable client after the unreachable ones did not move to rdma:\n%s"
                          % on.log_text())
        Worker.rdma_env = None

    # 3. unreachable

    def scenario_unreachable(self):
        self.build.check_runtime()
        # A port on which nothing listens: bound, then closed.
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        closed = "127.0.0.1:%d" % s.getsockname()[1]
        s.close()
        # A list of workers whose first cannot be reached: one line says so, and that no
        # device of any worker is served.
        several = "%s,%s" % (closed, closed)
        for label, server, words in (("closed port " + closed, closed, "cannot reach worker"),
                                     ("HIPR_SERVER unset", None, "HIPR_SERVER"),
                                     ("two workers", several, "worker 1 of 2 in HIPR_SERVER")):
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
            if len(stub_lines) != 1 or words not in stub_lines[0]:
                raise Failure("%s: expected one clear log line from the stub saying '%s', got %d:\n%s"
                              % (label, words, len(stub_lines), "\n".join(stub_lines)))
            log("%s: the stub said: %s" % (label, stub_lines[0]))

    # 3b. auth

    def scenario_auth(self):
        """A worker with --auth-file: a program without a credential, with a wrong one, and with a
        malformed one fails at its first call with hipErrorNoDevice and one stub line naming
        HIPR_TOKEN; with the tenant's credential, in HIPR_TOKEN or HIPR_TOKEN_FILE, it runs whole.
        The worker logs each refusal. (The replayed-answer case needs a client that records an
        answer: worker_security_test.)"""
        self.build.check_runtime()
        secret = "e2e-secret-0123456789abcdef"
        tenants = os.path.join(self.tmp, "tenants")
        with open(tenants, "w") as f:
            f.write("# e2e tenants\nteam-a %s\nteam-b another-secret-0123456789\n" % secret)
        os.chmod(tenants, 0o600)
        token_file = os.path.join(self.tmp, "token")
        with open(token_file, "w") as f:
            f.write("team-a:%s\n" % secret)
        w = self.worker(extra_args=["--auth-file", tenants])
        refused = (("no credential", {}, "requires authentication"),
                   ("a wrong secret", {"HIPR_TOKEN": "team-a:wrong-secret-0123456789"}, "did not accept"),
                   ("another tenant's secret", {"HIPR_TOKEN": "team-b:" + secret}, "did not accept"),
                   ("a malformed token", {"HIPR_TOKEN": "no-colon-here"}, "TENANT:SECRET"))
        for label, extra, words in refused:
            env = client_env(self.build, w.server, "preload")
            env.update(extra)
            program = run_to_pass("auth (%s)" % label, [self.build.program("unreachable")], env, 20)
            stub_lines = [line for line in program.text("err") if line.startswith("hipr[")]
            if len(stub_lines) != 1 or "HIPR_TOKEN" not in stub_lines[0] or words not in stub_lines[0]:
                raise Failure("auth (%s): expected one stub line naming HIPR_TOKEN and saying '%s', got:\n%s"
                              % (label, words, "\n".join(stub_lines)))
            log("auth (%s): the stub said: %s" % (label, stub_lines[0]))
        for label, extra in (("HIPR_TOKEN", {"HIPR_TOKEN": "team-a:" + secret}),
                             ("HIPR_TOKEN_FILE", {"HIPR_TOKEN_FILE": token_file})):
            env = client_env(self.build, w.server, "preload")
            env.update(extra)
            argv = [self.build.program("memory"), "--total-mem", str(SIM_MEMORY_BYTES)]
            run_to_pass("auth (%s)" % label, argv, env, 200)
        if not w.alive():
            raise Failure("the worker died during the auth runs (%s)" % describe_rc(w.proc.returncode))
        failures = [line for line in w.log_text().splitlines() if "authentication failed" in line]
        # The malformed token never reaches the worker: the stub refuses it first.
        if len(failures) < 3:
            raise Failure("the worker logged %d authentication failures, expected 3:\n%s"
                          % (len(failures), w.log_text()))

    def scenario_ipc_tenants(self):
        """IPC handles stay inside their tenant and their worker (ipc_tenants.hip). team-a exports
        memory and an interprocess event on worker 1; another session of team-a opens both, and so
        does team-c, which team-a's `ipc=team-c` allows; team-b is refused with hipErrorInvalidValue
        and so is team-a on worker 2 (same tenants file, another worker). The exporter sees exactly
        the allowed openers' writes. Worker 1 logs the refusal naming both tenants, and /metrics
        counts each refusal by reason."""
        self.build.check_runtime()
        secrets = {t: "%s-secret-0123456789abcdef" % t for t in ("team-a", "team-b", "team-c")}
        tenants = os.path.join(self.tmp, "ipc-tenants")
        with open(tenants, "w") as f:
            f.write("team-a %s ipc=team-c\nteam-b %s memory=20M\nteam-c %s\n"
                    % (secrets["team-a"], secrets["team-b"], secrets["team-c"]))
        os.chmod(tenants, 0o600)
        ports = [os.path.join(self.tmp, "ipc-metrics-%d.port" % i) for i in (1, 2)]
        w1 = self.worker("worker1", ["--auth-file", tenants, "--metrics-listen", "127.0.0.1:0",
                                     "--metrics-port-file", ports[0]])
        w2 = self.worker("worker2", ["--auth-file", tenants, "--metrics-listen", "127.0.0.1:0",
                                     "--metrics-port-file", ports[1]])

        def env_of(worker, tenant):
            env = client_env(self.build, worker.server, "preload")
            env["HIPR_TOKEN"] = "%s:%s" % (tenant, secrets[tenant])
            return env

        program = self.build.program("ipc_tenants")
        exporter = Program("ipc_tenants export (team-a, worker1)", [program, "export"], env_of(w1, "team-a"))
        m = exporter.wait_for(r"^HANDLES ([0-9a-f]{128}) ([0-9a-f]{128}) ([0-9a-f]+)$", 120, "HANDLES")
        mem, event, address = m.group(1), m.group(2), m.group(3)
        cases = (("team-a", w1, "allowed"), ("team-b", w1, "refused"), ("team-c", w1, "allowed"),
                 ("team-a", w2, "refused"))
        for tenant, worker, verdict in cases:
            label = "ipc_tenants open (%s, %s, expected %s)" % (tenant, worker.name, verdict)
            p = run_to_pass(label, [program, "open", mem, event, verdict], env_of(worker, tenant), 120)
            log("%s: %s" % (label, next((l for l in p.text("out") if l.startswith("opener:")), "?")))
        # The exporter's device pointer, named in another session's hipMemcpyDefault: refused, no crash.
        p = run_to_pass("ipc_tenants foreign (team-b, worker1)", [program, "foreign", address], env_of(w1, "team-b"),
                        120)
        log("ipc_tenants foreign: %s" % next((l for l in p.text("out") if l.startswith("foreign:")), "?"))
        exporter.send_line()
        exporter.wait_for(r"^E2E_PAUSE (\d+)$", 60, "E2E_PAUSE (the exporter's checks did not all pass)")
        check_live_maps(exporter)
        exporter.send_line()
        if exporter.wait(30) != EXIT_PASS:
            raise Failure("the exporter failed")
        want = "tenant 'team-b' may not open an IPC handle of tenant 'team-a'"
        refusals = [l for l in w1.log_text().splitlines() if want in l]
        if len(refusals) != 2:
            raise Failure("worker1 logged %d refusals naming both tenants (%r), expected 2 (memory, event):\n%s"
                          % (len(refusals), want, w1.log_text()[-3000:]))
        log("worker1: %s" % refusals[0].strip())
        for worker, port_file, tenant_refused, invalid in ((w1, ports[0], 2, 0), (w2, ports[1], 0, 2)):
            with open(port_file) as f:
                _, page = self.scrape(int(f.read().strip()), "/metrics")
            for reason, n in (("tenant", tenant_refused), ("invalid", invalid)):
                line = 'hipr_ipc_open_refused_total{reason="%s"} %d' % (reason, n)
                if line not in page.splitlines():
                    got = [l for l in page.splitlines() if l.startswith("hipr_ipc_open_refused_total")]
                    raise Failure("%s /metrics: expected %r, got %r" % (worker.name, line, got))
        log("metrics: worker1 counted 2 refusals for the tenant, worker2 2 handles that are not its own")
        # Memory held through IPC counts: team-b (memory=20M) opens its own exports and frees the
        # originals until hipErrorOutOfMemory; the tenant gauge shows what it holds meanwhile.
        # The team-b opener above has exited, but its session may still be
        # ending on the worker (the memory it kept goes with it): wait for the
        # tenant's gauge to read 0 first.
        with open(ports[0]) as f:
            metrics_port = int(f.read().strip())
        idle = 'hipr_tenant_device_memory_bytes{tenant="team-b"} 0'
        deadline = time.monotonic() + 30
        while idle not in self.scrape(metrics_port, "/metrics")[1].splitlines():
            if time.monotonic() > deadline:
                raise Failure("team-b's memory did not return to 0 after its opener's session ended")
            time.sleep(0.05)
        hoard = Program("ipc_tenants hoard (team-b, memory=20M)", [program, "hoard", "20"], env_of(w1, "team-b"))
        m = hoard.wait_for(r"^HOARD (\d+) (\d+)$", 120, "HOARD")
        rounds, held = int(m.group(1)), int(m.group(2))
        hoard.wait_for(r"^E2E_PAUSE (\d+)$", 60, "E2E_PAUSE")
        with open(ports[0]) as f:
            _, page = self.scrape(int(f.read().strip()), "/metrics")
        gauge = 'hipr_tenant_device_memory_bytes{tenant="team-b"} %d' % held
        if gauge not in page.splitlines():
            got = [l for l in page.splitlines() if l.startswith("hipr_tenant_device_memory_bytes")]
            raise Failure("hoard: expected %r in /metrics, got %r" % (gauge, got))
        hoard.send_line()
        if hoard.wait(30) != EXIT_PASS:
            raise Failure("the hoarding program failed")
        log("hoard: team-b held %d MiB through %d opened handles, then hipErrorOutOfMemory; /metrics agrees"
            % (held >> 20, rounds))
        for w in (w1, w2):
            if not w.alive():
                raise Failure("%s died" % w.name)

    def scenario_burst(self):
        """64 clients started at once from one host (a job's ranks), each holding its session a
        while (burst.hip). Against a worker allowed 64 sessions from the peer, all are served,
        although only --max-handshakes-per-peer of them may be in their hello at once: the rest
        are refused for now and retry. Against the default 32 sessions per peer, the other 32 wait
        for free slots and are served too. Meanwhile silent connections (no hello) are still
        ended, at --hello-timeout-ms."""
        self.build.check_runtime()
        import socket
        clients = 64
        for label, limits, hold_ms in (("64 per peer", ["--max-sessions-per-peer", "64"], 500),
                                       ("32 per peer", [], 1500)):
            w = self.worker("worker-%s" % label.split()[0],
                            ["--max-sessions", "64", "--hello-timeout-ms", "3000"] + limits)
            host, port = w.server.rsplit(":", 1)
            silent = []
            for _ in range(3):
                sock = socket.create_connection((host, int(port)), timeout=10)
                silent.append(sock)
            env = client_env(self.build, w.server, "preload")
            del env["HIPR_E2E_HANDSHAKE"]  # No pause: each runs straight through.
            env["HIPR_LOG_LEVEL"] = "warn"
            started = time.monotonic()
            programs = [Program("burst %s #%d" % (label, i), [self.build.program("burst"), str(hold_ms)], env)
                        for i in range(clients)]
            failed = []
            for p in programs:
                rc = p.wait(120)
                if rc != EXIT_PASS or not any(l.startswith("E2E_PASS") for l in p.text("out")):
                    failed.append("%s: %s; %s" % (p.name, describe_rc(rc), " | ".join(p.text("err")[-3:])))
            took = time.monotonic() - started
            if failed:
                raise Failure("burst (%s): %d of %d clients failed:\n%s"
                              % (label, len(failed), clients, "\n".join(failed[:10])))
            retried = sum(1 for p in programs if any("retrying for up to" in l for l in p.text("err")))
            log("burst (%s): %d clients served in %.1f s; %d of them were refused for now and retried"
                % (label, clients, took, retried))
            if label == "32 per peer" and retried < clients // 4:
                raise Failure("burst (32 per peer): only %d clients retried; 32 of 64 should have waited for a "
                              "slot" % retried)
            # The silent connections were ended by the worker (its hello timeout), not left open.
            for sock in silent:
                sock.settimeout(10)
                try:
                    while sock.recv(4096):
                        pass
                except socket.timeout:
                    raise Failure("burst (%s): a silent connection was still open after the burst" % label)
                except OSError:
                    pass  # Reset: ended too.
                finally:
                    sock.close()
            log("burst (%s): the %d silent connections were ended" % (label, len(silent)))
            if not w.alive():
                raise Failure("the worker died during the burst (%s)" % label)
            w.stop()

    # 3b'. tls

    def test_pki(self):
        """Makes a CA, the worker's certificate and clients' (hipr-test-pki); returns name -> path."""
        pki = os.path.join(self.tmp, "pki")
        if not os.path.isdir(pki):
            tool = os.path.join(self.build.dir, "tests", "hipr-test-pki")
            made = subprocess.run([tool, pki], capture_output=True, text=True, timeout=60)
            if made.returncode != 0:
                raise Failure("hipr-test-pki failed: %s" % made.stderr)
        return lambda name: os.path.join(pki, name)

    def scenario_tls(self):
        """A worker with --tls-cert: a program with HIPR_TLS_CA runs whole over TLS 1.3 (memory's
        copies are checked byte for byte); one that trusts another CA, and a plain one, fail at
        their first call with one stub line saying why (certificate verify failed; set HIPR_TLS_CA).
        With --tls-client-ca, a client certificate from that CA is admitted as the tenant its
        common name names, and a client without one is refused."""
        self.build.check_runtime()
        pem = self.test_pki()
        memory = [self.build.program("memory"), "--total-mem", str(SIM_MEMORY_BYTES)]

        def refused(label, server, extra, words):
            env = client_env(self.build, server, "preload")
            env.update(extra)
            program = run_to_pass("tls (%s)" % label, [self.build.program("unreachable")], env, 20)
            stub_lines = [line for line in program.text("err") if line.startswith("hipr[")]
            if len(stub_lines) != 1 or any(w not in stub_lines[0] for w in words):
                raise Failure("tls (%s): expected one stub line saying %s, got:\n%s"
                              % (label, " and ".join(repr(w) for w in words), "\n".join(stub_lines)))
            log("tls (%s): the stub said: %s" % (label, stub_lines[0]))

        w = self.worker(extra_args=["--tls-cert", pem("server.pem"), "--tls-key", pem("server.key")])
        env = client_env(self.build, w.server, "preload")
        env["HIPR_TLS_CA"] = pem("ca.pem")
        run_to_pass("tls (memory)", memory, env, 200)
        if not re.search(r"session \d+: TLSv1\.3 ", w.log_text()):
            raise Failure("the worker did not log a TLS 1.3 session:\n%s" % w.log_text())
        refused("another CA", w.server, {"HIPR_TLS_CA": pem("other-ca.pem")},
                ["certificate verify failed", "HIPR_TLS_CA"])
        refused("plain client", w.server, {}, ["set HIPR_TLS_CA"])
        if not w.alive():
            raise Failure("the worker died during the TLS runs (%s)" % describe_rc(w.proc.returncode))

        m = self.worker(name="worker-mtls", extra_args=["--tls-cert", pem("server.pem"), "--tls-key", pem("server.key"),
                                                        "--tls-client-ca", pem("ca.pem")])
        env = client_env(self.build, m.server, "preload")
        env.update({"HIPR_TLS_CA": pem("ca.pem"), "HIPR_TLS_CERT": pem("client.pem"), "HIPR_TLS_KEY": pem("client.key")})
        run_to_pass("tls (client certificate)", memory, env, 200)
        if "client certificate CN=tenant-a" not in m.log_text():
            raise Failure("the worker did not log the client certificate:\n%s" % m.log_text())
        refused("no client certificate", m.server, {"HIPR_TLS_CA": pem("ca.pem")}, ["certificate required"])
        refused("a stranger's certificate", m.server,
                {"HIPR_TLS_CA": pem("ca.pem"), "HIPR_TLS_CERT": pem("stranger.pem"),
                 "HIPR_TLS_KEY": pem("stranger.key")}, ["HIPR_SERVER"])
        if not m.alive():
            raise Failure("the worker died during the TLS runs (%s)" % describe_rc(m.proc.returncode))

        # A 90-character common name is one tenant, whole: with one session per tenant, a second
        # session of the same certificate waits for the first to end.
        one = self.worker(name="worker-one-per-tenant", extra_args=[
            "--tls-cert", pem("server.pem"), "--tls-key", pem("server.key"), "--tls-client-ca", pem("ca.pem"),
            "--max-sessions-per-tenant", "1"])
        long_cn = {"HIPR_TLS_CA": pem("ca.pem"), "HIPR_TLS_CERT": pem("long-client.pem"),
                   "HIPR_TLS_KEY": pem("long-client.key")}
        env = client_env(self.build, one.server, "preload")
        env.update(long_cn)
        first = Program("tls (long common name, first session)", memory, env)
        first.wait_for(r"^E2E_PAUSE (\d+)$", 200, "E2E_PAUSE")
        refused("long common name, second session", one.server, long_cn, ["already has 1 live sessions"])
        first.send_line()
        if first.wait(30) != EXIT_PASS:
            raise Failure("the first session of the long common name failed")
        # A tenant's limit is final, not a wait: the next session starts once the worker has
        # reaped the first (session 1).
        deadline = time.monotonic() + 30
        while not re.search(r"session 1: process \d+ ended", one.log_text()):
            if time.monotonic() > deadline:
                raise Failure("worker-one-per-tenant did not report the first session ended:\n%s"
                              % one.log_text()[-3000:])
            time.sleep(0.05)
        run_to_pass("tls (long common name, once the first ended)", memory, env, 200)

        # Both a credential and a client certificate: they must name the same tenant.
        tenants = os.path.join(self.tmp, "tls-tenants")
        with open(tenants, "w") as f:
            f.write("tenant-a secret-a-0123456789abcdef\nteam-b secret-b-0123456789abcdef\n")
        os.chmod(tenants, 0o600)
        both = self.worker(name="worker-both", extra_args=[
            "--tls-cert", pem("server.pem"), "--tls-key", pem("server.key"), "--tls-client-ca", pem("ca.pem"),
            "--auth-file", tenants])
        mine = {"HIPR_TLS_CA": pem("ca.pem"), "HIPR_TLS_CERT": pem("client.pem"), "HIPR_TLS_KEY": pem("client.key")}
        env = client_env(self.build, both.server, "preload")
        env.update(mine)
        env["HIPR_TOKEN"] = "tenant-a:secret-a-0123456789abcdef"
        run_to_pass("tls (certificate and credential agree)", memory, env, 200)
        refused("certificate and credential disagree", both.server,
                dict(mine, HIPR_TOKEN="team-b:secret-b-0123456789abcdef"),
                ["the client certificate names 'tenant-a', the credential tenant 'team-b'"])

    # 3c. metrics

    def scrape(self, port, path):
        """GET http://127.0.0.1:port/path: (status code, body)."""
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def scenario_metrics_starved(self):
        """The worker out of file descriptors: its acceptor process gets an open-file limit a few
        descriptors above what it holds, then 80 idle connections reach --metrics-listen. The
        listeners neither spin (the acceptor's CPU time over 2 s stays small) nor flood the log
        (one line when the shortage starts); once the idle connections go, /metrics answers
        again and a program runs through the stub."""
        self.build.check_runtime()
        import resource
        import socket
        port_file = os.path.join(self.tmp, "starved-metrics.port")
        w = self.worker("worker-starved", ["--metrics-listen", "127.0.0.1:0", "--metrics-port-file", port_file])
        with open(port_file) as f:
            port = int(f.read().strip())
        held = len(os.listdir("/proc/%d/fd" % w.pid))
        resource.prlimit(w.pid, resource.RLIMIT_NOFILE, (held + 8, held + 8))
        log("worker-starved holds %d descriptors; its open-file limit is now %d" % (held, held + 8))
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(80)]
        time.sleep(0.5)
        log_before = len(w.log_text())
        ticks_before = cpu_ticks(w.pid)
        time.sleep(2.0)
        ticks = cpu_ticks(w.pid) - ticks_before
        logged = len(w.log_text()) - log_before
        hz = os.sysconf("SC_CLK_TCK")
        log("starved: %.2f s of CPU in 2 s, %d bytes logged" % (ticks / hz, logged))
        if ticks > 0.3 * hz:
            raise Failure("the starved worker used %.2f s of CPU in 2 s: its accept loop spins" % (ticks / hz))
        if logged > 4096:
            raise Failure("the starved worker logged %d bytes in 2 s:\n%s" % (logged, w.log_text()[-2000:]))
        if "pausing accepts" not in w.log_text():
            raise Failure("the worker did not say it ran out of descriptors:\n%s" % w.log_text()[-3000:])
        for sock in idle:
            sock.close()
        deadline = time.monotonic() + 20
        while True:
            try:
                status, page = self.scrape(port, "/metrics")
                if status == 200 and "hipr_sessions_started_total" in page:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise Failure("/metrics did not answer within 20 s after the idle connections went")
            time.sleep(0.2)
        run_to_pass("kernel_user after the starvation", [self.build.program("kernel_user")],
                    client_env(self.build, w.server, "preload"), 120)
        log("after the starvation /metrics answers and a program ran")
        if not w.alive():
            raise Failure("the worker died while starved")

    def scenario_metrics(self):
        """--metrics-listen: a scrape taken while a program runs through the stub passes
        `promtool check metrics` (Debian's prometheus package) and counts what the program did;
        /healthz answers 200; /readyz 200, and 503 naming --max-sessions while the worker is full;
        in the chain, 503 naming the device probe once the device behind the hip runtime is gone
        (--probe-interval-s)."""
        self.build.check_runtime()
        promtool = shutil.which("promtool")
        if promtool is None:
            raise Failure("promtool is missing: apt-get install prometheus (deploy/hipr-dev installs it)")
        port_file = os.path.join(self.tmp, "metrics.port")
        w = self.worker(extra_args=["--metrics-listen", "127.0.0.1:0", "--metrics-port-file", port_file,
                                    "--max-sessions", "1", "--probe-interval-s", "1"])
        with open(port_file) as f:
            port = int(f.read().strip())
        status, body = self.scrape(port, "/readyz")
        if status != 200:
            raise Failure("/readyz of an idle worker: %d %s" % (status, body))
        env = client_env(self.build, w.server, "preload")
        argv = [self.build.program("memory"), "--total-mem", str(SIM_MEMORY_BYTES)]
        program = Program("memory (scraped)", argv, env)
        program.wait_for(r"^E2E_PAUSE (\d+)$", 200, "E2E_PAUSE")
        # The program's session holds the one slot: the worker is not ready for another client.
        status, body = self.scrape(port, "/readyz")
        if status != 503 or "--max-sessions" not in body:
            raise Failure("/readyz of a full worker: expected 503 naming --max-sessions, got %d %s" % (status, body))
        status, page = self.scrape(port, "/metrics")
        program.send_line()
        if program.wait(30) != EXIT_PASS:
            raise Failure("the scraped program failed")
        if status != 200:
            raise Failure("/metrics: %d" % status)
        scrape_path = os.path.join(self.tmp, "scrape.txt")
        with open(scrape_path, "w") as f:
            f.write(page)
        check = subprocess.run([promtool, "check", "metrics"], input=page, capture_output=True, text=True)
        if check.returncode != 0:
            raise Failure("promtool check metrics rejected the scrape (%s):\n%s%s"
                          % (scrape_path, check.stdout, check.stderr))
        log("promtool check metrics: ok (%d lines)" % len(page.splitlines()))

        def value(name, labels=""):
            m = re.search(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)), page, re.M)
            if m is None:
                raise Failure("no %s%s in the scrape:\n%s" % (name, labels, page))
            return float(m.group(1))
        checks = [("hipr_sessions", '{phase="admitted"}', lambda v: v == 1),
                  ("hipr_sessions_started_total", "", lambda v: v >= 1),
                  ("hipr_calls_total", '{op="Malloc"}', lambda v: v > 0),
                  ("hipr_bulk_bytes_total", '{direction="to_device"}', lambda v: v > 0),
                  ("hipr_bulk_bytes_total", '{direction="from_device"}', lambda v: v > 0),
                  ("hipr_call_duration_seconds_count", "", lambda v: v > 0),
                  ("hipr_ready", "", lambda v: v == 0)]
        if w.device in ("sim", "chain"):
            # No GPU behind these: the health families are absent, and the gauge says so.
            checks.append(("hipr_gpu_health_available", "", lambda v: v == 0))
        for name, labels, ok in checks:
            v = value(name, labels)
            if not ok(v):
                raise Failure("%s%s is %g" % (name, labels, v))
        status, body = self.scrape(port, "/healthz")
        if status != 200:
            raise Failure("/healthz: %d %s" % (status, body))
        status, _ = self.scrape(port, "/nowhere")
        if status != 404:
            raise Failure("/nowhere: %d, expected 404" % status)
        # The ended session is counted once the zygote has reaped it.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            _, page = self.scrape(port, "/metrics")
            if value("hipr_sessions_ended_total", '{how="clean"}') >= 1:
                break
            time.sleep(0.1)
        else:
            raise Failure("the ended session was never counted:\n%s" % page)
        if w.inner is not None:
            # The chain: the hip device's runtime forwards to the inner sim worker. Without it the
            # periodic probe fails, and /readyz says so.
            w.inner.kill()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                status, body = self.scrape(port, "/readyz")
                if status == 503 and "device probe failed" in body:
                    break
                time.sleep(0.2)
            else:
                raise Failure("/readyz after the device went away: %d %s" % (status, body))
            log("/readyz with the device gone: %d %s" % (status, body.strip()))
        if not w.alive():
            raise Failure("the worker died during the metrics run")

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

    def scenario_pinned_copies(self):
        """hipHostMalloc memory copied both ways, byte-checked by the program. Over shm it lies in
        the host segment both processes map, so the copies' bytes never cross the rings: the stub's
        counts (HIPR_STATS=1) show under 1 MiB sent (the program sends 3 x 64 MiB and more from
        pinned memory) and only the one pageable 64 MiB read back received. Over tcp they cross.
        The round trips by HIP function it prints add up to its total."""
        self.build.check_runtime()
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        env["HIPR_STATS"] = "1"
        program = run_to_pass("pinned_copies", [self.build.program("pinned_copies")], env, timeout=120)
        err = "\n".join(program.text("err"))
        m = re.search(r"hipr: stats: .*?, ([0-9.]+) (bytes|KiB|MiB) sent, ([0-9.]+) (bytes|KiB|MiB) received", err)
        if not m:
            raise Failure("no byte counts (HIPR_STATS=1) on the client's stderr:\n%s" % err)
        unit = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20}
        sent = float(m.group(1)) * unit[m.group(2)]
        received = float(m.group(3)) * unit[m.group(4)]
        log("stub counted %s (%s sent, %s received) over %s" % (m.group(0), sent, received, Worker.transport))
        if Worker.transport == "shm":
            if sent >= 1 << 20 or received >= 65 << 20:
                raise Failure("pinned copies over shm moved their bytes through the rings: %s" % m.group(0))
        elif sent < 190 << 20:
            raise Failure("pinned copies over tcp sent only %d bytes: %s" % (sent, m.group(0)))
        # The round trips by HIP function add up to the total, and the blocking copies are among them.
        total = re.search(r"hipr: stats: \d+ launches, \d+ calls \((\d+) round trips\)", err)
        rows = re.findall(r"hipr: stats:   (\S.*?): (\d+) round trips?, ([0-9.]+) ms waited", err)
        if not total or not rows:
            raise Failure("no round trips by HIP function (HIPR_STATS=1) on the client's stderr:\n%s" % err)
        by_function = {name: int(n) for name, n, _ in rows}
        if sum(by_function.values()) != int(total.group(1)):
            raise Failure("the round trips by function (%s) do not add up to %s" % (by_function, total.group(1)))
        if by_function.get("hipMemcpy", 0) < 1:
            raise Failure("hipMemcpy waited for no round trip: %s" % by_function)
        log("round trips by function: %s" % by_function)

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

    def scenario_two_workers(self):
        """HIPR_SERVER naming two workers, of one sim device and of two: the program sees three
        devices, in that order, runs kernels on each and copies between every pair both ways
        (two_workers.hip checks the bytes, and that only the two devices of one worker report peer
        access); the bytes of copies between the workers go worker to worker (over tcp; the stub's
        counters say so), or through the client with HIPR_PEER_COPY=0 or over shm;
        HIP_VISIBLE_DEVICES selects from the joint list; a worker killed mid-run fails its devices
        only."""
        self.build.check_runtime()
        a = self.worker("worker_a", ["--sim-devices", "1"])
        b = self.worker("worker_b", ["--sim-devices", "2"])
        env = client_env(self.build, "%s,%s" % (a.server, b.server), "preload")
        env["HIPR_STATS"] = "1"
        program_path = self.build.program("two_workers")
        program = run_to_pass("two_workers", [program_path, "--devices", "3", "--peers", "1-2"], env, 240)
        err = "\n".join(program.text("err"))
        def cross_copies(program, staged_expected):
            err = "\n".join(program.text("err"))
            m = re.search(r"hipr: stats: copies across workers: (\d+), (\d+) bytes of them staged through this "
                          r"process, (\d+) sent worker to worker", err)
            if not m or int(m.group(1)) == 0:
                raise Failure("the stub counted no copy across workers (HIPR_STATS=1):\n%s" % err)
            copies, staged, direct = (int(g) for g in m.groups())
            log("%s: copies across workers: %d; bytes staged through the client %d, sent worker to worker %d"
                % (program.name, copies, staged, direct))
            if staged_expected and (staged == 0 or direct != 0):
                raise Failure("%s: copies between workers should pass through the client: %s" % (program.name, m.group(0)))
            if not staged_expected and (staged != 0 or direct < 72 << 20):
                raise Failure("%s: the bytes of copies between workers passed through the client: %s"
                              % (program.name, m.group(0)))
        # Over shm (unix sockets) workers offer no peer copies: the client stages them.
        cross_copies(program, staged_expected=Worker.transport == "shm")
        for w in (a, b):
            if w.error_lines():
                raise Failure("%s logged errors: %s" % (w.name, w.error_lines()[:5]))
        # The same with the client staging what crosses workers (HIPR_PEER_COPY=0).
        staged = run_to_pass("two_workers (HIPR_PEER_COPY=0)", [program_path, "--devices", "3", "--peers", "1-2"],
                             dict(env, HIPR_PEER_COPY="0"), 240)
        cross_copies(staged, staged_expected=True)
        # The joint list is a#0, b#0, b#1: "2,0" is b's second device, then a's; "1,2" both of b's.
        for visible, devices, peers in (("2,0", "2", None), ("1,2", "2", "0-1"), ("2", "1", None)):
            env_v = dict(env, HIP_VISIBLE_DEVICES=visible)
            argv = [program_path, "--devices", devices] + (["--peers", peers] if peers else [])
            run_to_pass("two_workers (HIP_VISIBLE_DEVICES=%s)" % visible, argv, env_v, 240)
        # Worker b dies mid-run: device 0 (a's) goes on, devices 1 and 2 fail with hipErrorNoDevice.
        program = Program("two_workers --lose 1",
                          [program_path, "--devices", "3", "--peers", "1-2", "--lose", "1"], env)
        program.wait_for(r"^E2E_LOSE (\d+)$", 240, "E2E_LOSE")
        b.kill_group(signal.SIGKILL)
        if not b.wait_group_gone(5):
            raise Failure("worker_b's processes survived SIGKILL: %s" % b.group_members())
        program.send_line()
        rc = program.wait(60)
        if rc != EXIT_PASS or "E2E_PASS two_workers" not in program.text("out"):
            raise Failure("two_workers --lose 1: %s, expected a pass" % describe_rc(rc))
        said = [line for line in program.text("err") if b.server in line and "hipr[" in line]
        if not said:
            raise Failure("the stub did not name the lost worker %s:\n%s" % (b.server, "\n".join(program.text("err"))))
        log("the stub said: %s" % said[0])
        if not a.alive():
            raise Failure("worker_a died (%s)" % describe_rc(a.proc.returncode))

    def proxy(self, worker, cuts=(), port=0):
        """hipr-delay-proxy in front of `worker`, cutting its k-th connection after cuts[k] bytes (both
        ways together); returns (Program, its address)."""
        binary = os.path.join(self.build.dir, "bin", "hipr-delay-proxy")
        if not os.path.isfile(binary):
            raise Failure("%s is missing: build the project first" % binary)
        port_file = os.path.join(self.tmp, "proxy-port-%d" % len(self.workers))
        if os.path.exists(port_file):
            os.unlink(port_file)
        argv = [binary, "--to", worker.server, "--rtt", "0", "--listen", "127.0.0.1:%d" % port,
                "--port-file", port_file]
        if cuts:
            argv += ["--reset-after", ",".join(str(c) for c in cuts)]
        program = Program("hipr-delay-proxy", argv, base_env())
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file):
            if time.monotonic() > deadline or program.proc.poll() is not None:
                raise Failure("hipr-delay-proxy did not start: %s" % program.text("err"))
            time.sleep(0.05)
        with open(port_file) as f:
            return program, "127.0.0.1:%s" % f.read().strip()

    def resume_loop(self):
        loop = os.path.join(self.build.dir, "bin", "hipr-bench-distance-loop")
        if not os.path.isfile(loop):
            raise Failure("%s is missing: build the project first" % loop)
        return loop, "120"

    def resume_runner(self, extra_env):
        """run(name, argv, server, timeout) -> (program, rc) with resume on and stats printed, and
        resumes(program): how many times the stub says its link was resumed."""
        def run(name, argv, server, timeout=120):
            env = client_env(self.build, server, "preload")
            env["HIPR_STATS"] = "1"
            env["HIPR_RESUME"] = "on"  # The default resumes only links to another host.
            env.update(extra_env)
            del env["HIPR_E2E_HANDSHAKE"]
            program = Program(name, argv, env)
            return program, program.wait(timeout)

        def resumes(program):
            m = [re.search(r"link: resumed (\d+) times?", line) for line in program.text("err")]
            m = [x for x in m if x]
            return int(m[-1].group(1)) if m else 0
        return run, resumes

    def resume_cuts(self, w, loop_seeds, copy_seeds, extra_env=None, min_resumes=6):
        """The training loop cut at random points through the proxy ends with the uninterrupted run's
        loss; 64 MiB copies both ways cut mid-transfer check every byte."""
        run, resumes = self.resume_runner(extra_env or {})
        loop, steps = self.resume_loop()

        def loss(program):
            lines = [line for line in program.text("out") if line.startswith("final loss:")]
            if "OK" not in program.text("out") or not lines:
                raise Failure("%s did not check out:\n%s" % (program.name, "\n".join(program.text("out") +
                                                                                     program.text("err"))))
            return lines[-1]

        base, rc = run("loop (no cuts)", [loop, steps], w.server)
        if rc != 0:
            raise Failure("the loop failed without cuts: %s\n%s" % (describe_rc(rc), "\n".join(base.text("err"))))
        expected = loss(base)
        log("uninterrupted: %s" % expected)

        # The hello is about 2 KB both ways (TLS's handshake a few more); 120 steps about 8 MB.
        total_resumes = 0
        for seed in loop_seeds:
            rng = random.Random(seed)
            cuts = [rng.randint(2000000, 8000000)] + [rng.randint(20000, 3000000) for _ in range(3)]
            proxy, server = self.proxy(w, cuts)
            program, rc = run("loop (seed %d, cuts %s)" % (seed, cuts), [loop, steps], server)
            proxy.kill()
            if rc != 0:
                raise Failure("%s: %s\n%s" % (program.name, describe_rc(rc), "\n".join(program.text("err"))))
            got = loss(program)
            if got != expected:
                raise Failure("%s: %s, uninterrupted: %s" % (program.name, got, expected))
            total_resumes += resumes(program)
            log("%s: %s after %d resumes" % (program.name, got, resumes(program)))
        if total_resumes < min_resumes:
            raise Failure("the cuts caused only %d resumes" % total_resumes)

        copy_loop = self.build.program("copy_loop")
        for seed in copy_seeds:
            rng = random.Random(100 + seed)
            cuts = [rng.randint(2000000, 200000000)] + [rng.randint(100000, 200000000) for _ in range(2)]
            proxy, server = self.proxy(w, cuts)
            program, rc = run("copy_loop (seed %d, cuts %s)" % (seed, cuts), [copy_loop, "--iterations", "3"],
                              server, 180)
            proxy.kill()
            if rc != 0 or resumes(program) < 1:
                raise Failure("%s: %s, %d resumes\n%s" % (program.name, describe_rc(rc), resumes(program),
                                                          "\n".join(program.text("out") + program.text("err"))))
            log("%s: every byte right after %d resumes" % (program.name, resumes(program)))

    def scenario_resume(self):
        """Sessions survive a dropped link (docs/operations.md "Resuming sessions"). Through
        hipr-delay-proxy, which cuts connections after a given number of bytes: the framework-shaped
        training loop (hipr-bench-distance-loop: small calls, a blocking upload, launches and a read
        back per step) cut at random points, several times per run and sometimes during the resend of a
        resume, ends with the same loss, to the last digit, as an uninterrupted run; 64 MiB copies both
        ways (copy_loop, which checks every byte) cut mid-transfer pass; a link down for two seconds
        (the proxy killed, then back on its port) is resumed. A cut in the hello, and a cut during a
        resume's answer (which spends the resume secret), end the program with a clear error; a worker
        killed while its client tries to resume ends the program with a clear error; every session
        process is gone afterwards."""
        self.build.check_runtime()
        if Worker.transport != "tcp" or Worker.device != "sim":
            raise Failure("sessions resume over tcp; this scenario runs on the sim over tcp")
        grace = 8
        w = self.worker(extra_args=["--resume-grace-s", str(grace)])
        loop, steps = self.resume_loop()
        run, resumes = self.resume_runner({})
        self.resume_cuts(w, loop_seeds=range(1, 7), copy_seeds=range(1, 4))
        copy_loop = self.build.program("copy_loop")

        # Cut in the hello: no session, a clear error.
        proxy, server = self.proxy(w, [500])
        program, rc = run("loop (cut in the hello)", [loop, steps], server)
        proxy.kill()
        said = [line for line in program.text("err") if "cannot start a session" in line]
        if rc == 0 or not said:
            raise Failure("%s: %s; expected a failure naming the hello:\n%s" % (program.name, describe_rc(rc),
                                                                                "\n".join(program.text("err"))))
        log("%s: %s" % (program.name, said[0]))

        # Cut during a resume's answer: the secret is spent, a clear error.
        proxy, server = self.proxy(w, [3000000, 200])
        program, rc = run("loop (cut in the resume)", [loop, steps], server)
        proxy.kill()
        said = [line for line in program.text("err") if "could not be resumed" in line]
        if rc == 0 or not said:
            raise Failure("%s: %s; expected a failure saying the session could not be resumed:\n%s"
                          % (program.name, describe_rc(rc), "\n".join(program.text("err"))))
        log("%s: %s" % (program.name, said[0]))

        # The link down for two seconds: the proxy killed, then back on its port.
        proxy, server = self.proxy(w)
        env = client_env(self.build, server, "preload")
        env["HIPR_STATS"] = "1"
        env["HIPR_RESUME"] = "on"
        blip = Program("copy_loop (a 2 s outage)", [copy_loop, "--max-seconds", "12"], env)
        blip.wait_for(r"^E2E_LOOPING (\d+)$", 60, "E2E_LOOPING")
        time.sleep(1.0)
        proxy.kill()
        time.sleep(2.0)
        proxy, _ = self.proxy(w, port=int(server.rsplit(":", 1)[1]))
        rc = blip.wait(60)
        if rc != EXIT_NO_ERROR or resumes(blip) < 1:
            raise Failure("%s: %s with %d resumes, expected no error (exit %d)\n%s"
                          % (blip.name, describe_rc(rc), resumes(blip), EXIT_NO_ERROR,
                             "\n".join(blip.text("out") + blip.text("err"))))
        proxy.kill()
        log("%s: no error, %d resume(s)" % (blip.name, resumes(blip)))

        # Every session ends: at its client's exit, or after the grace period (the cut hello's and the
        # refused resume's).
        deadline = time.monotonic() + grace + 10
        while w.session_pids() and time.monotonic() < deadline:
            time.sleep(0.2)
        if w.session_pids():
            raise Failure("session processes left on the worker: %s" % w.session_pids())
        if not w.alive() or w.error_lines():
            raise Failure("the worker died or logged errors: %s" % w.error_lines()[:5])

        # The worker killed while its client tries to resume: a clear error within the grace period.
        proxy, server = self.proxy(w)
        env = client_env(self.build, server, "preload")
        env["HIPR_RESUME"] = "on"
        lost = Program("copy_loop (worker killed in the grace period)", [copy_loop, "--max-seconds", "60"], env)
        lost.wait_for(r"^E2E_LOOPING (\d+)$", 60, "E2E_LOOPING")
        proxy.kill()
        time.sleep(0.5)
        w.kill_group(signal.SIGKILL)
        killed_at = time.monotonic()
        self.expect_link_lost(lost, killed_at, grace + 5, "the worker's death")
        if not any("could not be resumed" in line for line in lost.text("err")):
            raise Failure("the stub did not say the session could not be resumed:\n%s" % "\n".join(lost.text("err")))

    def scenario_resume_tls(self):
        """Sessions over TLS resume too (docs/operations.md "Resuming sessions"): with client
        certificates (the tenant is the certificate's), the training loop cut at random points ends
        with the uninterrupted run's loss and 64 MiB copies cut mid-transfer check every byte. The
        worker relays each resumed connection from the process that did its TLS handshake, and every
        relay and session process is gone afterwards."""
        self.build.check_runtime()
        if Worker.transport != "tcp" or Worker.device != "sim":
            raise Failure("sessions resume over tcp; this scenario runs on the sim over tcp")
        pem = self.test_pki()
        grace = 8
        w = self.worker(extra_args=["--resume-grace-s", str(grace), "--tls-cert", pem("server.pem"),
                                    "--tls-key", pem("server.key"), "--tls-client-ca", pem("ca.pem")])
        tls_env = {"HIPR_TLS_CA": pem("ca.pem"), "HIPR_TLS_CERT": pem("client.pem"),
                   "HIPR_TLS_KEY": pem("client.key")}
        self.resume_cuts(w, loop_seeds=range(1, 4), copy_seeds=range(1, 3), extra_env=tls_env, min_resumes=3)
        relays = [line for line in w.log_text().splitlines() if "over TLS: relaying" in line]
        if not relays:
            raise Failure("the worker's log shows no relay:\n%s" % w.transcript())
        log("the worker relayed %d resumed connections, e.g. %s" % (len(relays), relays[0].split("] ", 3)[-1]))
        deadline = time.monotonic() + grace + 10
        while w.session_pids() and time.monotonic() < deadline:
            time.sleep(0.2)
        if w.session_pids():
            raise Failure("session or relay processes left on the worker: %s" % w.session_pids())
        if not w.alive() or w.error_lines():
            raise Failure("the worker died or logged errors: %s" % w.error_lines()[:5])

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

    # 8b. wheel_preload

    def scenario_wheel_preload(self):
        """Extensions laid out as PyTorch's ROCm wheels, from Python, under LD_PRELOAD alone."""
        self.build.check_runtime()
        lib_dir = os.path.join(self.build.bin, "wheelpkg", "torchlike", "lib")
        for name in ("libwheel_ext.so", "libwheel_old.so"):
            path = os.path.join(lib_dir, name)
            needed = needed_libraries(path)
            if needed.count("libamdhip64.so") != 1 or any(n.startswith("libamdhip64.so.") for n in needed):
                raise Failure("%s needs %s, expected the unversioned libamdhip64.so" % (name, needed))
            dynamic = readelf(["-d", path])
            if not re.search(r"\(RPATH\)\s+Library rpath: \[\$ORIGIN\]", dynamic):
                raise Failure("%s has no DT_RPATH $ORIGIN:\n%s" % (name, dynamic))
        rtc = os.path.join(lib_dir, "libwheel_rtc.so")
        if "libhiprtc.so" not in needed_libraries(rtc) or \
                not re.search(r"\(RPATH\)\s+Library rpath: \[\$ORIGIN\]", readelf(["-d", rtc])):
            raise Failure("libwheel_rtc.so does not need the bundled libhiprtc.so through DT_RPATH $ORIGIN")
        unversioned = [line for line in readelf(["--dyn-syms", "-W", rtc]).splitlines() if " UND hiprtc" in line]
        if len(unversioned) != 3 or any("@" in line for line in unversioned):
            raise Failure("libwheel_rtc.so should reference three unversioned hiprtc*:\n%s" % "\n".join(unversioned))
        versions = readelf(["-V", os.path.join(lib_dir, "libwheel_ext.so")])
        if "hip_6.0" not in versions or "File: libamdhip64.so " not in versions + " ":
            raise Failure("libwheel_ext.so does not reference hip_6.0 in libamdhip64.so:\n%s" % versions)
        w = self.worker()
        env = client_env(self.build, w.server, "preload")
        env["HIPR_LOG_LEVEL"] = "debug"
        p = run_to_pass("wheel_client.py", ["/usr/bin/python3", os.path.join(HERE, "wheel", "wheel_client.py"), lib_dir],
                        env, 120, cwd=self.tmp)
        err = "\n".join(p.text("err"))
        for name in ("libwheel_ext.so", "libwheel_old.so"):
            if not re.search(r"ABI major 6 for \S*%s" % re.escape(name), err):
                raise Failure("the stub's log does not give %s major 6" % name)
        if "resolves to %s" % os.path.join(lib_dir, "libamdhip64.so") not in err:
            raise Failure("libwheel_old.so's major did not come from the runtime file beside it")
        # A program that itself needs libamdhip64.so.6 through its RPATH: the stand-in is mapped (glibc
        # loads a program's dependencies before the stub runs), its calls still reach the stub, and the
        # stub says what is mapped.
        direct = Program("wheel_direct_main", [os.path.join(self.build.bin, "wheel_direct_main")],
                         client_env(self.build, w.server, "preload"), self.tmp)
        rc = direct.wait(60)
        if rc != 0:
            raise Failure("wheel_direct_main: %s" % describe_rc(rc))
        if not any("direct_rt/libamdhip64.so.6 is mapped beside the hipr stub" in line for line in direct.text("err")):
            raise Failure("the stub did not report the runtime mapped by the program's own DT_NEEDED")
        # The same through the launcher, which sets LD_PRELOAD itself.
        env = client_env(self.build, None, "preload")
        del env["LD_PRELOAD"]
        launcher = os.path.join(self.build.dir, "bin", "hipr-run")
        run_to_pass("hipr-run wheel_client.py", [launcher, "--server", w.server, "/usr/bin/python3",
                                                 os.path.join(HERE, "wheel", "wheel_client.py"), lib_dir],
                    env, 120, cwd=self.tmp)


SCENARIOS = sorted(name[len("scenario_"):] for name in dir(Scenario) if name.startswith("scenario_"))

# Scenarios that do not run against the chain's hip device (--device chain), and why. Kept in
# step with e2e_chain_excluded in CMakeLists.txt; docs/operations.md lists them too.
CHAIN_EXCLUDED = {
    "resume": "sessions resume over tcp between the stub and the session process, whatever the "
              "device (the same code on the sim and the hip device); it runs on the sim",
    "resume_tls": "as resume, over TLS",
    "missing_twin": "checks the sim's own refusal of a kernel without a twin, which it reports at module "
                    "load; a hip device's runtime loads the whole code object or none",
    "twin_mismatch": "checks the sim's refusal of a twin built from other code; the hip device has no twins",
    "rocm_libs": "checks that a sim without the libraries' twins refuses their kernels; the same",
    "twin_fault": "checks the sim's report of a fault in twin code, which ends the sim worker's session; "
                  "a hip device in front of it sees only that its own session to the sim ended",
    "burst": "admission (limits, refusals for now, retries) is the acceptor's and the stub's, the same for "
             "every device; in the chain 64 clients would make 128 session processes on this 2-CPU machine",
    "metrics_starved": "the acceptor's and the metrics listener's accept loops are the same for every device",
}

# Scenarios that do not run against the chain's 5.x hip device (--hip-major 5), and why; they run
# against the 6.x and 7.x modules.
CHAIN5_EXCLUDED = {
    "generated_api": "the 5.x hip device is built against Debian's HIP 5.2 headers, which lack functions the "
                     "generated table remotes (hipDeviceSetLimit and others): it answers them "
                     "hipErrorNotSupported, as it would on a 5.2 node",
    "device_query": "a hip device built against HIP 5.2 reads only 5.2's attributes; those added in 5.3 and "
                    "later (89 and up) need the 6.x or 7.x module",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", required=True, help="the CMake build tree")
    parser.add_argument("--bin-dir", help="where the e2e programs are (default BUILD/tests/e2e)")
    parser.add_argument("--scenario", choices=SCENARIOS)
    parser.add_argument("--list", action="store_true", help="list the scenarios")
    parser.add_argument("--transport", choices=("tcp", "shm", "rdma"), default="tcp",
                        help="how clients reach the worker: tcp on loopback, shm through a unix socket, or "
                             "rdma (HIPR_SERVER=rdma://) on the verbs double")
    parser.add_argument("--device", choices=("sim", "chain", "hip"), default="sim",
                        help="what serves the clients: a sim worker; the chain (a hip-device worker whose "
                             "runtime is hipr's stub, forwarding to a sim worker); or this node's GPUs "
                             "(hip, the acceptance run of deploy/hipr-dev gpu-check)")
    parser.add_argument("--hip-major", type=int, choices=(5, 6, 7), default=5,
                        help="with --device chain: the hip device module of this ROCm major")
    parser.add_argument("--verbose", action="store_true", help="print every program's output even on success")
    args = parser.parse_args()
    if args.list:
        print("\n".join(SCENARIOS))
        return 0
    if not args.scenario:
        parser.error("--scenario is required")
    if args.device in ("chain", "hip") and args.scenario in CHAIN_EXCLUDED:
        log("e2e_%s does not run in the chain: %s" % (args.scenario, CHAIN_EXCLUDED[args.scenario]))
        return 2
    if args.device == "chain" and args.hip_major == 5 and args.scenario in CHAIN5_EXCLUDED:
        log("e2e_%s does not run in the 5.x chain: %s" % (args.scenario, CHAIN5_EXCLUDED[args.scenario]))
        return 2
    build = Build(args.build_dir, args.bin_dir)
    Worker.transport = args.transport
    Worker.device = args.device
    Worker.hip_major = args.hip_major

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
        if args.transport == "rdma":
            use_verbs_double(build, tmp)
        getattr(scenario, "scenario_" + args.scenario)()
        if args.transport == "rdma":
            scenario.check_rdma_sessions()
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
