#!/usr/bin/env bash
# Fetches Debian's Linux 6.12 kernel image (bookworm-backports) and unpacks it with
# `dpkg -x` into a cache directory -- never installs it on the host. Idempotent.
# Prints the path of the vmlinuz on stdout.
#
#   scripts/fetch-linux.sh            # newest linux-image-6.12.*+deb12-amd64
#   LINUX_PKG=linux-image-6.12.57+deb12-amd64 scripts/fetch-linux.sh
#   LINUX_CACHE=/some/dir scripts/fetch-linux.sh
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${LINUX_CACHE:-$root/target/linux}"
mkdir -p "$cache"

pkg="${LINUX_PKG:-}"
if [ -z "$pkg" ]; then
  # Newest plain amd64 flavour (not -cloud, not -rt, not -dbg/-unsigned).
  pkg="$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' \
         | awk '{print $1}' | sort -V | tail -1)"
fi
if [ -z "$pkg" ]; then
  echo "fetch-linux: no linux-image-6.12.*+deb12-amd64 in apt's lists;" \
       "run scripts/install-deps.sh (adds bookworm-backports) and apt-get update" >&2
  exit 1
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
ls "$dest"/boot/vmlinuz-* | head -1
