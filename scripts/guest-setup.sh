# Sourced (not run) by scripts/domains-capture.sh, scripts/place-capture.sh and
# scripts/its-capture.sh: what booting a Linux guest to read it needs in each — QEMU's NUMA
# options, the busybox initramfs, the init lines that copy the guest's topology
# into the corpus sysfs layout, and reading the base64 streams back off the
# console.

# numa_nodes <nodes> <MiB per node> <CPUs per node>: one RAM backend and one
# -numa node each, node n holding CPUs n*k .. n*k+k-1.
numa_nodes() {
  local a="" n
  for ((n = 0; n < $1; n++)); do
    a="$a -object memory-backend-ram,id=m$n,size=$2M"
    a="$a -numa node,nodeid=$n,memdev=m$n,cpus=$((n * $3))-$((n * $3 + $3 - 1))"
  done
  echo "${a# }"
}

# numa_pair_distances <nodes> <nodes per group> <near> <far>: the SLIT as
# -numa dist options, <near> between nodes of one group, <far> across groups.
numa_pair_distances() {
  local a="" n m d
  for ((n = 0; n < $1; n++)); do
    for ((m = n + 1; m < $1; m++)); do
      if [ $((n / $2)) -eq $((m / $2)) ]; then d=$3; else d=$4; fi
      a="$a -numa dist,src=$n,dst=$m,val=$d"
    done
  done
  echo "${a# }"
}

# initramfs_tree <work> <busybox>: <work>/rd with busybox and the mount points
# the init script uses; the caller writes <work>/rd/init.
initramfs_tree() {
  mkdir -p "$1/rd/bin" "$1/rd/proc" "$1/rd/sys" "$1/rd/tmp"
  cp "$2" "$1/rd/bin/busybox"
}

# pack_initrd <work>: <work>/rd as the gzipped newc cpio <work>/initrd.gz.
pack_initrd() {
  chmod +x "$1/rd/init"
  (cd "$1/rd" && find . | cpio -o -H newc --quiet | gzip -9) > "$1/initrd.gz"
}

# guest_topology_dump <name>: init-script lines that copy the guest's
# /proc/cpuinfo and /sys/devices/system/{cpu,node} topology files into
# /tmp/<name> in the corpus layout (<name>/proc/..., <name>/sys/...), readable
# by `manycore --sysfs`. busybox cp reads to EOF (tar would trust st_size,
# which sysfs gets wrong); one cp per directory keeps the number of forks low,
# which matters with 64 vCPUs under TCG.
guest_topology_dump() {
  echo "o=/tmp/$1"
  cat <<'DUMP'
mkdir -p $o/proc $o/sys/devices/system/cpu $o/sys/devices/system/node
cat /proc/cpuinfo > $o/proc/cpuinfo
cd /sys/devices/system/cpu
cp possible present online kernel_max $o/sys/devices/system/cpu/ 2>/dev/null
[ -f offline ] && cp offline $o/sys/devices/system/cpu/
for d in cpu[0-9]*; do
  mkdir -p $o/sys/devices/system/cpu/$d
  cp -r $d/topology $d/cache $o/sys/devices/system/cpu/$d/ 2>/dev/null
  for f in online physical_id cpu_capacity; do
    [ -f $d/$f ] && cp $d/$f $o/sys/devices/system/cpu/$d/
  done
done
if [ -f /proc/powerpc/lparcfg ]; then
  mkdir -p $o/proc/powerpc && cat /proc/powerpc/lparcfg > $o/proc/powerpc/lparcfg
fi
cd /sys/devices/system/node
cp possible online has_cpu has_memory has_normal_memory $o/sys/devices/system/node/ 2>/dev/null
for d in node[0-9]*; do
  mkdir -p $o/sys/devices/system/node/$d
  cp $d/cpumap $d/cpulist $d/distance $d/meminfo $o/sys/devices/system/node/$d/
done
cd /
DUMP
}

# require_parts <console.log> <machine> <PART>...: fails, showing the
# console's tail, unless the guest finished printing every part.
require_parts() {
  local log="$1" m="$2" part
  shift 2
  for part in "$@"; do
    if ! grep -q "===$part-END===" "$log"; then
      echo "capture $m: no $part output; console tail:" >&2; tail -30 "$log" >&2; return 1
    fi
  done
}

# console_text <console.log> <PART>: the lines between ===PART-BEGIN=== and
# ===PART-END===, carriage returns dropped.
console_text() {
  sed -n "/===$2-BEGIN===/,/===$2-END===/p" "$1" | sed '1d;$d' | tr -d '\r'
}

# console_part <console.log> <PART>: that part's base64 stream, decoded.
console_part() {
  console_text "$1" "$2" | base64 -d
}
