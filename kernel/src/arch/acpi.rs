//! ACPI table access through the `acpi` crate. The crate walks RSDP → XSDT and
//! parses the MADT and HPET tables; it has no SRAT or SLIT, so those are declared
//! here as `AcpiTable`s and handed to the safe parsers in `firmware` as bytes.

use acpi::sdt::{SdtHeader, Signature};
use acpi::{AcpiHandler, AcpiTable, AcpiTables, PhysicalMapping};
use core::ptr::NonNull;

/// All of physical memory the kernel touches is identity-mapped, so mapping a
/// table is taking its physical address as a pointer.
#[derive(Clone, Copy, Debug)]
pub struct IdentityHandler;

impl AcpiHandler for IdentityHandler {
    /// # Safety
    /// As the trait requires: `paddr` is the physical address of `size`
    /// bytes holding a `T`, which the `acpi` crate guarantees for the tables
    /// it maps.
    unsafe fn map_physical_region<T>(&self, paddr: usize, size: usize) -> PhysicalMapping<Self, T> {
        // SAFETY: the boot page tables identity-map the first 16 GiB, which holds
        // QEMU's ACPI tables; the caller (the acpi crate) upholds that `paddr`
        // points at a `T`. A null address cannot be a table: dangling is unused.
        unsafe {
            let ptr = NonNull::new(paddr as *mut T).unwrap_or(NonNull::dangling());
            PhysicalMapping::new(paddr, ptr, size, size, *self)
        }
    }

    fn unmap_physical_region<T>(_region: &PhysicalMapping<Self, T>) {}
}

/// The System Resource Affinity Table's fixed part; entries follow.
#[repr(C, packed)]
pub struct Srat {
    header: SdtHeader,
    _reserved1: u32,
    _reserved2: u64,
}

// SAFETY: `Srat` is the SRAT's fixed layout (ACPI 6.5 §5.2.16) under its signature.
unsafe impl AcpiTable for Srat {
    const SIGNATURE: Signature = Signature::SRAT;
    fn header(&self) -> &SdtHeader {
        &self.header
    }
}

/// The System Locality Information Table's fixed part; the matrix follows.
#[repr(C, packed)]
pub struct Slit {
    header: SdtHeader,
    _localities: u64,
}

// SAFETY: `Slit` is the SLIT's fixed layout (ACPI 6.5 §5.2.17) under its signature.
unsafe impl AcpiTable for Slit {
    const SIGNATURE: Signature = Signature::SLIT;
    fn header(&self) -> &SdtHeader {
        &self.header
    }
}

/// The firmware's ACPI tables, found from the RSDP address PVH passes.
pub struct Tables(AcpiTables<IdentityHandler>);

/// Error: the tables could not be read (message for the console).
#[derive(Debug)]
pub struct AcpiFailure(pub acpi::AcpiError);

impl Tables {
    /// Opens the tables at `rsdp` (physical address from the PVH start info).
    pub fn open(rsdp: u64) -> Result<Self, AcpiFailure> {
        // SAFETY: `rsdp` is the address PVH reports for the RSDP, identity-mapped;
        // `from_rsdp` validates signature and checksum before trusting it.
        unsafe { AcpiTables::from_rsdp(IdentityHandler, rsdp as usize) }
            .map(Tables)
            .map_err(AcpiFailure)
    }

    /// The MADT, through the acpi crate.
    pub fn madt(&self) -> Option<PhysicalMapping<IdentityHandler, acpi::madt::Madt>> {
        self.0.find_table::<acpi::madt::Madt>().ok()
    }

    /// HPET block base address, if the firmware describes one.
    pub fn hpet_base(&self) -> Option<u64> {
        acpi::HpetInfo::new(&self.0)
            .ok()
            .map(|h| h.base_address as u64)
    }

    /// The whole SRAT as bytes (header included), if present.
    pub fn srat_bytes(&self) -> Option<&'static [u8]> {
        let m = self.0.find_table::<Srat>().ok()?;
        Some(whole_table(m.physical_start(), m.header.length))
    }

    /// The whole SLIT as bytes (header included), if present.
    pub fn slit_bytes(&self) -> Option<&'static [u8]> {
        let m = self.0.find_table::<Slit>().ok()?;
        Some(whole_table(m.physical_start(), m.header.length))
    }
}

fn whole_table(paddr: usize, len: u32) -> &'static [u8] {
    // SAFETY: the acpi crate validated the table's header and checksum over
    // `len` bytes at `paddr`, which is identity-mapped firmware memory the kernel
    // never writes.
    unsafe { core::slice::from_raw_parts(paddr as *const u8, len as usize) }
}
