#!/usr/bin/env bash
# Validates the Kubernetes manifests of deploy/k8s with no cluster:
#
#   tests/deploy/k8s/run.sh SOURCE_DIR BUILD_DIR
#
# 1. npm ci of validate.mjs' packages (package-lock.json here) into
#    BUILD_DIR/npm-k8s, skipped when that lock is already installed there.
# 2. kubectl kustomize renders deploy/k8s, deploy/k8s/client-example, and
#    deploy/k8s with its tls component enabled, into BUILD_DIR/k8s-render;
#    kubectl then parses every rendered object offline (patch --local: the
#    kind must be one kubectl itself knows). kubectl needs no cluster for
#    either; KUBECONFIG is pointed at nothing so none is ever asked. Without
#    kubectl (or with one older than 1.21 for the component) these steps are
#    skipped, saying so, and validate.mjs renders the two plain
#    kustomizations itself.
# 3. validate.mjs: every YAML file under deploy/k8s on its own; the rendered
#    sets with the checks that tie them together; the broken copies of those
#    sets (selftest); each tests/deploy/k8s/bad/*.yaml must be rejected with
#    the message its `# expect:` line names.
# 4. worker_smoke.mjs: BUILD_DIR/bin/hipr-worker runs with the DaemonSet's
#    arguments (skipped, saying so, when it is not built).
#
# Prints every check and a closing "N passed, N failed" line; exits 1 when
# anything failed or surprised, 2 on a usage error. KUBECTL names another
# kubectl binary.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
build=$(mkdir -p "$2" && cd "$2" && pwd)
here=$src/tests/deploy/k8s
manifests=$src/deploy/k8s
npm_dir=$build/npm-k8s
out=$build/k8s-render
kubectl=${KUBECTL:-kubectl}
export KUBECONFIG=/dev/null

passed=0 failed=0 skipped=0
pass() { echo "ok    $*"; passed=$((passed + 1)); }
fail() { echo "FAIL  $*"; failed=$((failed + 1)); }
skip() { echo "SKIP  $*"; skipped=$((skipped + 1)); }
step() { echo; echo "== $*"; }
finish() {
  echo
  echo "k8s manifests: $passed passed, $failed failed, $skipped skipped"
  exit $((failed > 0))
}
# Runs a node script, counting it as one check by its exit status.
check() {
  local what=$1
  shift
  if node "$@"; then pass "$what"; else fail "$what"; fi
}

step "tools"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  fail "node and npm are needed (Debian: apt-get install nodejs npm)"
  finish
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || node_major=0
if ! ((node_major >= 18)); then
  fail "node $(node --version) is too old: 18 or later (Debian 12's nodejs is 18)"
  finish
fi
pass "node $(node --version), npm $(npm --version)"

step "npm packages (kubernetes-models, yaml) in $npm_dir"
if cmp -s "$here/package-lock.json" "$npm_dir/package-lock.json" &&
   [[ -f $npm_dir/node_modules/.package-lock.json ]]; then
  pass "already installed from this package-lock.json"
else
  rm -rf "$npm_dir"
  mkdir -p "$npm_dir"
  cp "$here/package.json" "$here/package-lock.json" "$npm_dir/"
  # The system's CA bundle, where it has one: a registry reached through a
  # TLS-inspecting proxy is trusted as the rest of the machine trusts it.
  npm_ca=()
  [[ -z ${NODE_EXTRA_CA_CERTS:-} && -s /etc/ssl/certs/ca-certificates.crt ]] &&
    npm_ca=(--cafile=/etc/ssl/certs/ca-certificates.crt)
  if (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error "${npm_ca[@]}") 2>&1 | tee "$npm_dir/npm-ci.log"; then
    pass "npm ci"
  elif grep -Eq 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|CERT|certificate' "$npm_dir/npm-ci.log"; then
    # No registry from here (no network, or a proxy whose CA this machine
    # lacks): the schemas cannot be had, so nothing is validated. ctest
    # shows the test as skipped (exit 77), not passed.
    echo "SKIP  npm ci: the npm registry cannot be reached from this machine; the manifests were NOT validated"
    rm -rf "$npm_dir"
    exit 77
  else
    fail "npm ci in $npm_dir"
    finish
  fi
fi
validate=(node "$here/validate.mjs" --npm "$npm_dir")

