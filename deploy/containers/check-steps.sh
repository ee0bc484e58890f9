#!/usr/bin/env bash
# check-steps.sh: prove the steps of worker.Containerfile and
# client.Containerfile without a container engine, in chroots of the same
# Debian 12 base that make-base.sh imports, and check the images' contents.
#
#   deploy/containers/check-steps.sh [options] [SRC]
#
# SRC (default: this checkout) is the build context: `git archive HEAD` of it
# when it is a git checkout, else (or with --worktree) a tar of the tree
# without the paths in containerignore.
#
#   --rocm N          the ROCm 6.4 (N=6) or 7.2 (N=7) worker image instead:
#                     worker-rocm.Containerfile on a Debian sid base
#                     (make-base.sh --suite sid), its worker checks (the
#                     client image is the Debian 12 one: not built)
#   --lint            only the quick checks (no root needed): the build stages
#                     of both files are the same, and their packages are
#                     deploy/hipr-dev's list
#   --worktree        take SRC's files as they are, even in a git checkout
#   --build-arg K=V   as podman build --build-arg (repeatable)
#   --fresh-base      debootstrap the base again (else the cached one, made
#                     once from /var/cache/fresh-machine/bookworm-minbase.tar
#                     where present, else by debootstrap)
#   --keep            keep the roots afterwards (the path is printed)
#   --roots W C       no build: run the checks on the roots W and C of the
#                     built worker and client images (e.g. `podman export
#                     $(podman create localhost/hipr-worker) | tar -xC W`);
#                     the Containerfiles give their USER, ENV, ENTRYPOINT...
#                     (it writes the worker's tenants file into W)
#
# The steps come from the Containerfiles themselves (containerfile_steps.py:
# RUN with its continuation lines, ARG and ENV defaults, COPY, USER,
# WORKDIR; ENTRYPOINT, CMD and HEALTHCHECK for the checks), so the two cannot
# drift. Like podman's layer cache, one build root serves both images (the
# lint proves their build stages equal). Then, in one root per image:
#   worker: no compiler; uid 10001 in video and render; every ELF under
#           /opt/hipr resolves all its libraries (ldd); as uid 10001:
#           hipr-worker --help, --device sim --probe-only, --device hip
#           --probe-only reaching Debian's HIP runtime (which finds no GPU
#           here); the cache directory writable; the ENTRYPOINT and CMD
#           themselves (with --device sim, free ports, a tenants file) serve,
#           the HEALTHCHECK passes, /readyz answers 200, SIGTERM stops it.
#   client: no compiler; every ELF resolves; as uid 10001: hipr-run --help;
#           the drop-in names lead to the stub; python3 and NumPy start
#           with the stub preloaded and no server set; through the
#           ENTRYPOINT (hipr-run), python3 + ctypes reach the worker above:
#           device count, hipMalloc and a 1 MiB round trip of hipMemcpy.
# Needs root (chroot; proc, dev and sys mounts, undone on exit), about 6 GB
# in /var/tmp, and the Debian archive. Takes a while: apt and a full build of
# the project (14 minutes on 2 CPUs otherwise idle, 30 while other builds ran).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
steps_py=$here/containerfile_steps.py
worker_file=$here/worker.Containerfile
client_file=$here/client.Containerfile
lint_only=0 worktree=0 fresh_base=0 keep=0 dry=0 rocm=""
build_args=() given_roots=()
while (($#)); do
  case $1 in
    --lint) lint_only=1; shift ;;
    --rocm) rocm=${2:?}; shift 2 ;;
    --worktree) worktree=1; shift ;;
    --fresh-base) fresh_base=1; shift ;;
    --keep) keep=1; shift ;;
    --roots) given_roots=("$(cd "${2:?}" && pwd)" "$(cd "${3:?}" && pwd)"); dry=1; shift 3 ;;
    --build-arg) build_args+=(--build-arg "${2:?}"); shift 2 ;;
    --build-arg=*) build_args+=(--build-arg "${1#--build-arg=}"); shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "check-steps.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
