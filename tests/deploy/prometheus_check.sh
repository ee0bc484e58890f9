#!/bin/bash
# Checks deploy/prometheus/ with Prometheus' promtool (Debian: prometheus):
#   1. promtool check rules  hipr-alerts.yml
#   2. promtool test rules   hipr-alerts.test.yml (every alert fires and stays
#                            quiet where it should)
#   3. promtool check config scrape.yml, and scrape-kubernetes.yml (Debian's
#                            promtool has no Kubernetes discovery: the pod
#                            discovery is then swapped for an empty static list)
#   4. every metric the rules read, and every label their selectors match,
#      exists in what the worker serves: a real `hipr-worker --device sim`
#      scrape, plus the GPU families as gpu_health_test renders them from a
#      double of librocm-smi (no GPU here, and a sim worker serves none).
#      `up` comes from Prometheus itself.
#
# Usage: prometheus_check.sh SOURCE_DIR BUILD_DIR [HIPR_WORKER [GPU_HEALTH_TEST]]
# The binaries default to BUILD_DIR/bin/hipr-worker and
# BUILD_DIR/worker_service/gpu_health_test.
# Exits 0 when all pass, 1 on a failure; 77 (skip) without promtool.
set -euo pipefail

src=${1:?usage: prometheus_check.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: prometheus_check.sh SOURCE_DIR BUILD_DIR}
dir=$src/deploy/prometheus
promtool=${PROMTOOL:-/usr/bin/promtool}
python=/usr/bin/python3

if [[ ! -x $promtool ]]; then
  echo "SKIP: $promtool is missing (Debian: apt-get install prometheus)"
  exit 77
fi

tmp=$(mktemp -d)
worker_pid=
cleanup() {
  if [[ -n $worker_pid ]]; then
    kill "$worker_pid" 2>/dev/null || true
    wait "$worker_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

step() { echo "== $*"; }

step "promtool check rules"
"$promtool" check rules "$dir/hipr-alerts.yml"

step "promtool test rules"
"$promtool" test rules "$dir/hipr-alerts.test.yml"

step "promtool check config scrape.yml"
"$promtool" check config "$dir/scrape.yml"

step "promtool check config scrape-kubernetes.yml"
if ! "$promtool" check config "$dir/scrape-kubernetes.yml" > "$tmp/k8s.out" 2>&1; then
  cat "$tmp/k8s.out"
  if ! grep -q "field kubernetes_sd_configs not found" "$tmp/k8s.out"; then
    echo "FAIL: scrape-kubernetes.yml"
    exit 1
  fi
  echo "(this promtool has no Kubernetes discovery: checking the rest of the file)"
  cp "$dir/hipr-alerts.yml" "$tmp/"
  "$python" - "$dir/scrape-kubernetes.yml" "$tmp/scrape-kubernetes.yml" <<'EOF'
import sys
text = open(sys.argv[1]).read()
sd = "    kubernetes_sd_configs:\n      - role: pod\n"
assert sd in text, "scrape-kubernetes.yml: its pod discovery is not where this check expects it"
open(sys.argv[2], "w").write(text.replace(sd, "    static_configs: []\n"))
EOF
  "$promtool" check config "$tmp/scrape-kubernetes.yml"
fi

step "the metrics the rules read exist"
worker=${3:-$build/bin/hipr-worker}
gpu_test=${4:-$build/worker_service/gpu_health_test}
for f in "$worker" "$gpu_test"; do
  if [[ ! -x $f ]]; then
    echo "FAIL: $f is missing (build hipr-worker and gpu_health_test)"
    exit 1
  fi
done

# A sim worker with every optional family on: --memory-budget
# (hipr_device_memory_budget_bytes) and --code-cache (hipr_code_cache_*).
"$worker" --device sim --sim-memory 256M --listen 127.0.0.1:0 --port-file "$tmp/port" \
  --metrics-listen 127.0.0.1:0 --metrics-port-file "$tmp/metrics.port" \
  --memory-budget 1G --code-cache "$tmp/code-cache" --code-cache-bytes 64M > "$tmp/worker.log" 2>&1 &
worker_pid=$!
for _ in $(seq 300); do
  [[ -s $tmp/metrics.port ]] && break
  if ! kill -0 "$worker_pid" 2>/dev/null; then
    cat "$tmp/worker.log"
    echo "FAIL: hipr-worker exited"
    exit 1
  fi
  sleep 0.1
done
if [[ ! -s $tmp/metrics.port ]]; then
  cat "$tmp/worker.log"
  echo "FAIL: hipr-worker wrote no --metrics-port-file"
  exit 1
fi
"$python" - "$(cat "$tmp/metrics.port")" "$tmp/worker.prom" <<'EOF'
import sys, urllib.request
page = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read()
open(sys.argv[2], "wb").write(page)
EOF
kill "$worker_pid"
wait "$worker_pid" 2>/dev/null || true
worker_pid=

HIPR_GPU_HEALTH_EXPOSITION=$tmp/gpu.prom "$gpu_test" \
  --gtest_filter=GpuHealthTest.ADoubleOfTheLibraryGivesThrottlingAndResets > "$tmp/gpu_test.log" 2>&1 || {
  cat "$tmp/gpu_test.log"
  echo "FAIL: gpu_health_test"
  exit 1
}

"$python" - "$dir/hipr-alerts.yml" "$tmp/worker.prom" "$tmp/gpu.prom" <<'EOF'
import re, sys

rules_file, *expositions = sys.argv[1:]

# What the worker serves: metric name -> {label name -> values seen}.
served = {}
for path in expositions:
    text = open(path).read()
    if not text.strip():
        sys.exit("FAIL: %s is empty" % path)
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            served.setdefault(line.split()[2], {})
        elif line and not line.startswith("#"):
            m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s', line)
            labels = served.setdefault(m.group(1), {})
            for name, value in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""):
                labels.setdefault(name, set()).add(value)

