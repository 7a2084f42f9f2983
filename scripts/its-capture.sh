#!/usr/bin/env bash
# Boots Debian's arm64 Linux 6.12 under QEMU's virt machine (TCG, GICv3 with an
# ITS, two NUMA nodes) and captures where Linux put the ITS's tables:
#   <out>/arm64-its-<variant>.tar.gz   the firmware Linux saw (/sys/firmware/fdt, or
#                                      /sys/firmware/acpi/tables/{APIC,SRAT,SLIT}),
#                                      dmesg, node meminfo/distance, /proc/iomem, and
#                                      the ITS's GITS_CBASER/GITS_BASERn registers
#                                      read with devmem;
#   <out>/arm64-its-<variant>.README   the exact commands.
# Variants:
#   dt-qemu    the device tree exactly as QEMU writes it (no numa-node-id on the ITS);
#   dt-node1   QEMU's device tree, dumped with -machine dumpdtb, numa-node-id = <1>
#              added to the ITS node with dtc, booted back with -dtb;
#   dt-node0   the same with numa-node-id = <0>;
#   dt-node2   three nodes, node 2 with CPUs but no memory, the ITS on node 2
#              (Linux's distance-ordered fallback: node 2 -> 1 at 15, -> 0 at 30);
#   acpi-qemu  UEFI (qemu-efi-aarch64's AAVMF) and ACPI: the tables as QEMU writes
#              them. QEMU's SRAT has no GIC ITS Affinity, and Linux turns NUMA off
#              here: AAVMF describes the variable-store flash at 0x04000000 as
#              cacheable memory, which no SRAT range covers;
#   acpi-its1  the same, with QEMU's SRAT upgraded through the initrd (Linux's
#              CONFIG_ACPI_TABLE_UPGRADE: kernel/firmware/acpi/srat.aml in an
#              uncompressed cpio before the initramfs): QEMU's entries plus a
#              Memory Affinity for that flash on PXM 0 and a GIC ITS Affinity
#              putting ITS 0 on PXM 1 (QEMU cannot write either; arm has no -acpitable);
#   acpi-its0  the same with the ITS on PXM 0;
#   itt-qemu, itt-node1, itt-node2
#              dt-qemu, dt-node1, dt-node2 plus two PCIe root ports and a
#              virtio-serial device (each an ITS device with its own ITT); the
#              host reads the ITS's device table out of guest memory through
#              QEMU's monitor (monitor.txt): each device's ITT address.
# The kernel and busybox are Debian's arm64 packages, unpacked with dpkg -x, never
# installed. Guests: 1 GiB, 4 vCPUs (6 for dt-node2), 10 minutes at most each.
# Needs (not for the tests, which read the committed captures): qemu-system-arm
# from bookworm-backports, qemu-efi-aarch64, device-tree-compiler, cpio, python3,
# and `dpkg --add-architecture arm64; apt-get update` for the downloads.
#
#   scripts/its-capture.sh <variant>|all [out-dir]     # default out-dir crates/irq/tests/data
#   LINUX_CACHE=/some/dir scripts/its-capture.sh all   # where the unpacked packages live
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
name="${1:?usage: its-capture.sh dt-qemu|dt-node1|dt-node0|dt-node2|acpi-qemu|acpi-its1|acpi-its0|itt-qemu|itt-node1|itt-node2|all [out-dir]}"
out="$(realpath -m "${2:-$root/crates/irq/tests/data}")"
cache="${LINUX_CACHE:-$root/target/linux}"
mkdir -p "$out" "$cache"
# shellcheck source=scripts/guest-setup.sh
. "$root/scripts/guest-setup.sh"

