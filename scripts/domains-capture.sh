#!/usr/bin/env bash
# Boots Debian's Linux 6.12 under QEMU (TCG) with a chosen CPU/NUMA topology and
# captures, from a busybox initramfs:
#   <out>/<name>-sysfs.tar.gz    the guest's /proc/cpuinfo and /sys/devices/system/{cpu,node}
#                                topology files, in the corpus layout (<name>/proc/...,
#                                <name>/sys/...), readable by `manycore --sysfs`;
#   <out>/<name>-domains.tar.gz  /sys/kernel/debug/sched/domains (cpuN/domainM/*) plus
#                                the kernel log (dmesg, with sched_verbose's domain tree);
#   <out>/<name>-acpi.tar.gz     ACPI boots only: the APIC, PPTT, SRAT and SLIT Linux used
#                                (/sys/firmware/acpi/tables).
# The kernel is never installed on the host: scripts/fetch-linux.sh unpacks the .deb.
#
#   scripts/domains-capture.sh <name> [out-dir]     # one of the names below
#   scripts/domains-capture.sh all [out-dir]
#
# The x86-intel-*, x86-2n-pxm-reversed and boot-* captures live in crates/qemu-runner/tests/data
# (pass that as out-dir); `all` makes the five x86 ones in crates/domains/tests/data,
# `all-arm64` and `all-ppc64` the arm64 and powerpc ones.
#
# arm64 and ppc64 machines boot Debian's arm64 / ppc64el kernel and busybox
# (LINUX_ARCH=... scripts/fetch-linux.sh; `dpkg --add-architecture arm64 ppc64el`
# and `apt-get update` once) under qemu-system-aarch64 / qemu-system-ppc64 (Debian
# packages qemu-system-arm / qemu-system-ppc from bookworm-backports, the same
# QEMU 10 as x86). arm64-acpi-* boot through UEFI (qemu-efi-aarch64's QEMU_EFI.fd)
# so that Linux reads ACPI (MADT, PPTT, SRAT, SLIT); arm64-dt-* boot the kernel
# directly with QEMU's device tree. Set LINUX_CACHE to share the unpacked
# packages between worktrees.
#
# Default out-dir: crates/domains/tests/data. No KVM needed (TCG); 64 vCPUs take a few
# minutes on 2 host cores.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
name="${1:?usage: domains-capture.sh <name>|all [out-dir]}"
out="$(realpath -m "${2:-$root/crates/domains/tests/data}")"
mkdir -p "$out"
# shellcheck source=scripts/guest-setup.sh
. "$root/scripts/guest-setup.sh"