step "render"
rm -rf "$out"
mkdir -p "$out"
rendered_tls=""
renders=(deploy/k8s:worker deploy/k8s/client-example:client-example)  # directory:output name
if command -v "$kubectl" >/dev/null; then
  minor=$("$kubectl" version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p')
  pass "kubectl $("$kubectl" version --client -o json 2>/dev/null | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')"
  for r in "${renders[@]}"; do
    kdir=${r%%:*} name=${r##*:}
    if "$kubectl" kustomize "$src/$kdir" >"$out/$name.yaml"; then
      pass "kubectl kustomize $kdir -> $out/$name.yaml"
    else
      fail "kubectl kustomize $kdir"
    fi
  done
  # The tls component as README.md enables it: uncomment `components: [tls]`.
  if [[ -n $minor ]] && ((minor >= 21)); then
    cp -r "$manifests" "$out/with-tls"
    sed -i 's/^# components: \[tls\]$/components: [tls]/' "$out/with-tls/kustomization.yaml"
    if ! grep -qx 'components: \[tls\]' "$out/with-tls/kustomization.yaml"; then
      fail "deploy/k8s/kustomization.yaml lacks the line '# components: [tls]' that README.md says to uncomment"
    elif "$kubectl" kustomize "$out/with-tls" >"$out/worker-tls.yaml"; then
      pass "kubectl kustomize deploy/k8s with components: [tls] -> $out/worker-tls.yaml"
      rendered_tls=$out/worker-tls.yaml
    else
      fail "kubectl kustomize deploy/k8s with components: [tls]"
    fi
  else
    skip "the tls component: kubectl 1.${minor:-?} predates kustomize components (needs 1.21 or later)"
  fi
  for f in "$out"/worker.yaml "$out"/client-example.yaml $rendered_tls; do
    [[ -s $f ]] || continue
    want=$(grep -c '^kind:' "$f")
    if names=$("$kubectl" patch --local --type=strategic -p '{}' -f "$f" -o name) &&
       [[ $(wc -l <<<"$names") -eq $want ]]; then
      pass "kubectl parses the $want objects of $(basename "$f") offline: $(tr '\n' ' ' <<<"$names")"
    else
      fail "kubectl does not parse every object of $f"
    fi
  done
else
  skip "kubectl is not installed: no kubectl kustomize, no kubectl parse, no tls render (Debian 12: apt-get install kubernetes-client)"
  for r in "${renders[@]}"; do
    kdir=${r%%:*} name=${r##*:}
    if "${validate[@]}" render-plain "$src/$kdir" >"$out/$name.yaml"; then
      pass "validate.mjs render-plain $kdir -> $out/$name.yaml"
    else
      fail "validate.mjs render-plain $kdir"
    fi
  done
fi

step "every YAML file under deploy/k8s on its own"
mapfile -t files < <(find "$manifests" -name '*.yaml' | sort)
if "${validate[@]}" objects "${files[@]}"; then
  pass "${#files[@]} files"
else
  fail "files under deploy/k8s"
fi

step "the rendered sets and the ties between them"
if [[ -s $out/worker.yaml && -s $out/client-example.yaml ]]; then
  for w in "$out/worker.yaml" $rendered_tls; do
    check "$(basename "$w") with client-example.yaml" "$here/validate.mjs" --npm "$npm_dir" deployment "$w" "$out/client-example.yaml"
  done
  step "each check of the sets rejects a broken copy"
  check "selftest" "$here/validate.mjs" --npm "$npm_dir" selftest "$out/worker.yaml" "$out/client-example.yaml"
else
  fail "nothing rendered to check"
fi

step "deliberately broken objects (tests/deploy/k8s/bad) must be rejected"
for f in "$here"/bad/*.yaml; do
  expect=$(sed -n 's/^# expect: //p' "$f")
  if [[ -z $expect ]]; then
    fail "$(basename "$f") has no '# expect: MESSAGE' line"
    continue
  fi
  got=$("${validate[@]}" objects "$f")
  rc=$?
  if [[ $rc -eq 1 ]] && grep -qF -- "$expect" <<<"$got"; then
    pass "rejected $(basename "$f"): $(grep -F -- "$expect" <<<"$got" | awk 'NR == 1' | sed 's/^FAIL  [^:]*: //')"
  else
    fail "$(basename "$f") was not rejected with \"$expect\" (exit $rc): $got"
  fi
done

step "hipr-worker with the DaemonSet's arguments"
if [[ -x $build/bin/hipr-worker ]]; then
  check "worker smoke" "$here/worker_smoke.mjs" --npm "$npm_dir" "$out/worker.yaml" "$build/bin/hipr-worker"
else
  skip "worker smoke: $build/bin/hipr-worker is not built"
fi

finish
