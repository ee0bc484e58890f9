#!/bin/sh
# make_v6_objects.sh [OUT_DIR]: the code objects v6 of kernels_v5.cpp that
# inspect_agreement checks against llvm-readelf-15 (kernels_v6_*.co beside
# this script), for two generic processors and two of their members.
#
# Debian 12's clang-15 cannot make v6 or generic targets (LLVM 19 and later
# can), so they were made once in a Debian sid root (debootstrap
# --variant=minbase sid; apt-get install clang-21 lld-21) with Debian's
# clang 21.1.8-14 and lld 21.1.8-14, and are kept here; compilation is
# deterministic, so running this again there gives the same bytes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
clang=${CLANGXX:-clang++-21}
lld=${LLD:-ld.lld-21}
for cpu in gfx9-4-generic:sramecc+:xnack- gfx11-generic gfx942 gfx950; do
  name=${cpu%%:*}
  "$clang" --target=amdgcn-amd-amdhsa -mcpu="$cpu" -mcode-object-version=6 -nogpulib -O2 \
    -c "$here/kernels_v5.cpp" -o "$out/kernels_v6_$name.o"
  "$lld" -shared "$out/kernels_v6_$name.o" -o "$out/kernels_v6_$name.co"
  rm -f "$out/kernels_v6_$name.o"
done
