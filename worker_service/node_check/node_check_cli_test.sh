#!/bin/bash
# The real hipr-node binary on fake nodes: a healthy one (exit 0, every line
# ok) and one whose /dev/kfd the worker's user cannot open (exit 1, a FAIL
# line and its fix), --json, and bad usage (exit 2).
# Usage: node_check_cli_test.sh PATH/TO/hipr-node
set -u
bin=$1
tmp=$(mktemp -d /tmp/hipr-node-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}

# As root the nodes belong to made-up ids; otherwise to the caller, and the
# worker is another uid.
if [ "$(id -u)" = 0 ]; then
  owner=4444 group=4343 worker=4242
else
  owner=$(id -u) group=$(id -g) worker=$(($(id -u) + 1))
fi

# make_node DIR: two MI250X GCDs on amdgpu, /dev/kfd and two render nodes
# mode 0660 in group $group, and a rocm-smi that sees both GPUs.
make_node() {
  local root=$1 addr minor=128
  for addr in 0000:c1:00.0 0000:c6:00.0; do
    local dev=$root/sys/bus/pci/devices/$addr
    mkdir -p "$dev/drm/renderD$minor" "$root/sys/bus/pci/drivers/amdgpu"
    printf '0x1002\n' > "$dev/vendor"
    printf '0x740c\n' > "$dev/device"
    printf '0x038000\n' > "$dev/class"
    printf '0x01\n' > "$dev/revision"
    ln -s ../../drivers/amdgpu "$dev/driver"
    minor=$((minor + 1))
  done
  mkdir -p "$root/sys/module/amdgpu" "$root/dev/dri" "$root/bin"
  printf 'live\n' > "$root/sys/module/amdgpu/initstate"
  for n in kfd dri/renderD128 dri/renderD129; do
    : > "$root/dev/$n"
    chmod 0660 "$root/dev/$n"
    if [ "$(id -u)" = 0 ]; then chown "$owner:$group" "$root/dev/$n"; fi
  done
  cat > "$root/bin/rocm-smi" <<'EOF'
#!/bin/sh
[ "$1" = --showproductname ] || exit 3
printf '========================= ROCm System Management Interface =========================\n'
for i in 0 1; do
  printf 'GPU[%s]\t\t: Card series: \t\tAMD Instinct MI250X / MI250\n' $i
  printf 'GPU[%s]\t\t: Card model: \t\t0x0b0c\n' $i
  printf 'GPU[%s]\t\t: Card vendor: \t\tAdvanced Micro Devices, Inc. [AMD/ATI]\n' $i
done
printf '=============================== End of ROCm SMI Log ================================\n'
EOF
  chmod 0755 "$root/bin/rocm-smi"
}

# run NAME EXPECTED_STATUS ARGS...: runs hipr-node, output in $tmp/NAME.out.
run() {
  local name=$1 want=$2
  shift 2
  "$bin" "$@" > "$tmp/$name.out" 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "$name: exit status $got, expected $want"
    cat "$tmp/$name.out"
  fi
}

# expect NAME REGEX: a line of NAME's output matches.
expect() {
  grep -Eq -- "$2" "$tmp/$1.out" || { fail "$1: no line matches '$2'"; cat "$tmp/$1.out"; }
}

make_node "$tmp/healthy"
common=(--uid "$worker" --gids "$group" --hip-runtime libm.so.6 --timeout-s 5)

run healthy 0 check --root "$tmp/healthy" "${common[@]}" --rocm-smi "$tmp/healthy/bin/rocm-smi"
for check in pci_gpus amdgpu_module kfd render_nodes hip_runtime rocm_smi gpu_models; do
  expect healthy "^ok +$check  "
done
expect healthy '^ok +pci_gpus +2 AMD GPUs: 0000:c1:00.0 0x740c, 0000:c6:00.0 0x740c$'
expect healthy '^ok +gpu_models +2 GPUs on the PCI bus: 2x AMD Instinct MI250X / MI250 \[0x740c\]; rocm-smi agrees$'
expect healthy '^node ready for hipr-worker --device hip$'
if grep -Eq '^(FAIL|warn) ' "$tmp/healthy.out"; then fail "healthy: a check did not pass"; cat "$tmp/healthy.out"; fi

make_node "$tmp/kfd"
chmod 0600 "$tmp/kfd/dev/kfd"
run kfd 1 check --root "$tmp/kfd" "${common[@]}" --rocm-smi "$tmp/kfd/bin/rocm-smi"
expect kfd "^FAIL +kfd +/dev/kfd \\(mode 0600, owner uid $owner, .*\\) is not read/write for uid $worker"
expect kfd '^ +fix: .*cp .*/share/hipr/udev/70-amdgpu-hipr.rules /etc/udev/rules.d/ && udevadm control --reload && udevadm trigger'
expect kfd '^ok +render_nodes '
expect kfd '^node NOT ready: 1 check failed$'

run kfd_json 1 check --root "$tmp/kfd" "${common[@]}" --rocm-smi "$tmp/kfd/bin/rocm-smi" --json
expect kfd_json '^\[\{"name": "pci_gpus", "status": "ok", '
expect kfd_json '^ \{"name": "kfd", "status": "fail", "detail": "/dev/kfd \(mode 0600'
if command -v python3 > /dev/null; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d) == 7, d' "$tmp/kfd_json.out" ||
    fail "kfd_json: not a JSON array of 7 checks"
fi

# The udev rule the fix names is where the binary says.
rules=$(sed -nE 's/.*cp ([^ ]*70-amdgpu-hipr.rules) .*/\1/p' "$tmp/kfd.out" | awk 'NR == 1')
[ -f "$rules" ] || fail "the fix names $rules, which does not exist"

run no_subcommand 2
run bad_flag 2 check --no-such-flag
run user_and_uid 2 check --user root --uid 0
run no_user 2 check --user hipr-no-such-user
run bad_gids 2 check --uid 4242 --gids hipr-no-such-group
run help 0 check --help

if [ "$failures" -ne 0 ]; then
  echo "hipr_node_cli_test: $failures failed"
  exit 1
fi
echo "hipr_node_cli_test: all passed"
