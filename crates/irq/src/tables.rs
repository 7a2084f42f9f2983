//! The memory an ITS needs, sized as Linux 6.12 sizes it
//! (drivers/irqchip/irq-gic-v3-its.c): the command queue in `its_probe_one`,
//! then one table per implemented `GITS_BASERn` in `its_alloc_tables` — the
//! device table (two-level when the flat one would exceed two ITS pages and
//! the ITS supports it) and the collection table (one ITS page). Every
//! allocation is `alloc_pages_node()` of a power-of-two number of pages, so it
//! is aligned to its own size.
//!
//! Later, for each device that asks for MSIs, `its_create_device` allocates on
//! the same node: a second-level device-table page when the device table is
//! two-level and the device's first-level slot is still empty
//! (`its_alloc_table_entry`: one ITS page), then the device's interrupt
//! translation table (ITT, `kzalloc_node` in 6.12).

/// The table kinds, in the order Linux allocates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableKind {
    /// The command queue (`ITS_CMD_QUEUE_SZ`).
    CommandQueue,
    /// `GITS_BASERn` of type Devices.
    Device,
    /// `GITS_BASERn` of type Interrupt Collections.
    Collection,
    /// A second-level page of a two-level device table (per group of devices).
    DeviceL2,
    /// One device's interrupt translation table.
    Itt,
}

impl TableKind {
    /// The ITS-wide tables, in the order `its_probe_one` allocates them.
    pub const ALL: [TableKind; 3] = [
        TableKind::CommandQueue,
        TableKind::Device,
        TableKind::Collection,
    ];

    /// Short name used in output and JSON.
    pub fn name(self) -> &'static str {
        match self {
            TableKind::CommandQueue => "command-queue",
            TableKind::Device => "device",
            TableKind::Collection => "collection",
            TableKind::DeviceL2 => "device-l2",
            TableKind::Itt => "itt",
        }
    }

    /// The words Linux's boot log uses for it (`its_base_type_string`).
    pub fn linux_name(self) -> &'static str {
        match self {
            TableKind::CommandQueue => "command queue",
            TableKind::Device => "Devices",
            TableKind::Collection => "Interrupt Collections",
            TableKind::DeviceL2 => "device table level 2 page",
            TableKind::Itt => "ITT",
        }
    }
}

/// Linux's page and allocation limits (arm64, 4 KiB pages, as Debian builds it).
const PAGE: u64 = 4096;
/// `MAX_PAGE_ORDER` with `CONFIG_ARCH_FORCE_MAX_ORDER=10`: 4 MiB blocks at most.
const MAX_ALLOC: u64 = PAGE << 10;
/// `GITS_BASER_PAGES_MAX`: a BASER describes at most 256 ITS pages.
const BASER_PAGES_MAX: u64 = 256;
/// `ITS_CMD_QUEUE_SZ`.
const CMD_QUEUE: u64 = 64 << 10;
/// `GITS_LVL1_ENTRY_SIZE`: a first-level entry of a two-level table.
const LVL1_ENTRY: u64 = 8;

/// What an ITS's registers say about its tables (`GITS_TYPER`, `GITS_BASERn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// DeviceID bits (`GITS_TYPER.Devbits` + 1).
    pub device_id_bits: u32,
    /// Bytes per device table entry (`GITS_BASERn.Entry_Size` + 1).
    pub device_entry: u64,
    /// Bytes per collection table entry.
    pub collection_entry: u64,
    /// The largest ITS page size the BASERs accept (64, 16 or 4 KiB; Linux tries
    /// 64 KiB first).
    pub page: u64,
    /// Whether the device BASER keeps the Indirect bit (two-level tables).
    pub two_level: bool,
    /// Bytes per ITT entry (`GITS_TYPER.ITT_entry_size` + 1).
    pub itt_entry: u64,
}

/// QEMU 10's ITS, as the guest's registers read (tests/data/*/gits-regs.txt):
/// `GITS_TYPER` = 0x1f0001efb1 (Devbits 15: 16 DeviceID bits), `GITS_BASER0`
/// Devices with 8-byte entries, Indirect kept, 64 KiB pages; `GITS_BASER1`
/// Interrupt Collections with 8-byte entries; `GITS_TYPER.ITT_entry_size` 11:
/// 12-byte ITT entries.
pub const QEMU_ITS: Geometry = Geometry {
    device_id_bits: 16,
    device_entry: 8,
    collection_entry: 8,
    page: 64 << 10,
    two_level: true,
    itt_entry: 12,
};

/// `ITS_ITT_ALIGN`: an ITT starts on a 256-byte boundary.
const ITT_ALIGN: u64 = 256;

/// One table's size, as Linux would allocate it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSize {
    /// Which table.
    pub kind: TableKind,
    /// Bytes allocated (a power of two, also the alignment).
    pub bytes: u64,
    /// Entries, as Linux's boot log counts them (first-level ones when
    /// `indirect`; command slots of 32 bytes for the queue).
    pub entries: u64,
    /// Two-level (the entries point to second-level pages allocated later).
    pub indirect: bool,
}