# Each machine: QEMU options after the common ones.
qemu_args() {
  case "$1" in
    x86-2s4c2t)
      # 2 sockets x 4 cores x 2 threads, one NUMA node (no -numa at all).
      echo "-m 512M -smp 16,sockets=2,cores=4,threads=2" ;;
    x86-2s4c2t-smtoff)
      # As x86-2s4c2t, then the guest takes every second SMT thread offline
      # (like ppc64_cpu --smt=1) before the dump: domains rebuilt on 8 CPUs.
      echo "-m 512M -smp 16,sockets=2,cores=4,threads=2" ;;
    x86-max-modules)
      # One socket of 2 modules x 4 cores x 2 threads, -cpu max (AuthenticAMD
      # under TCG), L2 asked per module. The guest's sysfs shows a per-thread L2
      # and a socket-wide L3; Linux's L2 mask falls back to the SMT siblings, so
      # CLS and PKG fold away and MC spans the socket. (An Intel model would
      # show a per-module L2, but QEMU 10.0 asserts in CPUID 0x1F with modules.)
      echo "-m 512M -cpu max -smp 16,sockets=1,modules=2,cores=4,threads=2 -machine pc,smp-cache.0.cache=l2,smp-cache.0.topology=module" ;;
    x86-4n-dist)
      # Same CPUs, 4 nodes (2 per socket: NUMA inside the package) and a custom
      # asymmetric-looking distance matrix with three remote distances.
      local a="-m 512M -smp 16,sockets=2,cores=4,threads=2 $(numa_nodes 4 128 4)"
      a="$a -numa dist,src=0,dst=1,val=15 -numa dist,src=0,dst=2,val=25 -numa dist,src=0,dst=3,val=30"
      a="$a -numa dist,src=1,dst=2,val=30 -numa dist,src=1,dst=3,val=25 -numa dist,src=2,dst=3,val=15"
      echo "$a" ;;
    x86-64c-8n)
      # 64 CPUs, 8 sockets of 8 cores, one node per socket; two remote distance
      # levels: 16 inside each group of four nodes, 32 across (32 > x86's
      # RECLAIM_DISTANCE of 30, so that NUMA level loses EXEC/FORK/WAKE_AFFINE).
      echo "-m 1024M -smp 64,sockets=8,cores=8,threads=1 $(numa_nodes 8 128 8) $(numa_pair_distances 8 4 16 32)" ;;
    x86-intel-2s4c2t)
      # QEMU's legacy Intel cache model (leaf 4): L1 and L2 per core, L3 per
      # socket. Kept in crates/qemu-runner/tests/data (the kernel's leaf-4 test).
      echo "-m 512M -cpu qemu64,vendor=GenuineIntel -smp 16,sockets=2,cores=4,threads=2" ;;
    x86-intel-l2socket)
      # The L2 asked per socket: leaf 4 says 8 threads share it, so Linux's CLS
      # (cpu_l2c_shared_mask) spans the socket and MC folds into it. (QEMU 10.0
      # aborts in CPUID 0x1F for an Intel vendor with dies or modules.)
      echo "-m 512M -cpu qemu64,vendor=GenuineIntel -smp 16,sockets=2,cores=4,threads=2 -machine pc,smp-cache.0.cache=l2,smp-cache.0.topology=socket,smp-cache.1.cache=l3,smp-cache.1.topology=socket" ;;
    x86-2n-pxm-reversed)
      # Two nodes whose proximity domains run against the CPUs: PXM 1 holds
      # CPUs 0-3 (the boot CPU), PXM 0 CPUs 4-7 and the low memory. QEMU's
      # SRAT lists the CPUs first, in CPU order, so Linux numbers PXM 1 as
      # node 0 (first appearance, acpi_map_pxm_to_node) and PXM 0 as node 1.
      # Kept in crates/qemu-runner/tests/data (the kernel's node numbering).
      local a="-m 512M -cpu qemu64 -smp 8,sockets=2,cores=4,threads=1"
      a="$a -object memory-backend-ram,id=m0,size=256M -numa node,nodeid=0,cpus=4-7,memdev=m0"
      a="$a -object memory-backend-ram,id=m1,size=256M -numa node,nodeid=1,cpus=0-3,memdev=m1"
      echo "$a -numa dist,src=0,dst=1,val=21" ;;
    boot-16c-smt|boot-16c-smt-4n|boot-64c-4n)
      # The machines of crates/qemu-runner/tests/boot.rs, with exactly the
      # arguments `Machine::qemu_args` gives them (the test checks this
      # README's command line against it). Kept in crates/qemu-runner/tests/data.
      local a="-machine q35 -cpu qemu64"
      local cpus per nodes
      case "$1" in
        boot-16c-smt) a="$a -smp 16,sockets=2,cores=4,threads=2 -m 516M"; nodes=1 ;;
        boot-16c-smt-4n) a="$a -smp 16,sockets=2,cores=4,threads=2 -m 1028M"; cpus=16; per=257; nodes=4 ;;
        boot-64c-4n) a="$a -smp 64,sockets=1,cores=64,threads=1 -m 1040M"; cpus=64; per=260; nodes=4 ;;
      esac
      local n
      if [ "$nodes" -gt 1 ]; then
        # (cpus= before memdev=, as Machine::qemu_args writes them.)
        for n in 0 1 2 3; do
          a="$a -object memory-backend-ram,id=m$n,size=${per}M"
          a="$a -numa node,nodeid=$n,cpus=$((n*cpus/4))-$(((n+1)*cpus/4-1)),memdev=m$n"
        done
        # Distance 15 within a pair of nodes, 25 across (Machine::distance).
        a="$a $(numa_pair_distances 4 2 15 25)"
      fi
      echo "$a" ;;
    arm64-*-2s2cl2c2t-2n)
      # 2 sockets x 2 clusters x 2 cores x 2 threads, one node per socket, SLIT 25.
      echo "-m 1G -smp 16,sockets=2,clusters=2,cores=2,threads=2 $(numa_args "$1" '0:1:25')" ;;
    arm64-*-1s4cl4c-2n)
      # 1 socket of 4 clusters x 4 cores, two nodes inside the package (two
      # clusters each), SLIT 16: NUMA narrower than the package.
      echo "-m 1G -smp 16,sockets=1,clusters=4,cores=4,threads=1 $(numa_args "$1" '0:1:16')" ;;
    arm64-*-4s2cl2c-4n)
      # 4 sockets x 2 clusters x 2 cores, one node per socket, three remote
      # distances (15/25/30, as x86-4n-dist).
      echo "-m 2G -smp 16,sockets=4,clusters=2,cores=2,threads=1 $(numa_args "$1" '0:1:15 0:2:25 0:3:30 1:2:30 1:3:25 2:3:15')" ;;
    ppc64-1s2c8t-2n)
      # One socket of 2 SMT8 cores, one core per node, distance 40.
      echo "-m 1G -smp 16,sockets=1,cores=2,threads=8 $(numa_args "$1" '0:1:40')" ;;
    ppc64-2s2c4t-2n|ppc64-2s2c4t-2n-smt1)
      # 2 sockets x 2 cores x SMT4, one node per socket, a custom distance (FORM2).
      # -smt1: then threads 1-3 of every core go offline (as ppc64_cpu --smt=1).
      echo "-m 1G -smp 16,sockets=2,cores=2,threads=4 $(numa_args "$1" '0:1:25')" ;;
    ppc64-4s1c4t-4n)
      # 4 sockets of 1 SMT4 core, one node each, three remote distances.
      echo "-m 2G -smp 16,sockets=4,cores=1,threads=4 $(numa_args "$1" '0:1:15 0:2:25 0:3:30 1:2:30 1:3:25 2:3:15')" ;;
    *) echo "unknown machine '$1' (x86-2s4c2t, x86-2s4c2t-smtoff, x86-max-modules, x86-4n-dist, x86-64c-8n, x86-intel-2s4c2t, x86-intel-l2socket, x86-2n-pxm-reversed, boot-16c-smt, boot-16c-smt-4n, boot-64c-4n, $arm64_machines $ppc64_machines)" >&2; return 1 ;;
  esac
}