src=$(cd "${1:-$top}" && pwd)
suite=bookworm
if [[ -n $rocm ]]; then
  [[ $rocm == 6 || $rocm == 7 ]] || { echo "check-steps.sh: --rocm 6 or 7" >&2; exit 2; }
  ((${#given_roots[@]} == 0)) || { echo "check-steps.sh: --roots checks the Debian 12 images" >&2; exit 2; }
  suite=sid
  worker_file=$here/worker-rocm.Containerfile
  build_args+=(--build-arg "ROCM_MAJOR=$rocm")
fi

log() { printf 'check-steps: %s\n' "$*" >&2; }
failures=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }

python3 "$steps_py" lint "$here/../hipr-dev" "$here/worker.Containerfile" "$client_file" ||
  { log "lint failed"; exit 1; }
pass "lint: one build stage in both Containerfiles, with deploy/hipr-dev's packages"
for major in 6 7; do
  for stage in build worker; do
    python3 "$steps_py" steps "$here/worker-rocm.Containerfile" $stage --build-arg "ROCM_MAJOR=$major" >/dev/null ||
      { log "lint: worker-rocm.Containerfile's $stage steps cannot be read"; exit 1; }
  done
done
pass "lint: worker-rocm.Containerfile's steps read for ROCm 6 and 7"
((lint_only)) && exit 0

[[ $(id -u) == 0 ]] || { log "needs root (chroot and mounts); --lint runs without"; exit 2; }
t_all=$SECONDS
t_phase=$SECONDS
timings=()
phase_done() { timings+=("$(printf '%-34s %5d s' "$1" $((SECONDS - t_phase)))"); t_phase=$SECONDS; }

# ---- the base, as make-base.sh makes it --------------------------------------
if ((!dry)); then
  cache=/var/cache/hipr-check-steps
  base_tar=$cache/base-$suite.tar
  mkdir -p "$cache"
  if ((fresh_base)) || [[ ! -s $base_tar ]]; then
    minbase=/var/cache/fresh-machine/bookworm-minbase.tar
    if [[ $suite == sid ]]; then
      "$here/make-base.sh" --suite sid --tar-only "$base_tar"
    elif ((!fresh_base)) && [[ -s $minbase ]]; then
      "$here/make-base.sh" --from-tar "$minbase" --tar-only "$base_tar"
    else
      "$here/make-base.sh" --tar-only "$base_tar"
    fi
  fi
fi
# The environment the base image declares (make-base.sh's BASE_ENV_*).
base_path=$(sed -n 's/^BASE_ENV_PATH=//p' "$here/make-base.sh")
base_lang=$(sed -n 's/^BASE_ENV_LANG=//p' "$here/make-base.sh")
phase_done "base root"

work=$(mktemp -d /var/tmp/hipr-check-steps-XXXXXX)
roots=()
worker_pid=""
exec 9>&2  # the script's stderr, for cleanup (a trap can run inside a step's redirection)
cleanup() {
  local rc=$? r m
  exec 2>&9
  if [[ -n $worker_pid ]] && kill -0 "$worker_pid" 2>/dev/null; then
    kill -KILL -- "-$worker_pid" 2>/dev/null || true
    wait "$worker_pid" 2>/dev/null || true
  fi
  for r in "${roots[@]}"; do
    for m in sys dev proc; do
      mountpoint -q "$r/$m" && { umount -R "$r/$m" 2>/dev/null || umount -R -l "$r/$m" 2>/dev/null || true; }
    done
  done
  local left=""
  for r in "$work" "${roots[@]}"; do left+=$(grep " $r/" /proc/self/mounts || true); done
  if [[ -n $left ]]; then
    log "mounts remain (umount them by hand); $work is not removed:"
    printf '%s\n' "$left" >&2
  elif ((keep)); then
    log "kept $work"
  else
    rm -rf --one-file-system "$work"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the build context -------------------------------------------------------
ctx=$work/context
if ((!dry)); then
  mkdir -p "$ctx"
  if ((!worktree)) && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    log "context: git archive HEAD of $src"
    git -C "$src" archive --format=tar HEAD | tar -C "$ctx" -xf -
  else
    excludes=()
    while read -r pat; do
      [[ -z $pat || $pat == \#* ]] && continue
      excludes+=("--exclude=./${pat%/}")
    done <"$here/containerignore"
    log "context: $src as it is, without ${excludes[*]#--exclude=./}"
    tar -C "$src" --anchored "${excludes[@]}" -cf - . | tar -C "$ctx" -xf -
  fi
  log "context: $(du -sh "$ctx" | cut -f1)"
fi

new_root() {  # new_root NAME: a fresh base root in $work/NAME, mounted
  local r=$work/$1
  mkdir -p "$r"
  tar -C "$r" -xf "$base_tar"
  chmod 0755 "$r"
  cp /etc/resolv.conf "$r/etc/resolv.conf"
  attach_root "$r"
}
attach_root() {  # attach_root DIR: proc, dev and sys mounted in DIR (undone on exit)
  local r=$1
  roots+=("$r")
  mount -t proc proc "$r/proc"
  mount --rbind /dev "$r/dev" && mount --make-rslave "$r/dev"
  mount --rbind /sys "$r/sys" && mount --make-rslave "$r/sys"
}

# ---- the emulation of one stage ----------------------------------------------
declare -A stage_args=() stage_env=() stage_roots=()
root="" stage_user="" stage_workdir=""
stage_ep=() stage_cmd=() stage_hc=() stage_expose=()

# in_root ROOT USER WORKDIR ENV-ASSIGNMENTS... -- COMMAND...: run as a
# container would (clean environment; USER with its groups from /etc/group).
in_root() {
  local r=$1 user=$2 dir=$3 home uid gid
  shift 3
  local -a envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local -a drop=()
  if [[ $user != root && $user != 0 && $user != 0:0 ]]; then
    uid=${user%%:*}
    gid=""
    [[ $user == *:* ]] && gid=${user#*:}
    local pw
    pw=$(chroot "$r" getent passwd "$uid") || { log "USER $user: no such user in the image"; return 125; }
    [[ -n $gid ]] || gid=$(cut -d: -f4 <<<"$pw")
    home=$(cut -d: -f6 <<<"$pw")
    drop=(/usr/bin/setpriv --reuid="$(cut -d: -f3 <<<"$pw")" --regid="$gid" --init-groups --)
  else
    home=/root
  fi
  local have_home=0 e
  for e in "${envs[@]}"; do [[ $e == HOME=* ]] && have_home=1; done
  ((have_home)) || envs+=("HOME=$home")
  chroot "$r" /usr/bin/env -i -C "$dir" "${envs[@]}" "${drop[@]}" "$@"
}

env_list() {  # the RUN environment: ARGs, then ENVs over them
  local k
  local -A all=()
  for k in "${!stage_args[@]}"; do all[$k]=${stage_args[$k]}; done
  for k in "${!stage_env[@]}"; do all[$k]=${stage_env[$k]}; done
  for k in "${!all[@]}"; do printf '%s=%s\0' "$k" "${all[$k]}"; done
}

step_arg() { stage_args[$1]=$2; }
step_env() { stage_env[$1]=$2; }
step_user() { stage_user=$1; }
step_workdir() {
  [[ $1 == /* ]] && stage_workdir=$1 || stage_workdir=$stage_workdir/$1
  ((dry)) || mkdir -p "$root$stage_workdir"
}
step_entrypoint() { stage_ep=("$@"); stage_cmd=(); }
step_cmd() { stage_cmd=("$@"); }
step_healthcheck() { stage_hc=("$@"); }
step_meta() {
  [[ $1 == EXPOSE ]] && read -r -a stage_expose <<<"$2"
  log "  $1 $2"
}
step_run() {
  ((dry)) && return 0
  local -a envs=()
  mapfile -d '' envs < <(env_list)
  log "  RUN $(cut -c1-110 <<<"$1" | tr -s ' ')..."
  local t=$SECONDS
  if ! in_root "$root" "$stage_user" "$stage_workdir" "${envs[@]}" -- /bin/sh -c "$1" \
      >>"$work/$stage_name.log" 2>&1; then
    tail -30 "$work/$stage_name.log" >&2
    fail "$stage_name: RUN failed (log: $work/$stage_name.log)"
    exit 1
  fi
  log "    ($((SECONDS - t)) s)"
}
step_copy() {
  ((dry)) && return 0
  local from=$1 dest=${!#} base s path target
  local -a srcs=("${@:2:$#-2}")
  if [[ -z $from ]]; then base=$ctx; else base=${stage_roots[$from]:?COPY --from=$from: no such stage run}; fi
  [[ $dest == /* ]] || dest=$stage_workdir/$dest
  log "  COPY ${from:+--from=$from }${srcs[*]} $dest"
  for s in "${srcs[@]}"; do
    path=$base/${s#/}
    target=$root$dest
    if [[ -d $path ]]; then
      mkdir -p "$target"
      cp -a --no-preserve=ownership "$path/." "$target/"
    elif [[ -e $path ]]; then
      if [[ $dest == */ ]]; then mkdir -p "$target"; else mkdir -p "$(dirname "$target")"; fi
      cp -a --no-preserve=ownership "$path" "$target"
    else
      fail "COPY: $s does not exist in ${from:-the context}"
      exit 1
    fi
  done
}

run_stage() {  # run_stage FILE STAGE ROOT
  local file=$1 steps
  stage_name=$2 root=$3
  stage_args=() stage_env=([PATH]=$base_path [LANG]=$base_lang)
  stage_user=root stage_workdir=/ stage_ep=() stage_cmd=(/bin/bash) stage_hc=() stage_expose=()
  steps=$(python3 "$steps_py" steps "$file" "$stage_name" "${build_args[@]}")
  ((dry)) && log "stage $stage_name of $(basename "$file"): its settings for the checks of $root" ||
    log "stage $stage_name of $(basename "$file") in $root (log: $work/$stage_name.log)"
  eval "$steps"
  stage_roots[$stage_name]=$root
}

image_env() {  # the final image's environment (ENV only), NUL-separated
  local k
  for k in "${!stage_env[@]}"; do printf '%s=%s\0' "$k" "${stage_env[$k]}"; done
}

# ---- build -------------------------------------------------------------------
if ((dry)); then
  attach_root "${given_roots[0]}"
  attach_root "${given_roots[1]}"
  wr=${given_roots[0]} cr=${given_roots[1]}
else
  new_root build
  run_stage "$worker_file" build "$work/build"
  phase_done "build stage (apt + build)"
  ls -la "$work/build/opt/hipr"/{bin,lib} | sed 's/^/    /' >&2
  new_root worker
  wr=$work/worker
  if [[ -z $rocm ]]; then
    new_root client
    cr=$work/client
  fi
fi

# ---- worker ------------------------------------------------------------------
run_stage "$worker_file" worker "$wr"
w_user=$stage_user w_dir=$stage_workdir
w_ep=("${stage_ep[@]}") w_cmd=("${stage_cmd[@]}") w_hc=("${stage_hc[@]}") w_expose=("${stage_expose[@]}")
mapfile -d '' w_env < <(image_env)
phase_done "worker stage"

# ---- client ------------------------------------------------------------------
if [[ -z $rocm ]]; then
  run_stage "$client_file" client "$cr"
  c_user=$stage_user c_dir=$stage_workdir
  c_ep=("${stage_ep[@]}") c_cmd=("${stage_cmd[@]}")
  mapfile -d '' c_env < <(image_env)
  phase_done "client stage"
fi

# ---- checks ------------------------------------------------------------------
log "checks"
as_worker() { in_root "$wr" "$w_user" "$w_dir" "${w_env[@]}" -- "$@"; }
as_client() { in_root "$cr" "$c_user" "$c_dir" "${c_env[@]}" -- "$@"; }

no_compiler() {  # no_compiler ROOT NAME
  local found
  found=$(chroot "$1" /bin/sh -c 'for c in cc gcc g++ c++ clang clang++ clang-15 hipcc; do command -v $c; done' || true)
  [[ -z $found ]] && pass "$2: no compiler" || fail "$2: compilers present: $found"
}
elfs_resolve() {  # elfs_resolve ROOT NAME: ldd of every ELF under /opt/hipr
  local report n missing
  report=$(chroot "$1" /bin/sh -c 'for f in $(find /opt/hipr -type f); do
      if [ "$(head -c4 "$f" | od -An -c | tr -d " ")" = "177ELF" ]; then
        echo "ELF $f"
        ldd "$f" | grep "not found" | sed "s|^|MISSING $f: |"
      fi
    done; true')
  n=$(grep -c '^ELF ' <<<"$report" || true)
  missing=$(grep '^MISSING ' <<<"$report" || true)
  if ((n == 0)); then fail "$2: no ELF file under /opt/hipr"
  elif [[ -z $missing ]]; then pass "$2: ldd finds every library of the $n ELF files under /opt/hipr"
  else fail "$2: missing libraries: ${missing//MISSING /}"; fi
}

no_compiler "$wr" worker
elfs_resolve "$wr" worker
if [[ -z $rocm ]]; then
  no_compiler "$cr" client
  elfs_resolve "$cr" client
fi

groups=$(chroot "$wr" id -nG hipr 2>&1 || true)
if [[ $(chroot "$wr" id -u hipr 2>/dev/null) == 10001 && " $groups " == *" video "* && " $groups " == *" render "* ]]; then
  pass "worker: user hipr is uid 10001, groups: $groups; image USER $w_user"
else
  fail "worker: user hipr: uid $(chroot "$wr" id -u hipr 2>&1), groups: $groups"
fi

out=$(as_worker hipr-worker --help 2>&1) && [[ $out == *hipr-worker* ]] &&
  pass "worker: hipr-worker --help as uid $(as_worker id -u)" || fail "worker: hipr-worker --help: $out"
if out=$(as_worker timeout 60 hipr-worker --device sim --probe-only 2>&1); then
  pass "worker: --device sim --probe-only: ${out##*] }"
else
  fail "worker: --device sim --probe-only: $out"
fi
out=$(as_worker timeout 60 hipr-worker --device hip --probe-only 2>&1) && rc=0 || rc=$?
if [[ -n $rocm ]]; then
  modules=$(cd "$wr/opt/hipr/lib/hipr-worker" && echo *.so)
  [[ $modules == "libhipr_device_hip$rocm.so" ]] && pass "worker: the one hip device module is ROCm $rocm's: $modules" ||
    fail "worker: hip device modules: $modules; expected libhipr_device_hip$rocm.so alone"
  runtime=$(chroot "$wr" readlink -f "/usr/lib/x86_64-linux-gnu/libamdhip64.so.$rocm" || true)
  [[ -n $runtime && -e $wr$runtime ]] && pass "worker: ROCm $rocm's runtime: $runtime" ||
    fail "worker: no libamdhip64.so.$rocm in the image"
fi
if ((rc == 0)); then
  pass "worker: --device hip --probe-only (a GPU is here): ${out##*] }"
elif [[ -n $rocm && $out == *"libhipr_device_hip$rocm.so: no usable AMD GPU: hipGetDeviceCount returned"* ]]; then
  pass "worker: --device hip --probe-only loads ROCm $rocm's runtime, which finds no GPU here (rc $rc)"
elif [[ -z $rocm && $out == *"hipGetDeviceCount returned"* ]]; then
  pass "worker: --device hip --probe-only loads Debian's HIP runtime, which finds no GPU here (rc $rc)"
else
  fail "worker: --device hip --probe-only: $out"
fi
as_worker sh -c 'touch /var/cache/hipr-worker/.w && rm /var/cache/hipr-worker/.w' &&
  pass "worker: /var/cache/hipr-worker writable by the image user" ||
  fail "worker: /var/cache/hipr-worker not writable by $w_user"

# The ENTRYPOINT and CMD as written, but --device sim (no GPU) and free ports
# in place of the EXPOSEd ones (this host's network is shared).
declare -A port_map=()
for p in "${w_expose[@]}"; do
  port_map[${p%/*}]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
done
remap() {  # remap ARG...: prints each argument, NUL-separated, ports and device replaced
  local a p prev=""
  for a in "$@"; do
    for p in "${!port_map[@]}"; do a=${a//:$p/:${port_map[$p]}}; done
    [[ $prev == --device && $a == hip ]] && a=sim
    prev=$a
    printf '%s\0' "$a"
  done
}
mapfile -d '' run_args < <(remap "${w_ep[@]}" "${w_cmd[@]}")
mapfile -d '' hc_args < <(remap "${w_hc[@]}")
# EXPOSE names the clients' port, then the metrics port.
((${#w_expose[@]} == 2)) || { fail "worker: EXPOSE should name two ports: ${w_expose[*]}"; exit 1; }
worker_port=${port_map[${w_expose[0]%/*}]}
metrics_port=${port_map[${w_expose[1]%/*}]}
secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
auth_file=""
for ((i = 0; i < ${#run_args[@]}; i++)); do
  [[ ${run_args[$i]} == --auth-file ]] && auth_file=${run_args[$((i + 1))]}
done
if [[ -n $auth_file ]]; then
  mkdir -p "$wr$(dirname "$auth_file")"
  printf 'check %s\n' "$secret" >"$wr$auth_file"
  chown 10001:10001 "$wr$auth_file"
  chmod 0400 "$wr$auth_file"
fi
log "worker: ${run_args[*]}"
setsid chroot "$wr" /usr/bin/env -i -C "$w_dir" "${w_env[@]}" HOME=/nonexistent \
  /usr/bin/setpriv --reuid=10001 --regid=10001 --init-groups -- "${run_args[@]}" >"$work/worker-run.log" 2>&1 &
worker_pid=$!
up=0
for _ in $(seq 150); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$metrics_port") 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$worker_port") 2>/dev/null; then
    up=1; break
  fi
  kill -0 "$worker_pid" 2>/dev/null || break
  sleep 0.2
done
if ((up)); then
  pass "worker: ENTRYPOINT+CMD (--device sim, ports $worker_port/$metrics_port) serves"
else
  fail "worker: ENTRYPOINT+CMD did not start: $(tail -5 "$work/worker-run.log")"
fi
if ((${#hc_args[@]})); then
  out=$(as_worker timeout 10 "${hc_args[@]}" 2>&1) && pass "worker: HEALTHCHECK passes" ||
    fail "worker: HEALTHCHECK: $out"
else
  fail "worker: no HEALTHCHECK"
fi
out=$(as_worker python3 -c "import urllib.request as u; r = u.urlopen('http://127.0.0.1:$metrics_port/readyz', timeout=5); print(r.status, r.read().decode().strip())" 2>&1) &&
  [[ $out == 200* ]] && pass "worker: /readyz: $out" || fail "worker: /readyz: $out"

if [[ -z $rocm ]]; then
  out=$(as_client hipr-run --help 2>&1) && pass "client: hipr-run --help as uid $(as_client id -u)" ||
    fail "client: hipr-run --help: $out"
  links_ok=1
  for l in "$cr"/opt/hipr/lib/hipr/libamdhip64.so*; do
    [[ $(chroot "$cr" readlink -f "${l#"$cr"}") == /opt/hipr/lib/libhip_client_stub.so ]] || links_ok=0
  done
  ((links_ok)) && pass "client: $(cd "$cr/opt/hipr/lib/hipr" && echo libamdhip64.so*) -> libhip_client_stub.so" ||
    fail "client: drop-in names: $(ls -l "$cr/opt/hipr/lib/hipr")"
  out=$(as_client env -u HIPR_SERVER LD_PRELOAD=/opt/hipr/lib/libhip_client_stub.so \
        python3 -c 'import numpy; print(1)' 2>&1) && [[ $out == 1 ]] &&
    pass "client: python3 and NumPy start with the stub preloaded, no server set" ||
    fail "client: LD_PRELOAD python3: $out"
  out=$(as_client "${c_ep[@]}" "${c_cmd[@]}" -c 'print(1)' 2>&1) && rc=0 || rc=$?
  [[ $rc == 2 && $out == *"no worker"* ]] && pass "client: ENTRYPOINT without HIPR_SERVER says so (rc 2)" ||
    fail "client: ENTRYPOINT without a server: rc $rc: $out"
  out=$(as_client env HIPR_SERVER="127.0.0.1:$worker_port" HIPR_TOKEN="check:$secret" \
        timeout 120 "${c_ep[@]}" python3 -c "$(cat "$here/client_check.py")" 2>&1) &&
    pass "client -> worker over tcp, through the ENTRYPOINT: ${out##*$'\n'}" ||
    fail "client -> worker: $out (worker log: $work/worker-run.log)"

fi

if [[ -n $rocm ]]; then
  # No client image is built with a ROCm worker: this checkout's own stub,
  # where it is built, is the client (Debian 12's build against sid's).
  stub=$top/build/lib/libhip_client_stub.so
  if [[ -f $stub ]] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    out=$(env HIPR_SERVER="127.0.0.1:$worker_port" HIPR_TOKEN="check:$secret" LD_PRELOAD="$stub" \
          LD_LIBRARY_PATH="$top/build/lib/hipr" timeout 120 /usr/bin/python3 "$here/client_check.py" 2>&1) &&
      pass "this machine's client -> the image's worker over tcp: ${out##*$'\n'}" ||
      fail "client -> worker: $out (worker log: $work/worker-run.log)"
  else
    log "no client check: $stub or NumPy missing (deploy/hipr-dev build first)"
  fi
fi

if kill -0 "$worker_pid" 2>/dev/null; then
  kill -TERM "$worker_pid"
  for _ in $(seq 100); do kill -0 "$worker_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$worker_pid" 2>/dev/null; then
    fail "worker: still running 10 s after SIGTERM"
  else
    wait "$worker_pid" && rc=0 || rc=$?
    pass "worker: SIGTERM to the ENTRYPOINT ends it (rc $rc)"
  fi
else
  fail "worker: exited before the end: $(tail -5 "$work/worker-run.log")"
fi
worker_pid=""
phase_done "checks"

du -sh --exclude=proc --exclude=sys --exclude=dev -x "$wr" ${cr:+"$cr"} 2>/dev/null | sed 's/^/    root size: /' >&2
printf '%s\n' "${timings[@]}" | sed 's/^/    time: /' >&2
log "total $((SECONDS - t_all)) s; $failures failure(s)"
((failures == 0))
