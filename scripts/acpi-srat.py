#!/usr/bin/env python3
"""Writes an ACPI SRAT for Linux's table upgrade from the initrd
(CONFIG_ACPI_TABLE_UPGRADE: kernel/firmware/acpi/srat.aml in an uncompressed
cpio before the initramfs) on QEMU's arm64 virt machine.

QEMU cannot put a GIC ITS Affinity in its SRAT, nor a Memory Affinity for the
UEFI variable-store flash that AAVMF reports as memory (without one, Linux 6.12
drops the whole SRAT and fakes one node), and arm has no -acpitable. So the
SRAT is either QEMU's own (--base, read back from a guest) or the one QEMU's
virt machine writes for a -numa layout (--qemu-virt, see build_srat in QEMU's
hw/arm/virt-acpi-build.c), plus the structures asked for. The result keeps
QEMU's OEM ID and table ID (which is how Linux matches the table it upgrades)
with OEM revision + 1.

  acpi-srat.py OUT (--base SRAT | --qemu-virt 'SIZE:CPUS ...') [--mem PXM:BASE:LEN ...] [--its PXM:ID ...] [--cpio]

SIZE takes K/M/G; CPUS is a cpulist (0-7 or 0-3,8-11); node N is the Nth
SIZE:CPUS; BASE and LEN are integers (0x... allowed). --cpio writes OUT as the
newc cpio Linux looks for (prepend it, uncompressed, to the initramfs) instead
of the bare table. Needs only python3."""

import argparse
import struct
import sys

HEADER = 48  # ACPI header (36) + SRAT's table revision (4) and reserved (8)
VIRT_MEM_BASE = 0x40000000  # QEMU virt: RAM starts at 1 GiB


def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1:].upper() in units:
        return int(text[:-1], 0) * units[text[-1].upper()]
    return int(text, 0)


def cpulist(text):
    cpus = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def gicc_affinity(pxm, uid):
    # Type 3, 18 bytes: proximity domain, ACPI processor UID, flags (enabled), clock domain.
    return struct.pack("<BBIIII", 3, 18, pxm, uid, 1, 0)


def memory_affinity(pxm, base, length):
    # Type 1, 40 bytes: proximity domain, reserved, base lo/hi, length lo/hi,
    # reserved, flags (enabled), reserved.
    return struct.pack("<BBIHIIIIIIQ", 1, 40, pxm, 0, base & 0xFFFFFFFF, base >> 32,
                       length & 0xFFFFFFFF, length >> 32, 0, 1, 0)


def its_affinity(pxm, its_id):
    # Type 4, 12 bytes: proximity domain, reserved, ITS ID.
    return struct.pack("<BBIHI", 4, 12, pxm, 0, its_id)


def qemu_virt(layout):
    """The SRAT QEMU 10's virt machine writes: one GICC Affinity per CPU in CPU
    order (UID = CPU index), then one Memory Affinity per node with memory, laid
    out from VIRT_MEM_BASE in node order."""
    nodes = [(size(s), cpulist(c)) for s, _, c in (n.partition(":") for n in layout.split())]
    node_of = {cpu: n for n, (_, cpus) in enumerate(nodes) for cpu in cpus}
    if sorted(node_of) != list(range(len(node_of))):
        sys.exit(f"acpi-srat: --qemu-virt '{layout}': CPUs must be 0..N-1, each in one node")
    header = bytearray(HEADER)
    header[0:4] = b"SRAT"
    header[8] = 3  # revision
    header[10:16] = b"BOCHS "
    header[16:24] = b"BXPC    "
    struct.pack_into("<I", header, 24, 1)  # OEM revision
    header[28:32] = b"BXPC"
    struct.pack_into("<I", header, 32, 1)  # creator revision
    struct.pack_into("<I", header, 36, 1)  # SRAT table revision (reserved, 1)
    body = b"".join(gicc_affinity(node_of[cpu], cpu) for cpu in sorted(node_of))
    base = VIRT_MEM_BASE
    for n, (mem, _) in enumerate(nodes):
        if mem:
            body += memory_affinity(n, base, mem)
            base += mem
    return header + body


def finish(table, bump):
    table = bytearray(table)
    struct.pack_into("<I", table, 4, len(table))
    if bump:
        struct.pack_into("<I", table, 24, struct.unpack_from("<I", table, 24)[0] + 1)
    table[9] = 0
    table[9] = (-sum(table)) & 0xFF
    return bytes(table)


def newc(files):
    """A newc cpio archive of (name, mode, data); written here so that the
    scripts need no cpio for it and build it one way."""
    out = bytearray()
    for ino, (name, mode, data) in enumerate(files + [("TRAILER!!!", 0, b"")], 1):
        raw = name.encode() + b"\0"
        fields = [ino if mode else 0, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(raw), 0]
        out += b"070701" + "".join(f"{f:08x}" for f in fields).encode() + raw
        out += b"\0" * (-len(out) % 4) + data
        out += b"\0" * (-len(out) % 4)
    return bytes(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--base", help="QEMU's SRAT, read back from a guest")
    src.add_argument("--qemu-virt", help="'SIZE:CPUS ...', one per node, as -numa gives them")
    p.add_argument("--mem", action="append", default=[], help="PXM:BASE:LEN")
    p.add_argument("--its", action="append", default=[], help="PXM:ID")
    p.add_argument("--as-qemu", action="store_true",
                   help="write QEMU's own table (OEM revision unchanged, no additions)")
    p.add_argument("--cpio", action="store_true",
                   help="write kernel/firmware/acpi/srat.aml in a newc cpio")
    a = p.parse_args()
    if a.base:
        table = bytearray(open(a.base, "rb").read())
        if table[:4] != b"SRAT" or len(table) < HEADER:
            sys.exit(f"acpi-srat: {a.base}: not an SRAT")
    else:
        table = qemu_virt(a.qemu_virt)
    for m in a.mem:
        pxm, base, length = (int(x, 0) for x in m.split(":"))
        table += memory_affinity(pxm, base, length)
    for i in a.its:
        pxm, its_id = (int(x, 0) for x in i.split(":"))
        table += its_affinity(pxm, its_id)
    if a.as_qemu and (a.mem or a.its):
        sys.exit("acpi-srat: --as-qemu takes no --mem or --its")
    table = finish(table, bump=not a.as_qemu)
    if a.cpio:
        dirs = ["kernel", "kernel/firmware", "kernel/firmware/acpi"]
        table = newc([(d, 0o40755, b"") for d in dirs]
                     + [("kernel/firmware/acpi/srat.aml", 0o100644, table)])
    with open(a.out, "wb") as f:
        f.write(table)


if __name__ == "__main__":
    main()
