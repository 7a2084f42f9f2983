#!/usr/bin/env bash
# Where does a real Linux put k CPU-bound loops? Boots Debian's Linux 6.12 under
# QEMU (TCG) with a chosen CPU/NUMA topology, as scripts/domains-capture.sh does,
# and from a busybox initramfs:
#   - dumps the guest's topology (the corpus sysfs layout, readable by
#     `manycore --sysfs`) into <out>/<name>-sysfs.tar.gz;
#   - for k = 1 .. CPUs: starts k loops (`while :; do :; done &`) from the init
#     shell, lets them settle SETTLE seconds, then SAMPLES times, PERIOD seconds
#     apart, reads each loop's CPU (/proc/PID/stat field 39); kills them;
#   - writes the samples to <out>/<name>-place.txt, one line per sample:
#       k=<k> sample=<s> shell_cpu=<c> cpus=<cpu of loop 1>,<cpu of loop 2>,...
# The kernel is never installed on the host: scripts/fetch-linux.sh unpacks the .deb.
#
#   scripts/place-capture.sh <name> [out-dir]     # one of the names below
#   scripts/place-capture.sh x86-itmt-probe       # can a QEMU guest have ITMT? (see itmt_probe)
#
# Default out-dir: crates/place/tests/data. Each boot is bounded by a timeout and
# the guest powers itself off.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
name="${1:?usage: place-capture.sh <name> [out-dir]}"
out="$(realpath -m "${2:-$root/crates/place/tests/data}")"
settle="${SETTLE:-3}"
samples="${SAMPLES:-5}"
period="${PERIOD:-1}"
mkdir -p "$out"
# shellcheck source=scripts/guest-setup.sh
. "$root/scripts/guest-setup.sh"

qemu_args() {
  case "$1" in
    x86-2s2c2t-2n)
      # SMT and several packages: 2 sockets x 2 cores x 2 threads, a node per socket.
      echo "-m 512M -smp 8,sockets=2,cores=2,threads=2 $(numa_nodes 2 256 4)" ;;
    x86-4n-slit)
      # Several nodes with a custom SLIT: 4 sockets x 2 cores, a node per
      # socket, distance 15 inside each pair of nodes and 25 across.
      echo "-m 512M -smp 8,sockets=4,cores=2,threads=1 $(numa_nodes 4 128 2) $(numa_pair_distances 4 2 15 25)" ;;
    x86-1s4c2t)
      # SMT in one package and one node: 4 cores x 2 threads.
      echo "-m 512M -smp 8,sockets=1,cores=4,threads=2" ;;
    *) echo "unknown machine '$1' (x86-2s2c2t-2n, x86-4n-slit, x86-1s4c2t)" >&2; return 1 ;;
  esac
}

capture() {
  local m="$1"
  local args; args="$(qemu_args "$m")"
  local ncpu; ncpu="$(echo "$args" | sed -n 's/.*-smp \([0-9]*\).*/\1/p')"
  local vmlinuz; vmlinuz="$("$root/scripts/fetch-linux.sh")"
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  initramfs_tree "$work" /bin/busybox
  cat > "$work/rd/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
$(guest_topology_dump "$m")
echo ===SYSFS-BEGIN===; (cd /tmp && tar czf - $m) | base64; echo ===SYSFS-END===
# field 39 of /proc/PID/stat (the comm field has no spaces here)
cpu_of() { set -- \$(cat /proc/\$1/stat); shift 38; echo \$1; }
echo ===PLACE-BEGIN===
k=1
while [ \$k -le $ncpu ]; do
  pids=""
  i=0
  while [ \$i -lt \$k ]; do
    sh -c 'while :; do :; done' &
    pids="\$pids \$!"
    i=\$((i+1))
  done
  sleep $settle
  s=1
  while [ \$s -le $samples ]; do
    cpus=""
    for p in \$pids; do cpus="\$cpus,\$(cpu_of \$p)"; done
    echo "k=\$k sample=\$s shell_cpu=\$(cpu_of \$\$) cpus=\${cpus#,}"
    sleep $period
    s=\$((s+1))
  done
  kill \$pids
  wait 2>/dev/null
  k=\$((k+1))
done
echo ===PLACE-END===
poweroff -f
INIT
  pack_initrd "$work"
  local cmdline="console=ttyS0 lpj=4000000 no_timer_check rdinit=/init panic=-1 loglevel=4"
  echo "capture $m: qemu-system-x86_64 -nographic -no-reboot -kernel $vmlinuz -initrd <busybox initramfs> -append \"$cmdline\" $args" >&2
  # shellcheck disable=SC2086
  timeout "${TIMEOUT:-1800}" qemu-system-x86_64 -nographic -no-reboot -accel tcg \
    -kernel "$vmlinuz" -initrd "$work/initrd.gz" -append "$cmdline" $args \
    > "$work/console.log" 2>&1 || true
  require_parts "$work/console.log" "$m" SYSFS PLACE
  console_part "$work/console.log" SYSFS > "$out/$m-sysfs.tar.gz"
  {
    echo "# machine: $m"
    echo "# kernel: $(basename "$vmlinuz") (Debian package $(basename "$(dirname "$(dirname "$vmlinuz")")"), unpacked by scripts/fetch-linux.sh)"
    echo "# qemu: $(qemu-system-x86_64 --version | head -1)"
    echo "# command: qemu-system-x86_64 -nographic -no-reboot -accel tcg -kernel vmlinuz -initrd initrd.gz -append \"$cmdline\" $args"
    echo "# loops: sh -c 'while :; do :; done' & (k of them, from the init shell); settle ${settle} s; ${samples} samples ${period} s apart"
    echo "# made by: scripts/place-capture.sh $m"
    console_text "$work/console.log" PLACE
  } > "$out/$m-place.txt"
  echo "capture $m: wrote $out/$m-sysfs.tar.gz $out/$m-place.txt" >&2
}

