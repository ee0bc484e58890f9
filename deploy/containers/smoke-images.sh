#!/usr/bin/env bash
# smoke-images.sh: run the two built images together under podman: the
# worker (the sim device, or with --gpu this node's AMD GPUs), its
# HEALTHCHECK, its user and groups, and the client image reaching it
# (client_check.py: devices, hipMalloc, a 1 MiB hipMemcpy round trip), then
# `podman stop` of the worker.
#
#   deploy/containers/smoke-images.sh [--gpu]
#
# Images: HIPR_WORKER_IMAGE (localhost/hipr-worker), HIPR_CLIENT_IMAGE
# (localhost/hipr-client). Where podman needs more (README.md, "Hosts like
# the CI's"): HIPR_PODMAN="podman --runtime runc" and
# HIPR_PODMAN_RUN_ARGS="--ulimit nofile=20000:20000 --ulimit nproc=32768:32768".
# The worker must be built with --format docker (HEALTHCHECK). Needs root
# for podman as the images were built (rootful storage).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
worker_image=${HIPR_WORKER_IMAGE:-localhost/hipr-worker}
client_image=${HIPR_CLIENT_IMAGE:-localhost/hipr-client}
read -r -a podman <<<"${HIPR_PODMAN:-podman}"
read -r -a run_args <<<"${HIPR_PODMAN_RUN_ARGS:-}"
gpu=0
[[ ${1:-} == --gpu ]] && gpu=1

name=hipr-smoke-$$
failures=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }
cleanup() {
  "${podman[@]}" rm -f -t 0 "$name-worker" >/dev/null 2>&1 || true
  "${podman[@]}" secret rm "$name-tenants" >/dev/null 2>&1 || true
  rm -f "$tenants"
}
tenants=$(mktemp)
trap cleanup EXIT

secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf 'smoke %s\n' "$secret" >"$tenants"
"${podman[@]}" secret create "$name-tenants" "$tenants" >/dev/null

worker_args=()
if ((gpu)); then
  # The devices, and the node's GIDs that own them.
  worker_args+=(--device /dev/kfd --device /dev/dri)
  for g in $(stat -c %g /dev/kfd /dev/dri/renderD* | sort -u); do worker_args+=(--group-add "$g"); done
else
  # The image's entrypoint with --device sim instead of hip.
  worker_args+=(--entrypoint '["/usr/bin/tini", "--", "/opt/hipr/bin/hipr-worker", "--listen", "0.0.0.0:18515", "--device", "sim", "--metrics-listen", "0.0.0.0:9464", "--code-cache", "/var/cache/hipr-worker"]')
fi
t=$SECONDS
"${podman[@]}" run -d --name "$name-worker" "${run_args[@]}" "${worker_args[@]}" \
  --secret "$name-tenants,target=/etc/hipr/auth/tenants,uid=10001,mode=0400" \
  "$worker_image" --auth-file /etc/hipr/auth/tenants >/dev/null
healthy=0
for _ in $(seq 60); do
  if "${podman[@]}" healthcheck run "$name-worker" >/dev/null 2>&1; then healthy=1; break; fi
  [[ $("${podman[@]}" inspect -f '{{.State.Running}}' "$name-worker") == true ]] || break
  sleep 0.5
done
if ((healthy)); then
  pass "worker ($([[ $gpu == 1 ]] && echo hip || echo sim) device) healthy after $((SECONDS - t)) s (podman healthcheck run)"
else
  fail "worker not healthy: $("${podman[@]}" logs "$name-worker" 2>&1 | tail -5)"
fi
out=$("${podman[@]}" exec "$name-worker" id 2>&1) || true
[[ $out == uid=10001* ]] && pass "worker runs as: $out" || fail "worker user: $out"
out=$("${podman[@]}" exec "$name-worker" sh -c 'ls -ld /etc/hipr/auth/tenants /var/cache/hipr-worker' 2>&1) || true
printf '      %s\n' "${out//$'\n'/$'\n      '}"

# The client in the worker's network namespace: the worker is at 127.0.0.1.
out=$("${podman[@]}" run --rm "${run_args[@]}" --network "container:$name-worker" \
        -e HIPR_SERVER=127.0.0.1:18515 -e HIPR_TOKEN="smoke:$secret" \
        "$client_image" python3 -c "$(cat "$here/client_check.py")" 2>&1) &&
  pass "client image -> worker image: ${out##*$'\n'}" || fail "client image -> worker image: $out"

t=$SECONDS
"${podman[@]}" stop -t 20 "$name-worker" >/dev/null
rc=$("${podman[@]}" inspect -f '{{.State.ExitCode}}' "$name-worker")
[[ $rc == 0 ]] && pass "podman stop: the worker exited 0 after $((SECONDS - t)) s" ||
  fail "podman stop: exit code $rc after $((SECONDS - t)) s: $("${podman[@]}" logs "$name-worker" 2>&1 | tail -3)"
((failures == 0))
