//! Boot and AP trampoline code: the only parts that must be assembly.
//!
//! PVH enters `pvh_start32` in 32-bit protected mode with paging off and `ebx`
//! pointing at the `hvm_start_info`. We build identity-mapped page tables
//! (2 MiB pages, first [`IDENTITY_GIB`] GiB — RAM plus the LAPIC/IOAPIC/HPET MMIO
//! hole below 4 GiB), enable SSE (the host target's `core` uses it), enter long
//! mode and call `kernel_main`.
//!
//! Application processors start in real mode at the SIPI vector page. The
//! 16-bit part of their trampoline is copied below 1 MiB at run time; it loads
//! the kernel GDT and jumps to `ap_start32` in the kernel image, which shares the
//! BSP's page tables, enters long mode and finds its logical CPU number and
//! stack from its APIC id through `AP_APIC_TO_CPU` / `AP_STACK_TOPS` — one
//! indexed load each, where Linux scans `cpuid_to_apicid` linearly.

use super::phys::Stack;
use core::arch::global_asm;

/// GiB of physical address space the boot page tables identity-map.
pub const IDENTITY_GIB: usize = 16;

/// Physical page the AP trampoline is copied to; the SIPI vector is its page number.
pub const TRAMPOLINE_BASE: usize = 0x8000;

/// The start-up IPI's vector: the trampoline's page number, which must fit
/// the 8-bit vector (real-mode code below 1 MiB).
pub const TRAMPOLINE_PAGE: u8 = {
    assert!(TRAMPOLINE_BASE < 1 << 20 && TRAMPOLINE_BASE.is_multiple_of(4096));
    (TRAMPOLINE_BASE >> 12) as u8
};

/// Size of the table indexed by APIC id (x2APIC ids up to 2^15).
pub const APIC_ID_LIMIT: usize = 1 << 15;

/// Entry in [`AP_APIC_TO_CPU`] for APIC ids that have no logical CPU: such an AP parks.
pub const NO_CPU: u32 = u32::MAX;

/// Maximum number of logical CPUs the kernel supports (QEMU q35's limit).
pub const MAX_KERNEL_CPUS: usize = 4096;

/// APIC id → logical CPU number, read by each AP in the trampoline.
#[no_mangle]
pub static mut AP_APIC_TO_CPU: [u32; APIC_ID_LIMIT] = [NO_CPU; APIC_ID_LIMIT];

/// Logical CPU number → top of that CPU's stack (0: no stack, the AP parks).
#[no_mangle]
pub static mut AP_STACK_TOPS: [u64; MAX_KERNEL_CPUS] = [0; MAX_KERNEL_CPUS];

/// Physical address of the PVH start info, saved by the 32-bit entry.
#[no_mangle]
pub static mut PVH_START_INFO: u32 = 0;

pvh::xen_elfnote_phys32_entry!(pvh_start32);

extern "C" {
    fn pvh_start32() -> !;
    static ap_trampoline_start: u8;
    static ap_trampoline_end: u8;
}

/// The 16-bit trampoline as bytes, to copy to [`TRAMPOLINE_BASE`].
pub fn trampoline_bytes() -> &'static [u8] {
    // SAFETY: both symbols are defined by the global_asm below in one section,
    // start before end; the bytes between them are immutable code.
    unsafe {
        let start = &raw const ap_trampoline_start;
        let end = &raw const ap_trampoline_end;
        core::slice::from_raw_parts(start, end as usize - start as usize)
    }
}