# Unpacks an arm64 Debian package into $cache/<pkg>-arm64 (idempotent) and prints
# that directory. Needs `dpkg --add-architecture arm64` and bookworm-backports.
unpack_arm64() {
  local pkg="$1" dest="$cache/$1-arm64"
  # Another script may have unpacked it under the bare package name.
  [ -d "$dest" ] || [ ! -d "$cache/$pkg" ] || dest="$cache/$pkg"
  if [ ! -d "$dest" ]; then
    local tmp; tmp="$(mktemp -d "$cache/.dl.XXXXXX")"
    (cd "$tmp" && apt-get download -qq "$pkg:arm64" >&2)
    mkdir -p "$tmp/x"
    dpkg -x "$tmp"/*.deb "$tmp/x"
    mv "$tmp/x" "$dest"
    rm -rf "$tmp"
  fi
  echo "$dest"
}

kernel_image() {
  local pkg="${LINUX_PKG:-}"
  if [ -z "$pkg" ]; then
    pkg="$(cd "$cache" && ls -d linux-image-6.12.*+deb12-arm64-unsigned* 2>/dev/null \
           | sed 's/-unsigned.*$/-unsigned/' | sort -V | tail -1)"
  fi
  if [ -z "$pkg" ]; then
    pkg="$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-arm64-unsigned$' \
           | awk '{print $1}' | sort -V | tail -1)"
  fi
  [ -n "$pkg" ] || { echo "its-capture: no linux-image-6.12.*+deb12-arm64-unsigned (dpkg --add-architecture arm64; apt-get update)" >&2; exit 1; }
  ls "$(unpack_arm64 "$pkg")"/boot/vmlinuz-* | head -1
}

# QEMU options shared by every variant: 2 sockets x 2 cores, node 0 = socket 0.
machine_args() {
  local pci=""
  case "$1" in
    itt-*)
      # Two PCIe root ports (MSI-X, bound by the built-in pcieport driver) and a
      # virtio-serial device behind the first (virtio_console is built in):
      # each gets an ITS device, so Linux allocates its ITT. (Slot 1 holds
      # QEMU's default NIC, whose driver is a module: no MSI there.)
      pci=" -device pcie-root-port,id=rp1,chassis=1,addr=3 -device pcie-root-port,id=rp2,chassis=2,addr=4"
      pci="$pci -device virtio-serial-pci,bus=rp1"
      set -- "dt-${1#itt-}" ;;
  esac
  echo "$(machine_args_of "$1")$pci"
}

machine_args_of() {
  local a="-machine virt,gic-version=3,its=on -cpu cortex-a57 -smp 4,sockets=2,cores=2"
  if [ "$1" = dt-node2 ]; then
    # Node 2: the CPUs of a third socket, no memory. Distances make node 1 the
    # nearest node that has memory.
    a="-machine virt,gic-version=3,its=on -cpu cortex-a57 -smp 6,sockets=3,cores=2 -m 1G"
    a="$a -object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M"
    a="$a -numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1"
    a="$a -numa node,nodeid=2,cpus=4-5"
    a="$a -numa dist,src=0,dst=1,val=20 -numa dist,src=0,dst=2,val=30 -numa dist,src=1,dst=2,val=15"
    echo "$a"; return
  fi
  a="$a -m 1G -object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M"
  a="$a -numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1"
  a="$a -numa dist,src=0,dst=1,val=20"
  echo "$a"
}

# write_initramfs <work> <busybox>: <work>/rd with the guest's init, which
# copies what we want into tmpfs and prints one base64 tarball.
write_initramfs() {
  initramfs_tree "$1" "$2"
  mkdir -p "$1/rd/dev"
  cat > "$1/rd/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
o=/tmp/cap
mkdir -p $o/acpi $o/node
[ -f /sys/firmware/fdt ] && cat /sys/firmware/fdt > $o/fdt.dtb
for t in APIC SRAT SLIT; do
  [ -f /sys/firmware/acpi/tables/$t ] && cat /sys/firmware/acpi/tables/$t > $o/acpi/$t
done
for d in /sys/devices/system/node/node[0-9]*; do
  n=${d##*/}; mkdir -p $o/node/$n
  cat $d/cpulist $d/distance $d/meminfo > /dev/null 2>&1
  cp $d/cpulist $d/distance $d/meminfo $o/node/$n/
done
cat /proc/iomem > $o/iomem.txt
# The ITS's registers (QEMU virt puts it at 0x08080000): GITS_TYPER, GITS_CBASER,
# GITS_BASER0..1. CONFIG_IO_STRICT_DEVMEM may refuse; then the file says so.
for r in 0x08080008 0x08080080 0x08080100 0x08080108; do
  echo "$r $(devmem $r 64 2>&1)"
done > $o/gits-regs.txt
dmesg > $o/dmesg.txt
uname -a > $o/uname.txt
cat /proc/cmdline > $o/cmdline.txt
ls /sys/bus/pci/devices > $o/pci-devices.txt 2>/dev/null
cat /proc/interrupts > $o/interrupts.txt
echo ===CAPTURE-BEGIN===; (cd /tmp/cap && tar czf - .) | base64; echo ===CAPTURE-END===
# itt-* variants: the host reads the ITS's device table through QEMU's monitor
# now (Linux keeps RAM out of /dev/mem), then quits QEMU.
grep -q manycore.wait /proc/cmdline && { echo ===HOST-READ===; sleep 600; }
poweroff -f
INIT
}