FROM_PROMETHEUS = {"up"}             # Series Prometheus makes itself.
TARGET_LABELS = {"instance", "job"}  # Labels Prometheus adds to every series.
# Labels whose values depend on the worker's flags (a sim worker serves
# device="sim"): their names are checked, not their values.
CONFIG_LABELS = {("hipr_worker_info", "device")}
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "offset", "inf", "nan"}

# The rule file is YAML, read without a YAML library: every `expr:` is
# either on its line or a block scalar (`>-`) of the more indented lines.
exprs = []
lines = open(rules_file).read().splitlines()
i = 0
while i < len(lines):
    m = re.match(r'(\s*)expr:\s*(.*)$', lines[i])
    i += 1
    if not m:
        continue
    if m.group(2) not in (">-", ">", "|", "|-"):
        exprs.append(m.group(2))
        continue
    body = []
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(m.group(1))):
        body.append(lines[i].strip())
        i += 1
    exprs.append(" ".join(body))
if len(exprs) < 10:
    sys.exit("FAIL: found only %d expressions in %s" % (len(exprs), rules_file))

problems = []
used = set()
for expr in exprs:
    # Selectors with label matchers: the labels must exist on the metric.
    for name, matchers in re.findall(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}', expr):
        for label, op, value in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"', matchers):
            if name in FROM_PROMETHEUS or label in TARGET_LABELS or name not in served:
                continue
            values = served[name].get(label)
            if values is None:
                problems.append("%s has no label %s (rule: %s)" % (name, label, expr))
            elif op == "=" and value not in values and (name, label) not in CONFIG_LABELS:
                problems.append('%s{%s="%s"}: the worker serves %s only %s' % (name, label, value, label,
                                                                            sorted(values)))
    # Metric names: what is left once strings, matchers, ranges, numbers,
    # grouping clauses and function calls are taken out.
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    bare = re.sub(r'\{[^}]*\}|\[[^\]]*\]', " ", bare)
    bare = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', " ", bare)
    bare = re.sub(r'(?<![a-zA-Z_:])\d+(\.\d+)?([eE][-+]?\d+)?', " ", bare)
    for m in re.finditer(r'[a-zA-Z_:][a-zA-Z0-9_:]*', bare):
        if m.group(0) in KEYWORDS or bare[m.end():].lstrip().startswith("("):
            continue  # A keyword, or a function or aggregation.
        used.add(m.group(0))

for name in sorted(used):
    if name not in served and name not in FROM_PROMETHEUS:
        problems.append("%s is used by a rule but the worker serves no such metric" % name)

print("metrics the rules read: %s" % ", ".join(sorted(used)))
if problems:
    print("\n".join("FAIL: " + p for p in dict.fromkeys(problems)))
    sys.exit(1)
print("all %d exist in the worker's exposition (%d families served)" % (len(used), len(served)))
EOF
echo "PASS"
