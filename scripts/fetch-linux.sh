#!/usr/bin/env bash
# Fetches Debian's Linux 6.12 kernel image (bookworm-backports) and unpacks it with
# `dpkg -x` into a cache directory -- never installs it on the host. Idempotent.
# Prints the path of the kernel image on stdout.
#
#   scripts/fetch-linux.sh            # newest linux-image-6.12.*+deb12-amd64
#   LINUX_PKG=linux-image-6.12.57+deb12-amd64 scripts/fetch-linux.sh
#   LINUX_CACHE=/some/dir scripts/fetch-linux.sh
#
# Other architectures (Debian's foreign packages; needs
# `dpkg --add-architecture arm64|ppc64el` and `apt-get update` once):
#
#   LINUX_ARCH=arm64 scripts/fetch-linux.sh            # ...-arm64-unsigned:arm64 vmlinuz
#   LINUX_ARCH=ppc64el scripts/fetch-linux.sh          # ...-powerpc64le:ppc64el vmlinux
#   LINUX_ARCH=arm64 scripts/fetch-linux.sh busybox    # busybox-static:arm64's binary
#   LINUX_ARCH=arm64 scripts/fetch-linux.sh config     # the kernel's config file
#
# For amd64, `busybox` prints the host's /bin/busybox (busybox-static, installed).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${LINUX_CACHE:-$root/target/linux}"
mkdir -p "$cache"
arch="${LINUX_ARCH:-amd64}"
what="${1:-kernel}"

# Downloads one package (`name:arch`) and unpacks it into $cache/<dir>.
unpack() {
  local spec="$1" dest="$cache/$2"
  if [ ! -e "$dest/.unpacked" ]; then
    local tmp; tmp="$(mktemp -d "$cache/.dl.XXXXXX")"
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
    (cd "$tmp" && apt-get download -qq "$spec" >&2)
    mkdir -p "$tmp/x"
    dpkg -x "$tmp"/*.deb "$tmp/x"
    touch "$tmp/x/.unpacked"
    rm -rf "$dest"
    mv "$tmp/x" "$dest"
  fi
}

case "$arch" in
  amd64) flavour=amd64; suffix="" ;;
  # Debian's arm64 image is signed for Secure Boot; the -unsigned package holds
  # the same kernel without the signature.
  arm64) flavour=arm64; suffix="-unsigned" ;;
  ppc64el) flavour=powerpc64le; suffix="" ;;
  *) echo "fetch-linux: LINUX_ARCH must be amd64, arm64 or ppc64el, not '$arch'" >&2; exit 1 ;;
esac

if [ "$what" = busybox ]; then
  if [ "$arch" = amd64 ]; then echo /bin/busybox; exit 0; fi
  unpack "busybox-static:$arch" "busybox-static-$arch"
  echo "$cache/busybox-static-$arch/bin/busybox"
  exit 0
fi

pkg="${LINUX_PKG:-}"
if [ -z "$pkg" ]; then
  # Newest plain flavour (not -cloud, -rt, -16k, -64k, -dbg).
  pkg="$(apt-cache search --names-only "^linux-image-6\\.12\\.[0-9]+\\+deb12-$flavour$suffix\$" \
         | awk '{print $1}' | sort -V | tail -1)"
fi
if [ -z "$pkg" ]; then
  echo "fetch-linux: no linux-image-6.12.*+deb12-$flavour$suffix in apt's lists;" \
       "run scripts/install-deps.sh (adds bookworm-backports), dpkg --add-architecture $arch" \
       "if not amd64, and apt-get update" >&2
  exit 1
fi
if [ "$arch" != amd64 ]; then
  unpack "$pkg:$arch" "$pkg"
  if [ "$what" = config ]; then
    ls "$cache/$pkg"/boot/config-* | head -1
  else
    ls "$cache/$pkg"/boot/vmlinu[xz]-* | head -1
  fi
  exit 0
fi

dest="$cache/$pkg"
if ! ls "$dest"/boot/vmlinuz-* >/dev/null 2>&1; then
  tmp="$(mktemp -d "$cache/.dl.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download -qq "$pkg" >&2)
  mkdir -p "$tmp/x"
  dpkg -x "$tmp"/*.deb "$tmp/x"
  rm -rf "$dest"
  mv "$tmp/x" "$dest"
fi
if [ "$what" = config ]; then
  ls "$dest"/boot/config-* | head -1
else
  ls "$dest"/boot/vmlinuz-* | head -1
fi
