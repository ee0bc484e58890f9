#!/usr/bin/env bash
# fetch-rocm.sh DEST MAJOR...: the HIP runtime and headers of ROCm MAJOR (6:
# Debian sid's 6.4, 7: Debian experimental's 7.2), fetched from Debian's
# archive and unpacked under DEST/MAJOR, for building the hip device module
# of that major (worker_service/CMakeLists.txt, HIPR_ROCM_PREFIXES). Prints
# each prefix (DEST/MAJOR/usr), one per line, on stdout.
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

if (($# < 2)); then
  echo "usage: $0 DEST MAJOR..." >&2
  exit 2
fi
dest=$(mkdir -p "$1" && cd "$1" && pwd)
shift

log() { printf 'fetch-rocm: %s\n' "$*" >&2; }

# MAJOR -> suite, the pinned Debian version, and its upstream MAJOR.MINOR.
declare -A suite=([6]=sid [7]=experimental)
declare -A pinned=([6]=6.4.3-5 [7]=7.2.4-1~exp2)
declare -A series=([6]=6.4 [7]=7.2)

apt_dir=$dest/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
cat >"$apt_dir/rocm.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: sid experimental
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
  log "reading Debian's sid and experimental package lists"
  apt-get "${apt_opts[@]}" update >/dev/null
  updated=1
}

# The version of PACKAGE to fetch for MAJOR: the pinned one, else the newest
# of the same series.
version_of() {
  local package=$1 major=$2 versions
  versions=$(apt-cache "${apt_opts[@]}" madison "$package" | awk -F'|' '{gsub(/ /, "", $2); print $2}')
  if grep -qxF "${pinned[$major]}" <<<"$versions"; then
    echo "${pinned[$major]}"
    return 0
  fi
  local newest
  newest=$(grep -E "^${series[$major]//./\\.}\\." <<<"$versions" | sort -V | awk 'END { print }')
  if [[ -z $newest ]]; then
    log "Debian's archive has no $package ${series[$major]}.x (pinned ${pinned[$major]})"
    return 1
  fi
  log "warning: $package ${pinned[$major]} is gone from ${suite[$major]}; taking $newest"
  echo "$newest"
}

for major in "$@"; do
  if [[ -z ${suite[$major]:-} ]]; then
    log "ROCm $major is not one of those this script fetches (6, 7)"
    exit 2
  fi
  root=$dest/$major
  stamp=$root/.hipr-fetched
  if [[ -f $stamp && $(cat "$stamp") == "${pinned[$major]} "* ]]; then
    echo "$root/usr"
    continue
  fi
  update_lists
  packages=("libamdhip64-dev" "libamdhip64-$major")
  wanted=()
  for p in "${packages[@]}"; do
    wanted+=("$p=$(version_of "$p" "$major")")
  done
  log "fetching ${wanted[*]}"
  rm -rf "$root" "$apt_dir/debs/$major"
  mkdir -p "$apt_dir/debs/$major"
  (cd "$apt_dir/debs/$major" && apt-get "${apt_opts[@]}" download "${wanted[@]}")
  mkdir -p "$root"
  for deb in "$apt_dir/debs/$major"/*.deb; do
    dpkg-deb -x "$deb" "$root"
  done
  if [[ ! -f $root/usr/include/hip/hip_version.h ]]; then
    log "the unpacked packages lack usr/include/hip/hip_version.h"
    exit 1
  fi
  # The pinned version first, then what was taken: a later run reuses this
  # prefix only while the pin is unchanged.
  printf '%s %s\n' "${pinned[$major]}" "${wanted[*]}" >"$stamp"
  echo "$root/usr"
done