# Writes $3/upgrade.cpio: QEMU's SRAT (from the acpi-qemu capture $1) plus a
# Memory Affinity for the firmware's flash on PXM 0 and a GIC ITS Affinity
# putting ITS 0 on PXM $2, for Linux's ACPI table upgrade from the initrd
# (scripts/acpi-srat.py, shared with domains-capture.sh's ACPI machines).
upgrade_srat() {
  local capture="$1" pxm="$2" dir="$3"
  tar xzf "$capture" -C "$dir" ./acpi/SRAT
  python3 "$root/scripts/acpi-srat.py" "$dir/upgrade.cpio" --cpio --base "$dir/acpi/SRAT" \
    --mem 0:0x04000000:0x04000000 --its "$pxm:0"
}

# Boots an itt-* guest with QEMU's monitor on a socket; when the guest has
# printed its capture, reads GITS_BASER0, the first-level device table entry
# and the first 768 device table entries (DeviceIDs = PCI requester IDs of
# buses 0-2) out of guest memory with the monitor's `xp`, into
# $work/monitor.txt, then quits QEMU. QEMU's device table entry (its
# gicv3_internal.h): Valid bit 0, Size bits 1-5 (EventID bits - 1), ITT
# address bits 6-49 (address >> 8).
run_and_read_itts() {
  local work="$1" args="$2" vmlinuz="$3" cmdline="$4" qpid i
  # shellcheck disable=SC2086
  timeout 900 qemu-system-aarch64 -nographic -no-reboot $args \
    -monitor "unix:$work/mon.sock,server=on,wait=off" \
    -kernel "$vmlinuz" -initrd "$work/initrd.gz" -append "$cmdline" \
    > "$work/console.log" 2>&1 &
  qpid=$!
  for i in $(seq 880); do
    grep -q "===HOST-READ===" "$work/console.log" && break
    kill -0 "$qpid" 2>/dev/null || break
    sleep 1
  done
  python3 - "$work/mon.sock" > "$work/monitor.txt" <<'PY'
import re, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def cmd(c):
    buf = b""
    if c:
        s.sendall(c.encode() + b"\n")
    while not buf.endswith(b"(qemu) "):
        buf += s.recv(65536)
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", buf.decode(errors="replace")).replace("\r", "")
    return [l for l in text.split("\n") if re.match(r"^[0-9a-f]{16}:", l)]
def words(lines):
    return [int(w, 16) for l in lines for w in l.split(":")[1].split()]
cmd(None)
def show(c):
    lines = cmd(c)
    print("# " + c)
    print("\n".join(lines))
    return words(lines)
baser0 = show("xp /1gx 0x08080100")[0]
l1 = baser0 & 0x0000FFFFFFFF0000
l2 = show(f"xp /1gx {l1:#x}")[0]
l2 &= (1 << 51) - 1 if l2 >> 63 else 0
if l2:
    show(f"xp /768gx {l2:#x}")
s.sendall(b"quit\n")
PY
  wait "$qpid" || true
}