/// Why a geometry cannot be sized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadGeometry(pub String);

impl std::fmt::Display for BadGeometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ITS geometry: {}", self.0)
    }
}

impl Geometry {
    fn check(&self) -> Result<(), BadGeometry> {
        if !(1..=32).contains(&self.device_id_bits) {
            return Err(BadGeometry(format!(
                "{} DeviceID bits (1 to 32)",
                self.device_id_bits
            )));
        }
        for (what, e) in [
            ("device", self.device_entry),
            ("collection", self.collection_entry),
            ("ITT", self.itt_entry),
        ] {
            if !(1..=32).contains(&e) {
                return Err(BadGeometry(format!("{what} entry of {e} bytes (1 to 32)")));
            }
        }
        if ![4 << 10, 16 << 10, 64 << 10].contains(&self.page) {
            return Err(BadGeometry(format!(
                "ITS page of {} bytes (4, 16 or 64 KiB)",
                self.page
            )));
        }
        Ok(())
    }

    /// The three allocations, in Linux's order: command queue, device table,
    /// collection table.
    pub fn sizes(&self) -> Result<[TableSize; 3], BadGeometry> {
        self.check()?;
        let (bytes, indirect) = self.device_table();
        let device_esz = if indirect {
            LVL1_ENTRY
        } else {
            self.device_entry
        };
        let collection = baser_bytes(self.page, self.page);
        Ok([
            TableSize {
                kind: TableKind::CommandQueue,
                bytes: CMD_QUEUE,
                entries: CMD_QUEUE / 32,
                indirect: false,
            },
            TableSize {
                kind: TableKind::Device,
                bytes,
                entries: bytes / device_esz,
                indirect,
            },
            TableSize {
                kind: TableKind::Collection,
                bytes: collection,
                entries: collection / self.collection_entry,
                indirect: false,
            },
        ])
    }

    /// The device's first-level slot in a two-level device table: devices
    /// with the same slot share one second-level page (`its_alloc_table_entry`).
    /// `None` when the device table is flat. A DeviceID wider than the ITS's
    /// DeviceID bits is refused, as `its_alloc_device_table` refuses it.
    pub fn device_l2_slot(&self, device_id: u32) -> Result<Option<u64>, BadGeometry> {
        self.check()?;
        if u64::from(device_id) >> self.device_id_bits != 0 {
            return Err(BadGeometry(format!(
                "DeviceID {device_id:#x} is wider than the ITS's {} DeviceID bits",
                self.device_id_bits
            )));
        }
        let (_, indirect) = self.device_table();
        Ok(indirect.then(|| u64::from(device_id) / (self.page / self.device_entry)))
    }

    /// A device's ITT for `vectors` MSIs, as `its_create_device` sizes it: a
    /// power of two of at least two entries, at least `ITS_ITT_ALIGN` bytes,
    /// plus `ITS_ITT_ALIGN - 1` to align it by hand inside a `kzalloc_node`
    /// block, which the slab rounds up to a power of two (above 8 KiB: whole
    /// pages, a power of two of them). Returns (bytes allocated, entries).
    pub fn itt(&self, vectors: u32) -> Result<(u64, u64), BadGeometry> {
        self.check()?;
        if vectors == 0 || vectors > 1 << 16 {
            return Err(BadGeometry(format!("{vectors} vectors (1 to 65536)")));
        }
        let entries = u64::from(vectors.next_power_of_two()).max(2);
        let bytes = (entries * self.itt_entry).max(ITT_ALIGN) + ITT_ALIGN - 1;
        Ok((bytes.next_power_of_two(), entries))
    }

    /// `its_parse_indirect_baser` then `its_setup_baser` for the device table.
    fn device_table(&self) -> (u64, bool) {
        let mut ids = self.device_id_bits;
        let mut esz = self.device_entry;
        let flat = esz << ids;
        // Two levels only pay when the flat table would exceed two ITS pages.
        let indirect = flat > self.page * 2 && self.two_level;
        if indirect {
            ids -= (self.page / esz).ilog2().min(ids);
            esz = LVL1_ENTRY;
        }
        let wanted = pages_pow2(esz << ids).max(self.page).min(MAX_ALLOC);
        (baser_bytes(wanted, self.page), indirect)
    }
}

/// Rounds up to a power-of-two number of kernel pages (`get_order`).
fn pages_pow2(bytes: u64) -> u64 {
    bytes.max(PAGE).next_power_of_two()
}

/// `its_setup_baser`: at most `GITS_BASER_PAGES_MAX` ITS pages.
fn baser_bytes(bytes: u64, page: u64) -> u64 {
    let bytes = pages_pow2(bytes);
    if bytes / page > BASER_PAGES_MAX {
        pages_pow2(BASER_PAGES_MAX * page)
    } else {
        bytes
    }
}
