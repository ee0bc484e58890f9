#!/usr/bin/env bash
# fetch-rocm.sh DEST MAJOR...: the HIP runtime and headers of ROCm MAJOR (6:
# Debian sid's 6.4, 7: Debian experimental's 7.2), fetched from Debian's
# archive and unpacked under DEST/MAJOR, for building the hip device module
# of that major (worker_service/CMakeLists.txt, HIPR_ROCM_PREFIXES). Prints
# each prefix (DEST/MAJOR/usr), one per line, on stdout. MAJOR 5 is Debian
# 12's HIP 5.2 headers alone (libamdhip64-dev), the interface hipr describes,
# for a build on a system whose own HIP headers are newer (a sid root:
# -DHIP_INCLUDE_DIR=DEST/5/usr/include).
#
# fetch-rocm.sh --libraries DEST MAJOR...: instead, that major's small ROCm
# libraries (MIOpen, rocFFT, hipFFT, rocRAND, hipRAND, hipSOLVER,
# hipSPARSE, hipBLAS; about 50-60 MB each major, rocRAND's kernels most of
# it) and its libhiprtc, unpacked under DEST/libs-MAJOR, for hipr-abi-check's
# test. Prints each library directory.
#
# Nothing is installed into this system and its own apt sources are not
# touched: apt reads a private sources list and keeps its lists and downloads
# under DEST/apt. apt verifies every .deb against the archive's signed
# Release file (debian-archive-keyring). Versions are pinned; a pinned version
# that the archive no longer carries (sid moves) is replaced by the newest of
# the same upstream MAJOR.MINOR, with a warning. A prefix already unpacked at
# the wanted versions is reused without touching the network.
#
# These binaries need a newer glibc than Debian 12's: on Debian 12 they are
# only compiled and linked against, never run.
set -euo pipefail

libraries=0
if [[ ${1:-} == --libraries ]]; then
  libraries=1
  shift
fi
if (($# < 2)); then
  echo "usage: $0 [--libraries] DEST MAJOR..." >&2
  exit 2
fi
dest=$(mkdir -p "$1" && cd "$1" && pwd)
shift

log() { printf 'fetch-rocm: %s\n' "$*" >&2; }

# MAJOR -> suite, the pinned runtime version, and its upstream MAJOR.MINOR.
declare -A suite=([5]=bookworm [6]=sid [7]=experimental)
declare -A pinned=([5]=5.2.3-8 [6]=6.4.3-5 [7]=7.2.4-1~exp2)
declare -A series=([5]=5.2 [6]=6.4 [7]=7.2)
# MAJOR -> the library packages, each pinned.
declare -A library_set=(
  [6]="libmiopen1=6.4.3+dfsg-1+b1 librocfft0=6.4.3-1+b1 libhipfft0=6.4.3-2 librocrand1=6.4.3-1
       libhiprand1=6.4.3-1 libhipsolver0=6.4.1-1 libhipsparse1=6.4.3-1 libhipblas2=6.4.4-1 libhiprtc6=6.4.3-5"
  [7]="libmiopen1=7.2.4+dfsg-1 librocfft0=7.2.4-1~exp1 libhipfft0=7.2.4-1~exp1 librocrand1=7.2.4-1~exp1
       libhiprand1=7.2.4-1~exp1 libhipsolver1=7.2.4-1~exp1 libhipsparse4=7.2.4-1~exp1 libhipblas3=7.2.4-1~exp1
       libhiprtc7=7.2.4-1~exp2"
)

apt_dir=$dest/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
cat >"$apt_dir/rocm.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm sid experimental
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/rocm.sources" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
  -o APT::Sandbox::User=root -qq
  # sid's and experimental's Release files carry a Valid-Until of a week,
  # which a mirror or a machine whose clock lags outlives. The signatures
  # are still checked, and the versions are pinned: stale lists can make a
  # pinned version missing (an error), never a different one.
  -o Acquire::Check-Valid-Until=false -o Acquire::Check-Date=false
)
updated=0
update_lists() {
  ((updated)) && return 0
  log "reading Debian's bookworm, sid and experimental package lists"
  apt-get "${apt_opts[@]}" update >/dev/null
  updated=1
}

# The version of PACKAGE to fetch for MAJOR: PIN, else the newest of the
# major's series.
version_of() {
  local package=$1 major=$2 pin=$3 versions
  versions=$(apt-cache "${apt_opts[@]}" madison "$package" | awk -F'|' '{gsub(/ /, "", $2); print $2}')
  if grep -qxF "$pin" <<<"$versions"; then
    echo "$pin"
    return 0
  fi
  local newest
  newest=$(grep -E "^${series[$major]//./\\.}\\." <<<"$versions" | sort -V | awk 'END { print }')
  if [[ -z $newest ]]; then
    log "Debian's archive has no $package ${series[$major]}.x (pinned $pin)"
    return 1
  fi
  log "warning: $package $pin is gone from ${suite[$major]}; taking $newest"
  echo "$newest"
}

# Fetches PACKAGE=VERSION... (each resolved by version_of) into ROOT, unless
# ROOT's stamp says they are there; STAMP_KEY names the pins.
fetch_into() {
  local root=$1 major=$2 key=$3
  shift 3
  local stamp=$root/.hipr-fetched
  if [[ -f $stamp && $(cat "$stamp") == "$key "* ]]; then
    return 0
  fi
  update_lists
  local wanted=() spec
  for spec in "$@"; do
    wanted+=("${spec%%=*}=$(version_of "${spec%%=*}" "$major" "${spec#*=}")")
  done
  log "fetching ${wanted[*]}"
  local debs=$apt_dir/debs/$(basename "$root")
  rm -rf "$root" "$debs"
  mkdir -p "$debs" "$root"
  (cd "$debs" && apt-get "${apt_opts[@]}" download "${wanted[@]}")
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$root"
  done
  rm -rf "$debs"  # Unpacked; the .deb files are not needed again.
  # The pins first, then what was taken: a later run reuses ROOT only while
  # the pins are unchanged.
  printf '%s %s\n' "$key" "${wanted[*]}" >"$stamp"
}

for major in "$@"; do
  if [[ -z ${suite[$major]:-} ]]; then
    log "ROCm $major is not one of those this script fetches (5: headers only, 6, 7)"
    exit 2
  fi
  if ((libraries)) && [[ -z ${library_set[$major]:-} ]]; then
    log "ROCm $major's libraries are not fetched (6, 7)"
    exit 2
  fi
  if ((libraries)); then
    # shellcheck disable=SC2206 # The set is words, no globs.
    packages=(${library_set[$major]})
    fetch_into "$dest/libs-$major" "$major" "$(tr ' ' ',' <<<"${packages[*]}")" "${packages[@]}"
    echo "$dest/libs-$major/usr/lib/x86_64-linux-gnu"
    continue
  fi
  root=$dest/$major
  if ((major == 5)); then
    fetch_into "$root" "$major" "${pinned[$major]}" "libamdhip64-dev=${pinned[$major]}"
  else
    fetch_into "$root" "$major" "${pinned[$major]}" "libamdhip64-dev=${pinned[$major]}" "libamdhip64-$major=${pinned[$major]}"
  fi
  if [[ ! -f $root/usr/include/hip/hip_version.h ]]; then
    log "the unpacked packages lack usr/include/hip/hip_version.h"
    exit 1
  fi
  echo "$root/usr"
done
