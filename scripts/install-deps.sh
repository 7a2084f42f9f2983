#!/usr/bin/env bash
# Installs what manycore's tests and benchmarks need on a fresh Debian bookworm
# machine: QEMU 10 (from bookworm-backports: bookworm's own 7.2 lacks what we use),
# hwloc (lstopo, for XML round-trip tests and the benchmark baseline), busybox-static
# (initramfs for booting Debian's Linux kernel under QEMU), cpio, the DejaVu
# fonts the pictures are rendered with, and liblzma's static archive (for the
# static link of manycore).
# Idempotent: does nothing when everything is already there.
set -euo pipefail

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v lstopo-no-graphics >/dev/null || need+=(hwloc-nox)
[ -x /bin/busybox ] || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
# The pictures' text is rendered with DejaVu Sans (tests check that text renders).
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
# cli/build.rs links manycore statically when the C compiler finds every
# static archive it needs; liblzma's is the one a plain Debian lacks.
case "$(cc -print-file-name=liblzma.a 2>/dev/null)" in /*) ;; *) need+=(liblzma-dev) ;; esac
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # Same archive and keyring as the machine's own debian.sources.
  $SUDO tee /etc/apt/sources.list.d/backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
$SUDO apt-get update -qq
export DEBIAN_FRONTEND=noninteractive
for pkg in "${need[@]}"; do
  if [ "$pkg" = qemu-system-x86 ]; then
    $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports qemu-system-x86 >/dev/null
  else
    $SUDO apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
  fi
done
qemu-system-x86_64 --version | head -1