capture() {
  local v="$1"
  local vmlinuz; vmlinuz="$(kernel_image)"
  local busybox; busybox="$(unpack_arm64 busybox-static)/bin/busybox"
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  write_initramfs "$work" "$busybox"
  pack_initrd "$work"

  local args; args="$(machine_args "$v")"
  local cmdline="console=ttyAMA0 rdinit=/init panic=-1 loglevel=7"
  local fw="" steps=() itt=""
  case "$v" in itt-*) itt=1; cmdline="$cmdline manycore.wait" ;; esac
  case "${v/#itt-/dt-}" in
    dt-qemu) ;;
    dt-node0|dt-node1|dt-node2)
      local node="${v#*-node}"
      # shellcheck disable=SC2086
      qemu-system-aarch64 $args -machine dumpdtb="$work/qemu.dtb" -nographic >/dev/null 2>&1
      dtc -q -I dtb -O dts -o "$work/qemu.dts" "$work/qemu.dtb"
      sed "/compatible = \"arm,gic-v3-its\";/a numa-node-id = <$node>;" "$work/qemu.dts" > "$work/its.dts"
      grep -q "numa-node-id = <$node>;" "$work/its.dts" || { echo "its-capture: no ITS node in QEMU's DT" >&2; return 1; }
      dtc -q -I dts -O dtb -o "$work/its.dtb" "$work/its.dts"
      fw="-dtb $work/its.dtb"
      steps=("qemu-system-aarch64 $args -machine dumpdtb=qemu.dtb -nographic"
             "dtc -I dtb -O dts -o qemu.dts qemu.dtb"
             "sed '/compatible = \"arm,gic-v3-its\";/a numa-node-id = <$node>;' qemu.dts > its.dts"
             "dtc -I dts -O dtb -o its.dtb its.dts") ;;
    acpi-qemu|acpi-its0|acpi-its1)
      cp /usr/share/AAVMF/AAVMF_VARS.fd "$work/vars.fd"
      fw="-drive if=pflash,format=raw,readonly=on,file=/usr/share/AAVMF/AAVMF_CODE.fd"
      fw="$fw -drive if=pflash,format=raw,file=$work/vars.fd"
      cmdline="$cmdline acpi=force"
      if [ "$v" != acpi-qemu ]; then
        [ -f "$out/arm64-its-acpi-qemu.tar.gz" ] || capture acpi-qemu
        upgrade_srat "$out/arm64-its-acpi-qemu.tar.gz" "${v#acpi-its}" "$work"
        cat "$work/upgrade.cpio" "$work/initrd.gz" > "$work/initrd-up"
        mv "$work/initrd-up" "$work/initrd.gz"
        steps=("tar xzf arm64-its-acpi-qemu.tar.gz ./acpi/SRAT (QEMU's SRAT, from the acpi-qemu boot)"
               "python3 scripts/acpi-srat.py upgrade.cpio --cpio --base SRAT --mem 0:0x04000000:0x04000000 --its ${v#acpi-its}:0 (appends Memory Affinity {PXM 0, 0x04000000 + 64 MiB, enabled} and GIC ITS Affinity {PXM ${v#acpi-its}, ITS id 0}; OEM revision + 1; kernel/firmware/acpi/srat.aml in a newc cpio)"
               "cat upgrade.cpio busybox-initrd.gz > initrd.gz (the uncompressed cpio first)")
      fi ;;
    *) echo "unknown variant '$v'" >&2; return 1 ;;
  esac
  echo "capture $v: qemu-system-aarch64 -nographic -no-reboot $args $fw -kernel vmlinuz -initrd initrd.gz -append \"$cmdline\"" >&2
  if [ -n "$itt" ]; then
    run_and_read_itts "$work" "$args $fw" "$vmlinuz" "$cmdline"
  else
    # shellcheck disable=SC2086
    timeout 600 qemu-system-aarch64 -nographic -no-reboot $args $fw \
      -kernel "$vmlinuz" -initrd "$work/initrd.gz" -append "$cmdline" \
      > "$work/console.log" 2>&1 || true
  fi
  require_parts "$work/console.log" "$v" CAPTURE
  console_part "$work/console.log" CAPTURE > "$out/arm64-its-$v.tar.gz"
  if [ -n "$itt" ]; then
    # Add the host's monitor reads to the guest's tarball.
    mkdir -p "$work/cap"
    tar xzf "$out/arm64-its-$v.tar.gz" -C "$work/cap"
    cp "$work/monitor.txt" "$work/cap/monitor.txt"
    (cd "$work/cap" && tar czf - .) > "$out/arm64-its-$v.tar.gz"
  fi
  {
    echo "variant: arm64-its-$v"
    echo "kernel: $(basename "$vmlinuz") (Debian package $(basename "$(dirname "$(dirname "$vmlinuz")")"), unpacked with dpkg -x)"
    echo "qemu: $(qemu-system-aarch64 --version | head -1)"
    local s
    for s in "${steps[@]}"; do echo "step: $s"; done
    echo "command: qemu-system-aarch64 -nographic -no-reboot $args ${fw//$work\//}${itt:+ -monitor unix:mon.sock,server=on,wait=off} -kernel vmlinuz -initrd initrd.gz -append \"$cmdline\""
    echo "initramfs: Debian's busybox-static (arm64) and the init in scripts/its-capture.sh"
    [ -n "$itt" ] && echo "then: with the guest waiting (manycore.wait), QEMU's monitor (-monitor unix:mon.sock,server=on,wait=off) reads GITS_BASER0, the first-level device table entry and 768 device table entries with xp (monitor.txt; run_and_read_itts in this script), then quits"
    echo "made by: scripts/its-capture.sh $v"
  } > "$out/arm64-its-$v.README"
  echo "capture $v: wrote $out/arm64-its-$v.tar.gz" >&2
}

if [ "$name" = all ]; then
  for v in dt-qemu dt-node1 dt-node0 dt-node2 acpi-qemu acpi-its1 acpi-its0 itt-qemu itt-node1 itt-node2; do capture "$v"; done
else
  capture "$name"
fi
