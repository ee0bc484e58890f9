#!/usr/bin/env bash
# make-base.sh: build the Debian 12 base image the hipr Containerfiles start
# FROM (ARG BASE_IMAGE, default localhost/debian:bookworm), locally, from
# Debian packages alone: no registry is needed.
#
#   deploy/containers/make-base.sh                      debootstrap + podman import
#   deploy/containers/make-base.sh --image NAME         import under another name
#   deploy/containers/make-base.sh --from-tar FILE      start from an existing
#                                                       `debootstrap --variant=minbase
#                                                       bookworm` root packed as a tar
#                                                       (e.g. /var/cache/fresh-machine/
#                                                       bookworm-minbase.tar) instead
#                                                       of running debootstrap
#   deploy/containers/make-base.sh --tar-only FILE      write the finished root as a tar
#                                                       to FILE, import nothing
#                                                       (check-steps.sh uses this)
#   deploy/containers/make-base.sh --suite sid          Debian sid instead (default
#                                                       image localhost/debian:sid), for
#                                                       the ROCm 6.4/7.2 worker images
#                                                       (worker-rocm.Containerfile): apt
#                                                       inside lists sid and experimental
#
# The root is `debootstrap --variant=minbase bookworm` from the Debian
# archive apt uses on this machine (/etc/apt/sources.list.d/debian.sources,
# else /etc/apt/sources.list), then made into a container base:
#   - apt inside uses the same archive (this machine's debian.sources, with
#     bookworm-updates and bookworm-security where it lists them);
#   - apt lists and downloaded .debs removed; no resolv.conf or hostname
#     (the container engine provides them);
#   - /usr/sbin/policy-rc.d refuses to start services during package installs.
# It is imported with `podman import` (or buildah, where podman is missing)
# with PATH, LANG=C.UTF-8 and CMD bash set.
#
# Needs root (debootstrap; podman's storage). About 1.5 minutes on the
# development machine; the image is about 130 MB.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image=localhost/debian:bookworm
from_tar=""
tar_only=""
suite=bookworm

usage() {
  awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "${BASH_SOURCE[0]}" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --image) image=${2:?}; shift 2 ;;
    --from-tar) from_tar=${2:?}; shift 2 ;;
    --tar-only) tar_only=${2:?}; shift 2 ;;
    --suite) suite=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "make-base.sh: unknown argument $1" >&2; usage ;;
  esac
done

log() { printf 'make-base.sh: %s\n' "$*" >&2; }
case $suite in
  bookworm) ;;
  sid) [[ $image == localhost/debian:bookworm ]] && image=localhost/debian:sid ;;
  *) log "--suite: bookworm or sid"; exit 2 ;;
esac
[[ $(id -u) == 0 ]] || { log "needs root (debootstrap, container storage)"; exit 2; }

# The environment every image built FROM this base starts with; check-steps.sh
# reads these two lines (BASE_ENV_*) so that its chroots run with the same.
BASE_ENV_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
BASE_ENV_LANG=C.UTF-8

mirror() {
  local m
  m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/debian.sources | awk 'NR == 1 {print $2}')
  [[ -n $m ]] || m=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  echo "${m:-http://deb.debian.org/debian}"
}

work=$(mktemp -d /var/tmp/hipr-base-XXXXXX)
cleanup() { rm -rf --one-file-system "$work"; }
trap cleanup EXIT
root=$work/root
mkdir -p "$root"

if [[ -n $from_tar ]]; then
  log "unpacking $from_tar"
  tar -C "$root" -xf "$from_tar"
else
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  m=$(mirror)
  log "debootstrap --variant=minbase $suite from $m (log: $work/debootstrap.log)"
  if ! debootstrap --variant=minbase "$suite" "$root" "$m" >"$work/debootstrap.log" 2>&1; then
    tail -20 "$work/debootstrap.log" >&2
    exit 1
  fi
fi
[[ -x $root/usr/bin/apt-get && -f $root/etc/debian_version ]] || { log "no Debian root in $root"; exit 1; }
if [[ $suite == bookworm ]]; then
  grep -q '^12\.' "$root/etc/debian_version" || log "warning: $(cat "$root/etc/debian_version") is not Debian 12"
fi

# The root directory itself: 0755 (a tarball made from a mktemp -d directory,
# such as fresh-machine's, says 0700, and then no user but root can use the
# image).
chmod 0755 "$root"
# apt: this machine's archive and suites.
if [[ $suite == sid ]]; then
  # sid, and experimental for ROCm 7.2 (apt takes nothing from experimental
  # unless asked: -t experimental). sid's Release is re-signed daily, but a
  # snapshot mirror serves it past its week of Valid-Until; the signature is
  # still checked.
  rm -f "$root"/etc/apt/sources.list.d/*
  printf 'Types: deb\nURIs: %s\nSuites: sid experimental\nComponents: main\nSigned-By: %s\n' \
    "$(mirror)" /usr/share/keyrings/debian-archive-keyring.gpg >"$root/etc/apt/sources.list.d/debian.sources"
  : >"$root/etc/apt/sources.list"
  echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/50hipr-valid-until"
elif [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
  rm -f "$root"/etc/apt/sources.list.d/*
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/debian.sources"
  : >"$root/etc/apt/sources.list"
fi
# No service starts inside a build (the convention of Debian's own images).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin
mkdir -p "$root/var/lib/apt/lists/partial"
rm -f "$root/etc/hostname"
: >"$root/etc/resolv.conf"
find "$root/var/log" -type f -exec truncate -s 0 {} +

tarball=$work/rootfs.tar
tar --numeric-owner --xattrs -C "$root" -cf "$tarball" .
log "root packed: $(du -h "$tarball" | cut -f1)"

if [[ -n $tar_only ]]; then
  mv "$tarball" "$tar_only.part" && mv "$tar_only.part" "$tar_only"
  log "wrote $tar_only"
  exit 0
fi

changes=(--change "ENV PATH=$BASE_ENV_PATH" --change "ENV LANG=$BASE_ENV_LANG" --change 'CMD ["/bin/bash"]')
if command -v podman >/dev/null; then
  log "podman import -> $image"
  podman import --quiet "${changes[@]}" "$tarball" "$image" >/dev/null
  podman image inspect --format '{{.Id}} {{.Size}} bytes' "$image" >&2
elif command -v buildah >/dev/null; then
  log "buildah from scratch -> $image"
  c=$(buildah from scratch)
  buildah add "$c" "$tarball" / >/dev/null
  buildah config --env "PATH=$BASE_ENV_PATH" --env "LANG=$BASE_ENV_LANG" --cmd /bin/bash "$c"
  buildah commit --rm "$c" "$image" >/dev/null
else
  log "neither podman nor buildah is installed (apt-get install podman); the root is not imported"
  exit 1
fi
log "done: $image (build the images: see $here/README.md)"