global_asm!(
    r#"
.set TRAMP_BASE, {tramp_base}
.set IDENT_PD_ENTRIES, {gib} * 512

.macro ENTER_LONG_MODE
    /* Shared by BSP and APs: PAE + SSE in CR4, CR3, EFER.LME, GDT, then paging. */
    mov %cr4, %eax
    or $0x620, %eax          /* PAE | OSFXSR | OSXMMEXCPT */
    mov %eax, %cr4
    mov $boot_pml4, %eax
    mov %eax, %cr3
    mov $0xC0000080, %ecx
    rdmsr
    or $0x100, %eax          /* LME */
    wrmsr
    lgdt boot_gdtr
    mov %cr0, %eax
    and $0xFFFFFFFB, %eax    /* clear EM */
    or $0x80000023, %eax     /* PG | NE | MP | PE */
    mov %eax, %cr0
.endm

.macro LOAD_DATA_SEGMENTS
    /* Shared by BSP and APs in long mode: every data segment is boot_gdt's 0x20. */
    mov $0x20, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    mov %ax, %fs
    mov %ax, %gs
.endm

.section .text.boot, "ax"
.code32
.global pvh_start32
pvh_start32:
    cli
    cld
    mov %ebx, %esi
    /* zero .bss (page tables, stacks, tables) */
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb
    mov %esi, PVH_START_INFO

    /* PML4[0] -> PDPT */
    mov $boot_pdpt, %eax
    or $3, %eax
    mov %eax, boot_pml4
    /* PDPT[i] -> PD page i */
    mov $boot_pd, %eax
    or $3, %eax
    mov $boot_pdpt, %edi
    mov ${gib}, %ecx
1:  mov %eax, (%edi)
    add $4096, %eax
    add $8, %edi
    loop 1b
    /* PD entries: 2 MiB pages, present|writable|large. The MMIO hole is mapped
       write-back too; TCG ignores cache attributes and real MTRRs mark it UC. */
    mov $boot_pd, %edi
    xor %eax, %eax
    xor %edx, %edx
    mov $IDENT_PD_ENTRIES, %ecx
2:  mov %eax, %ebx
    or $0x83, %ebx
    mov %ebx, (%edi)
    mov %edx, 4(%edi)
    add $0x200000, %eax
    adc $0, %edx
    add $8, %edi
    loop 2b

    ENTER_LONG_MODE
    ljmp $0x18, $bsp_start64

.code64
bsp_start64:
    LOAD_DATA_SEGMENTS
    mov $boot_stack_top, %rsp
    xor %ebp, %ebp
    fninit
    mov PVH_START_INFO, %edi
    call kernel_main
3:  cli
    hlt
    jmp 3b

/* APs arrive here from the 16-bit trampoline in 32-bit protected mode. */
.code32
.global ap_start32
ap_start32:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    ENTER_LONG_MODE
    ljmp $0x18, $ap_start64

.code64
ap_start64:
    LOAD_DATA_SEGMENTS
    /* APIC id: CPUID.0xB:EDX (full x2APIC id) when the leaf exists, else CPUID.1:EBX[31:24] */
    xor %eax, %eax
    cpuid
    cmp $0xB, %eax
    jb 4f
    mov $0xB, %eax
    xor %ecx, %ecx
    cpuid
    mov %edx, %esi
    jmp 5f
4:  mov $1, %eax
    cpuid
    shr $24, %ebx
    mov %ebx, %esi
5:  cmp ${apic_limit}, %esi
    jae ap_park
    mov AP_APIC_TO_CPU(,%rsi,4), %edi
    cmp $0xFFFFFFFF, %edi
    je ap_park
    mov AP_STACK_TOPS(,%rdi,8), %rsp
    test %rsp, %rsp
    jz ap_park
    xor %ebp, %ebp
    fninit
    call ap_rust_entry
ap_park:
    cli
    hlt
    jmp ap_park

/* The real-mode trampoline, copied to TRAMP_BASE. Addresses inside it are
   TRAMP_BASE + (label - ap_trampoline_start); ds = 0 so they are absolute. */
.section .rodata.trampoline, "a"
.global ap_trampoline_start
.global ap_trampoline_end
.code16
ap_trampoline_start:
    cli
    cld
    xor %ax, %ax
    mov %ax, %ds
    lgdtl TRAMP_BASE + (tramp_gdtr - ap_trampoline_start)
    mov %cr0, %eax
    or $1, %eax
    mov %eax, %cr0
    ljmpl $0x08, $ap_start32
.p2align 3
tramp_gdtr:
    .word boot_gdt_end - boot_gdt - 1
    .long boot_gdt
ap_trampoline_end:
.code64

.section .rodata
.p2align 3
.global boot_gdt
boot_gdt:
    .quad 0
    .quad 0x00CF9A000000FFFF   /* 0x08: 32-bit code */
    .quad 0x00CF92000000FFFF   /* 0x10: 32-bit data */
    .quad 0x00AF9A000000FFFF   /* 0x18: 64-bit code */
    .quad 0x00CF92000000FFFF   /* 0x20: data */
boot_gdt_end:
.p2align 3
boot_gdtr:
    .word boot_gdt_end - boot_gdt - 1
    .long boot_gdt
    .long 0

.section .bss
.p2align 12
.global boot_pml4
boot_pml4: .skip 4096
boot_pdpt: .skip 4096
boot_pd:   .skip 4096 * {gib}
.p2align 4
boot_stack: .skip 256 * 1024
boot_stack_top:
.text
"#,
    tramp_base = const TRAMPOLINE_BASE,
    gib = const IDENTITY_GIB,
    apic_limit = const APIC_ID_LIMIT,
    options(att_syntax)
);

/// The boot CPU's first Rust code, called by `bsp_start64` on the boot stack.
#[no_mangle]
extern "C" fn kernel_main(start_info: u32) -> ! {
    crate::start_kernel(start_info)
}

/// Each AP's first Rust code, called by `ap_start64` on its own stack with
/// the logical CPU number and APIC id the trampoline looked it up by.
#[no_mangle]
extern "C" fn ap_rust_entry(cpu: u32, apic_id: u32) -> ! {
    crate::smp::ap_main(cpu, apic_id)
}

/// Error from [`set_ap_slot`]: the APIC id or CPU number does not fit the tables.
#[derive(Clone, Copy, Debug)]
pub struct SlotOutOfRange;

/// Publishes where the AP with `apic_id` finds its logical CPU number and
/// stack; the AP reads them when it starts (the start-up IPI orders the
/// writes before its reads). The stack is consumed: no two CPUs get one.
pub fn set_ap_slot(apic_id: u32, cpu: u32, stack: Stack) -> Result<(), SlotOutOfRange> {
    let (a, c) = (apic_id as usize, cpu as usize);
    if a >= APIC_ID_LIMIT || c >= MAX_KERNEL_CPUS {
        return Err(SlotOutOfRange);
    }
    // SAFETY: only the BSP writes these tables (this function is called from
    // the boot path alone); the indices are bounds-checked above; the stack
    // is RAM nobody else owns (`Stack`'s only maker is `PhysMem`).
    unsafe {
        (&raw mut AP_APIC_TO_CPU)
            .cast::<u32>()
            .add(a)
            .write_volatile(cpu);
        (&raw mut AP_STACK_TOPS)
            .cast::<u64>()
            .add(c)
            .write_volatile(stack.top());
    }
    Ok(())
}

/// Copies the real-mode trampoline to [`TRAMPOLINE_BASE`].
pub fn install_trampoline() {
    let code = trampoline_bytes();
    // SAFETY: the page at TRAMPOLINE_BASE is conventional low memory that the
    // frame allocators never hand out (the first MiB is reserved) and nothing
    // else uses; the trampoline is far smaller than a page.
    unsafe {
        core::ptr::copy_nonoverlapping(code.as_ptr(), TRAMPOLINE_BASE as *mut u8, code.len());
    }
}
