"""Bulk lz4 scenarios of run_e2e.py: compress.hip's round trips of compressible and incompressible
data with compression forced on (chunks compressed and chunks skipped, as counted by both ends), and
the defaults on loopback (off). Mixed into run_e2e.Scenario. Stdlib only."""
import re
import time

from e2e_harness import Failure, client_env, log, run_to_pass

# The stub's HIPR_STATS=1 lines (client_stub/base/stats.cc).
STATS_DIRECTIONS = re.compile(r"hipr: stats: bulk lz4: to the device (on|off), from the device (on|off)")
STATS_SENT = re.compile(r"hipr: stats: bulk lz4 sent: (\d+) chunks compressed \(([0-9.]+ \S+) as ([0-9.]+ \S+)\); "
                        r"sent raw: (\d+) chunks \(samples did not shrink\), (\d+) \(chunk did not shrink\), "
                        r"(\d+) \(backing off\), (\d+) \(link faster than lz4\); ([0-9.]+) s compressing")
STATS_RECEIVED = re.compile(r"hipr: stats: bulk lz4 received: (\d+) chunks \(([0-9.]+ \S+) as ([0-9.]+ \S+)\)")
# The worker's lines (worker_service/session/session.cc).
WORKER_AGREED = re.compile(r"session (\d+): bulk lz4: to the device (on|off), from the device (on|off) "
                           r"\(--compress (\w+), (local|remote) client")
WORKER_TOTALS = re.compile(r"session (\d+): bulk lz4 received: (\d+) chunks \((\d+) bytes as (\d+)\); sent: (\d+) "
                           r"chunks compressed \((\d+) bytes as (\d+)\), raw: (\d+) \(samples did not shrink\), "
                           r"(\d+) \(chunk did not shrink\), (\d+) \(backing off\), (\d+) \(link faster than lz4\)")

UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20}


def size_of(text):
    number, unit = text.split()
    return float(number) * UNITS[unit]


def wait_for_log(worker, pattern, what, timeout=10):
    """The session process logs when its client has gone: a moment after the program exits."""
    deadline = time.monotonic() + timeout
    while True:
        m = pattern.search(worker.log_text())
        if m or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if not m:
        raise Failure("the worker's log has no %s line" % what)
    return m


class CompressScenarios:
    def run_compress(self, worker_args, client_settings):
        self.build.check_runtime()
        w = self.worker(extra_args=worker_args)
        env = client_env(self.build, w.server, "preload")
        env["HIPR_STATS"] = "1"
        env["HIPR_LOG_LEVEL"] = "info"
        env.update(client_settings)
        program = run_to_pass("compress", [self.build.program("compress")], env, timeout=200)
        if not w.alive():
            raise Failure("the worker died during the run")
        self.report_worker_errors(w)
        return w, "\n".join(program.text("err"))

    def scenario_compress_forced(self):
        """--compress on and HIPR_COMPRESS=on: every copy byte-exact; the sparse tensors travel
        compressed both ways, the noise raw after a few samples and then untried (backoff); the
        stub's counts match the worker's."""
        w, err = self.run_compress(["--compress", "on"], {"HIPR_COMPRESS": "on"})
        d = STATS_DIRECTIONS.search(err)
        if not d or d.groups() != ("on", "on"):
            raise Failure("the stub's stats do not show lz4 on both ways:\n%s" % err)
        sent = STATS_SENT.search(err)
        received = STATS_RECEIVED.search(err)
        if not sent or not received:
            raise Failure("no bulk lz4 stats on the client's stderr:\n%s" % err)
        compressed, raw, wire = int(sent.group(1)), size_of(sent.group(2)), size_of(sent.group(3))
        sampled, whole, backoff = int(sent.group(4)), int(sent.group(5)), int(sent.group(6))
        # 24 MiB of sparse floats and their pitched copy (1 MiB chunks); 24 MiB of noise.
        if compressed < 24 or wire > 0.7 * raw:
            raise Failure("to the device: %d chunks compressed, %s as %s; expected >= 24 chunks at <= 70%%"
                          % (compressed, sent.group(2), sent.group(3)))
        if sampled < 2 or backoff < 8:
            raise Failure("to the device: the noise was not skipped as it should: %d chunks refused by their "
                          "samples, %d untried (backing off)" % (sampled, backoff))
        if int(sent.group(7)) != 0:
            raise Failure("HIPR_COMPRESS=on must compress whatever compresses, but %s chunks went raw for the "
                          "link's speed" % sent.group(7))
        got, got_raw, got_wire = int(received.group(1)), size_of(received.group(2)), size_of(received.group(3))
        if got < 48 or got_wire > 0.7 * got_raw:
            raise Failure("from the device: %d chunks compressed, %s as %s; expected >= 48 chunks at <= 70%%"
                          % (got, received.group(2), received.group(3)))
        agreed = wait_for_log(w, WORKER_AGREED, "'bulk lz4: to the device ...'")
        if agreed.group(2, 3) != ("on", "on"):
            raise Failure("the worker did not agree to lz4 both ways: %s" % agreed.group(0))
        totals = wait_for_log(w, WORKER_TOTALS, "'bulk lz4 received: ...' (session end)")
        w_received, w_sent = int(totals.group(2)), int(totals.group(5))
        w_sampled, w_backoff = int(totals.group(8)), int(totals.group(10))
        if w_received != compressed or w_sent != got:
            raise Failure("the two ends disagree: the stub sent %d compressed chunks, the worker received %d; "
                          "the worker sent %d, the stub received %d" % (compressed, w_received, w_sent, got))
        if int(totals.group(11)) != 0:
            raise Failure("--compress on must compress whatever compresses, but the worker sent %s chunks raw "
                          "for the link's speed" % totals.group(11))
        if w_sampled < 2 or w_backoff < 8:
            raise Failure("from the device: the noise was not skipped as it should: %d refused by samples, %d "
                          "untried" % (w_sampled, w_backoff))
        log("compress_forced: to the device %d chunks compressed (%s as %s), raw %d/%d/%d "
            "(samples/chunk/backoff), %s s compressing; from the device %d chunks (%s as %s), raw %d/%s/%d"
            % (compressed, sent.group(2), sent.group(3), sampled, whole, backoff, sent.group(8), got,
               received.group(2), received.group(3), w_sampled, totals.group(9), w_backoff))

    def scenario_compress_loopback(self):
        """Defaults on loopback: auto on both sides leaves lz4 off; a client that insists (HIPR_COMPRESS=on)
        is declined by a worker on auto. Copies stay byte-exact either way."""
        for label, settings, note in (("defaults", {}, ""),
                                      ("client on, worker auto", {"HIPR_COMPRESS": "on"}, "the worker declined")):
            w, err = self.run_compress([], settings)
            d = STATS_DIRECTIONS.search(err)
            if not d or d.groups() != ("off", "off"):
                raise Failure("%s: the stub's stats do not show lz4 off both ways:\n%s" % (label, err))
            if STATS_SENT.search(err) or STATS_RECEIVED.search(err):
                raise Failure("%s: lz4 counters printed although lz4 is off:\n%s" % (label, err))
            if note and note not in err:
                raise Failure("%s: the stub did not say '%s':\n%s" % (label, note, err))
            agreed = wait_for_log(w, WORKER_AGREED, "'bulk lz4: to the device ...'")
            if agreed.group(2, 3, 4, 5) != ("off", "off", "auto", "local"):
                raise Failure("%s: the worker's log says: %s" % (label, agreed.group(0)))
            log("compress_loopback (%s): lz4 off both ways; worker: %s" % (label, agreed.group(0)))