arm64_machines="arm64-dt-2s2cl2c2t-2n arm64-acpi-2s2cl2c2t-2n arm64-dt-1s4cl4c-2n arm64-acpi-1s4cl4c-2n arm64-dt-4s2cl2c-4n arm64-acpi-4s2cl2c-4n"
ppc64_machines="ppc64-1s2c8t-2n ppc64-2s2c4t-2n ppc64-4s1c4t-4n ppc64-2s2c4t-2n-smt1"

# The nodes of an arm64 or ppc64 machine: '<memory>:<cpus> ...', node 0 first
# (the format scripts/acpi-srat.py --qemu-virt takes, so the upgraded SRAT and
# the -numa options come from one definition).
numa_layout() {
  case "$1" in
    *-2s2cl2c2t-2n|*-1s4cl4c-2n|ppc64-1s2c8t-2n|ppc64-2s2c4t-2n*) echo "512M:0-7 512M:8-15" ;;
    *-4s2cl2c-4n|ppc64-4s1c4t-4n) echo "512M:0-3 512M:4-7 512M:8-11 512M:12-15" ;;
    *) echo "numa_layout: no layout for '$1'" >&2; return 1 ;;
  esac
}

# numa_args <machine> '<a>:<b>:<distance> ...'
numa_args() {
  local a="" n=0 node d
  for node in $(numa_layout "$1"); do
    a="$a -object memory-backend-ram,id=m$n,size=${node%%:*} -numa node,nodeid=$n,memdev=m$n,cpus=${node#*:}"
    n=$((n + 1))
  done
  for d in $2; do
    IFS=: read -r src dst val <<< "$d"
    a="$a -numa dist,src=$src,dst=$dst,val=$val"
  done
  echo "$a"
}

# The Debian architecture of a machine name.
arch_of() {
  case "$1" in
    arm64-*) echo arm64 ;;
    ppc64-*) echo ppc64el ;;
    *) echo amd64 ;;
  esac
}