# itmt_probe: whether a QEMU guest can have x86 ITMT (asym packing by core
# priority) at all. Linux enables it only when a cpufreq driver reports
# different highest performance per core (intel_pstate from HWP's
# MSR_HWP_CAPABILITIES, or ACPI CPPC's _CPC) and calls sched_set_itmt_support(),
# which also creates /proc/sys/kernel/sched_itmt_enabled. Boots a 4-CPU guest on
# QEMU's richest TCG CPU model (-cpu max), 2 cores x 2 threads, and records those facts and CPU 0's
# domain flags (sched_verbose) into <out>/x86-itmt-probe.txt.
itmt_probe() {
  local m=x86-itmt-probe
  local args="-m 512M -smp 4,sockets=1,cores=2,threads=2 -cpu max"
  local vmlinuz; vmlinuz="$("$root/scripts/fetch-linux.sh")"
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  initramfs_tree "$work" /bin/busybox
  cat > "$work/rd/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
echo ===ITMT-BEGIN===
echo "sched_itmt_enabled: $(cat /proc/sys/kernel/sched_itmt_enabled 2>&1)"
echo "cpu0 acpi_cppc: $(ls /sys/devices/system/cpu/cpu0/acpi_cppc 2>&1)"
echo "cpu0 cpufreq driver: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_driver 2>&1)"
echo "cpuinfo hwp flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -c '^hwp')"
for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
  echo "cpu0 $(basename $d) $(cat $d/name): $(cat $d/flags)"
done
echo ===ITMT-END===
poweroff -f
INIT
  pack_initrd "$work"
  local cmdline="console=ttyS0 lpj=4000000 no_timer_check sched_verbose rdinit=/init panic=-1 loglevel=4"
  # shellcheck disable=SC2086
  timeout "${TIMEOUT:-600}" qemu-system-x86_64 -nographic -no-reboot -accel tcg \
    -kernel "$vmlinuz" -initrd "$work/initrd.gz" -append "$cmdline" $args \
    > "$work/console.log" 2>&1 || true
  require_parts "$work/console.log" "$m" ITMT
  {
    echo "# machine: $m"
    echo "# kernel: $(basename "$vmlinuz") (Debian package $(basename "$(dirname "$(dirname "$vmlinuz")")"), unpacked by scripts/fetch-linux.sh)"
    echo "# qemu: $(qemu-system-x86_64 --version | head -1)"
    echo "# command: qemu-system-x86_64 -nographic -no-reboot -accel tcg -kernel vmlinuz -initrd initrd.gz -append \"$cmdline\" $args"
    echo "# made by: scripts/place-capture.sh $m"
    console_text "$work/console.log" ITMT
  } > "$out/$m.txt"
  echo "capture $m: wrote $out/$m.txt" >&2
}

if [ "$name" = x86-itmt-probe ]; then itmt_probe; else capture "$name"; fi