# QEMU binary and the options every machine of an architecture shares.
qemu_base() {
  case "$1" in
    arm64-acpi-*)
      # UEFI firmware: Linux then reads ACPI (MADT, PPTT, SRAT, SLIT, IORT);
      # acpi=force makes sure it does not fall back to a device tree. The
      # firmware reports the second flash bank (64 MiB at 0x4000000, its
      # variable store) as runtime MMIO with the WC attribute, which Linux's
      # EFI memory map reader adds to memblock; no SRAT range of QEMU's covers
      # it, and Linux 6.12 would refuse the SRAT ("NUMA: no nodes coverage for
      # 64MB") and fake one node. So capture() hands Linux an upgraded SRAT
      # (srat_upgrade below) that also covers the flash.
      echo "qemu-system-aarch64 -machine virt,gic-version=3,its=on -cpu neoverse-n1 -bios /usr/share/qemu-efi-aarch64/QEMU_EFI.fd" ;;
    arm64-*)
      echo "qemu-system-aarch64 -machine virt,gic-version=3,its=on -cpu neoverse-n1" ;;
    ppc64-*)
      echo "qemu-system-ppc64 -machine pseries -vga none" ;;
    *)
      echo "qemu-system-x86_64" ;;
  esac
}

# Writes $2, the uncompressed cpio that upgrades QEMU's SRAT for machine $1
# (Linux's CONFIG_ACPI_TABLE_UPGRADE, on in Debian's arm64 kernel): the SRAT
# QEMU writes for the machine's -numa layout plus a Memory Affinity putting the
# firmware's flash (0x04000000, 64 MiB) on node 0, so Linux keeps the SRAT and
# its nodes. scripts/its-capture.sh builds its SRATs with the same script.
srat_upgrade() {
  python3 "$root/scripts/acpi-srat.py" "$2" --cpio --qemu-virt "$(numa_layout "$1")" \
    --mem 0:0x04000000:0x04000000
}

kernel_cmdline() {
  case "$1" in
    arm64-acpi-*) echo "console=ttyAMA0 acpi=force sched_verbose rdinit=/init panic=-1 loglevel=7 log_buf_len=4M" ;;
    arm64-*) echo "console=ttyAMA0 acpi=off sched_verbose rdinit=/init panic=-1 loglevel=7 log_buf_len=4M" ;;
    ppc64-*) echo "console=hvc0 sched_verbose rdinit=/init panic=-1 loglevel=7 log_buf_len=4M" ;;
    *) echo "console=ttyS0 lpj=4000000 no_timer_check sched_verbose rdinit=/init panic=-1 loglevel=7 log_buf_len=4M" ;;
  esac
}

capture() {
  local m="$1"
  local args; args="$(qemu_args "$m")"
  # Many mostly idle vCPUs on a small host: one TCG thread wastes less time than
  # 64 threads fighting for 2 cores (multi-threaded TCG hit RCU stalls there).
  # CPUs the guest takes offline before dumping.
  local offline=""
  [ "$m" = x86-2s4c2t-smtoff ] && offline="1 3 5 7 9 11 13 15"
  [ "$m" = ppc64-2s2c4t-2n-smt1 ] && offline="1 2 3 5 6 7 9 10 11 13 14 15"
  local accel=tcg
  case "$m" in x86-64c-8n|boot-64c-4n) accel=tcg,thread=single ;; esac
  local arch; arch="$(arch_of "$m")"
  local vmlinuz; vmlinuz="$(LINUX_ARCH=$arch "$root/scripts/fetch-linux.sh")"
  local busybox; busybox="$(LINUX_ARCH=$arch "$root/scripts/fetch-linux.sh" busybox)"
  local base; base="$(qemu_base "$m")"
  local qemu="${base%% *}"
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN

  # The initramfs: busybox and an init that copies what we want into tmpfs
  # (debugfs and sysfs report sizes that tar cannot trust, so `cat` every file),
  # then prints one base64 tarball between markers and powers off.
  initramfs_tree "$work" "$busybox"
  cat > "$work/rd/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmp /tmp
for c in $offline; do echo 0 > /sys/devices/system/cpu/cpu\$c/online; done
$(guest_topology_dump "$m")
mkdir -p /tmp/dom
cp -r /sys/kernel/debug/sched/domains /tmp/dom/domains
# The ACPI tables Linux used (binary, so in their own tarball).
if [ -d /sys/firmware/acpi/tables ]; then
  mkdir -p /tmp/acpi/acpi
  for t in APIC PPTT SRAT SLIT; do
    [ -f /sys/firmware/acpi/tables/\$t ] && cat /sys/firmware/acpi/tables/\$t > /tmp/acpi/acpi/\$t
  done
fi
dmesg > /tmp/dom/dmesg.txt
uname -a > /tmp/dom/uname.txt
cat /proc/cmdline > /tmp/dom/cmdline.txt
# Keep kernel messages (CPU offline notices, late drivers) off the console
# while the base64 streams go out.
dmesg -n 1
echo ===SYSFS-BEGIN===; (cd /tmp && tar czf - $m) | base64; echo ===SYSFS-END===
echo ===DOMAINS-BEGIN===; (cd /tmp/dom && tar czf - .) | base64; echo ===DOMAINS-END===
if [ -d /tmp/acpi ]; then
  echo ===ACPI-BEGIN===; (cd /tmp/acpi && tar czf - .) | base64; echo ===ACPI-END===
fi
poweroff -f
INIT
  pack_initrd "$work"
  local upgrade=""
  case "$m" in
    arm64-acpi-*)
      srat_upgrade "$m" "$work/srat.cpio"
      cat "$work/srat.cpio" "$work/initrd.gz" > "$work/initrd-up"
      mv "$work/initrd-up" "$work/initrd.gz"
      upgrade="python3 scripts/acpi-srat.py srat.cpio --cpio --qemu-virt '$(numa_layout "$m")' --mem 0:0x04000000:0x04000000; cat srat.cpio busybox-initrd.gz > initrd.gz" ;;
  esac

  local cmdline; cmdline="$(kernel_cmdline "$m")"
  echo "capture $m: $base -nographic -no-reboot -kernel $vmlinuz -initrd <busybox initramfs> -append \"$cmdline\" $args" >&2
  # shellcheck disable=SC2086
  timeout 3600 $base -nographic -no-reboot -accel "$accel" \
    -kernel "$vmlinuz" -initrd "$work/initrd.gz" -append "$cmdline" $args \
    > "$work/console.log" 2>&1 || true
  require_parts "$work/console.log" "$m" SYSFS DOMAINS
  console_part "$work/console.log" SYSFS > "$out/$m-sysfs.tar.gz"
  console_part "$work/console.log" DOMAINS > "$out/$m-domains.tar.gz"
  if grep -q "===ACPI-END===" "$work/console.log"; then
    console_part "$work/console.log" ACPI > "$out/$m-acpi.tar.gz"
  fi
  {
    echo "machine: $m"
    echo "kernel: $(basename "$vmlinuz") (Debian package $(basename "$(dirname "$(dirname "$vmlinuz")")"), unpacked by scripts/fetch-linux.sh)"
    echo "qemu: $($qemu --version | head -1)"
    local kimg=vmlinuz
    [ "$arch" = amd64 ] || kimg="$(basename "$vmlinuz")"
    if [ "$arch" = amd64 ]; then echo "busybox: the host's /bin/busybox (busybox-static)"
    else echo "busybox: $(basename "$(dirname "$(dirname "$busybox")")") (Debian busybox-static:$arch, unpacked by scripts/fetch-linux.sh)"; fi
    case "$base" in
      *QEMU_EFI.fd*) echo "firmware: Debian qemu-efi-aarch64 $(dpkg-query -W -f '${Version}' qemu-efi-aarch64)" ;;
    esac
    [ -n "$upgrade" ] && echo "initrd: $upgrade (QEMU's SRAT for this -numa layout plus a Memory Affinity {PXM 0, 0x04000000 + 64 MiB} for the firmware's flash, OEM revision + 1, upgraded by Linux from the initrd)"
    echo "command: $base -nographic -no-reboot -accel $accel -kernel $kimg -initrd initrd.gz -append \"$cmdline\" $args"
    [ -n "$offline" ] && echo "then, in the guest: echo 0 > /sys/devices/system/cpu/cpuN/online for N in $offline"
    echo "made by: scripts/domains-capture.sh $m"
  } > "$out/$m.README"
  echo "capture $m: wrote $out/$m-sysfs.tar.gz $out/$m-domains.tar.gz" >&2
}

if [ "$name" = all ]; then
  for m in x86-2s4c2t x86-2s4c2t-smtoff x86-max-modules x86-4n-dist x86-64c-8n; do capture "$m"; done
elif [ "$name" = all-arm64 ]; then
  for m in $arm64_machines; do capture "$m"; done
elif [ "$name" = all-ppc64 ]; then
  for m in $ppc64_machines; do capture "$m"; done
else
  capture "$name"
fi
