//! GDT with a TSS, and an IDT whose every vector runs on an IST stack.
//!
//! The host target's code uses the 128-byte red zone below `rsp`, which an
//! interrupt on the same stack would overwrite: hence IST for every vector.
//! Exceptions are fatal (print and exit QEMU with failure); the wake-up vector
//! only acknowledges the APIC so that a CPU waiting in `hlt` continues.

use core::arch::global_asm;
use spin::Once;
use x86_64::instructions::segmentation::{Segment, CS, DS, ES, SS};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::idt::{Entry, InterruptDescriptorTable};
use x86_64::structures::tss::TaskStateSegment;
use x86_64::VirtAddr;

/// Vector of the APIC timer that wakes the BSP from `hlt` while it waits.
pub const WAKE_VECTOR: u8 = 0x40;
/// The spurious-interrupt vector programmed into the APIC SVR.
pub const SPURIOUS_VECTOR: u8 = 0xff;

const IST_SIZE: usize = 32 * 1024;
static mut IST_STACK: [u8; IST_SIZE] = [0; IST_SIZE];

struct Tables {
    gdt: GlobalDescriptorTable,
    code: SegmentSelector,
    data: SegmentSelector,
    tss: SegmentSelector,
}

static TSS: Once<TaskStateSegment> = Once::new();
static GDT: Once<Tables> = Once::new();
static IDT: Once<InterruptDescriptorTable> = Once::new();
/// The APs' IDT: only the wake-up and spurious vectors, and no IST (APs load
/// no TSS). An AP takes an interrupt only inside `enable_and_hlt`, whose asm
/// block is not `nostack`, so the compiler keeps nothing in the red zone there.
static AP_IDT: Once<InterruptDescriptorTable> = Once::new();

extern "C" {
    static exception_stubs: [[u8; 16]; 32];
    fn wake_isr();
    fn spurious_isr();
}

/// Loads the BSP's GDT, TSS and IDT. Called once, before interrupts are enabled.
pub fn init_bsp() {
    mask_legacy_pics();
    let t = GDT.call_once(|| gdt_with(TSS.call_once(ist_tss)));
    t.gdt.load();
    load_segments(t);
    // SAFETY: the selector is the TSS descriptor of the GDT just loaded.
    unsafe { load_tss(t.tss) };
    IDT.call_once(bsp_idt).load();
}

/// Loads the BSP's GDT (without its TSS) and the AP IDT on an application
/// processor, so that a wake-up IPI can end its `hlt`.
pub fn init_ap() {
    let Some(t) = GDT.get() else { return };
    t.gdt.load();
    load_segments(t);
    AP_IDT.call_once(ap_idt).load();
}

/// Masks every legacy 8259 IRQ. The firmware leaves the PICs routing the PIT
/// to vector 8 (the double-fault vector); the kernel uses only local APICs.
fn mask_legacy_pics() {
    // SAFETY: 0x21/0xa1 are the legacy 8259 PICs' mask registers; masking
    // every line has no other effect.
    unsafe {
        x86_64::instructions::port::Port::<u8>::new(0x21).write(0xff);
        x86_64::instructions::port::Port::<u8>::new(0xa1).write(0xff);
    }
}

/// The BSP's TSS: its first IST entry is the top of [`IST_STACK`].
fn ist_tss() -> TaskStateSegment {
    let mut tss = TaskStateSegment::new();
    let top = (&raw const IST_STACK) as u64 + IST_SIZE as u64;
    tss.interrupt_stack_table[0] = VirtAddr::new(top & !0xf);
    tss
}

/// The kernel's GDT: 64-bit code, data, and `tss`.
fn gdt_with(tss: &'static TaskStateSegment) -> Tables {
    let mut gdt = GlobalDescriptorTable::new();
    let code = gdt.append(Descriptor::kernel_code_segment());
    let data = gdt.append(Descriptor::kernel_data_segment());
    let tss = gdt.append(Descriptor::tss_segment(tss));
    Tables {
        gdt,
        code,
        data,
        tss,
    }
}

/// Reloads CS, SS, DS and ES from `t`'s GDT, which this CPU has just loaded.
fn load_segments(t: &Tables) {
    // SAFETY: the selectors come from the GDT just loaded; reloading the
    // segment registers with them is the architectural way to switch GDTs.
    unsafe {
        CS::set_reg(t.code);
        SS::set_reg(t.data);
        DS::set_reg(t.data);
        ES::set_reg(t.data);
    }
}

/// Points `entry` at the handler at `addr`, on IST stack 0.
///
/// # Safety
/// `addr` must be a handler that follows the interrupt calling convention
/// for the entry's vector (ends in `iretq`, or never returns), and IST entry
/// 0 must be set in the TSS that is loaded whenever the IDT holding `entry` is.
unsafe fn on_ist<F>(entry: &mut Entry<F>, addr: VirtAddr) {
    // SAFETY: the caller's obligations are exactly these two calls'.
    unsafe {
        entry.set_handler_addr(addr).set_stack_index(0);
    }
}

/// Address of the exception stub for `vector` (16 bytes each, below).
fn exception_stub(vector: u8) -> VirtAddr {
    VirtAddr::new((&raw const exception_stubs) as u64 + u64::from(vector) * 16)
}

/// The BSP's IDT: each exception the kernel can meet to its stub (fatal),
/// every interrupt vector to the wake-up handler (the spurious one to its
/// own), all on IST stack 0.
fn bsp_idt() -> InterruptDescriptorTable {
    let mut idt = InterruptDescriptorTable::new();
    let wake = VirtAddr::new(wake_isr as *const () as u64);
    let spurious = VirtAddr::new(spurious_isr as *const () as u64);
    // SAFETY: every address is an assembly stub below (exception stubs never
    // return, the wake-up and spurious ones end in iretq), and `init_bsp`
    // loads this IDT after the TSS whose IST 0 is set.
    unsafe {
        // Exceptions without an error code: the table indexes them.
        for v in [0, 1, 2, 3, 4, 5, 6, 7, 16, 19] {
            on_ist(&mut idt[v], exception_stub(v));
        }
        // Exceptions with an error code, and machine check: typed fields.
        on_ist(&mut idt.double_fault, exception_stub(8));
        on_ist(&mut idt.invalid_tss, exception_stub(10));
        on_ist(&mut idt.segment_not_present, exception_stub(11));
        on_ist(&mut idt.stack_segment_fault, exception_stub(12));
        on_ist(&mut idt.general_protection_fault, exception_stub(13));
        on_ist(&mut idt.page_fault, exception_stub(14));
        on_ist(&mut idt.alignment_check, exception_stub(17));
        on_ist(&mut idt.machine_check, exception_stub(18));
        for v in 32..=255u8 {
            on_ist(
                &mut idt[v],
                if v == SPURIOUS_VECTOR { spurious } else { wake },
            );
        }
    }
    idt
}

/// The APs' IDT: the wake-up and spurious vectors, without IST.
fn ap_idt() -> InterruptDescriptorTable {
    let mut idt = InterruptDescriptorTable::new();
    // SAFETY: both handlers are the assembly stubs below, which end in iretq.
    unsafe {
        idt[WAKE_VECTOR].set_handler_addr(VirtAddr::new(wake_isr as *const () as u64));
        idt[SPURIOUS_VECTOR].set_handler_addr(VirtAddr::new(spurious_isr as *const () as u64));
    }
    idt
}

/// Called from the exception stubs with the vector, error code and saved RIP.
#[no_mangle]
extern "C" fn exception_handler(vector: u64, error: u64, rip: u64, cr2: u64) -> ! {
    super::console::emergency_print(format_args!(
        "\nkernel: exception {vector} error {error:#x} at rip {rip:#x} cr2 {cr2:#x}\n"
    ));
    super::console::exit(super::console::EXIT_FAILURE)
}

/// The wake vector's Rust half: acknowledge the APIC.
#[no_mangle]
extern "C" fn wake_handler() {
    super::apic::eoi();
}

// Each exception stub is 16 bytes: push a fake error code for vectors without
// one, push the vector, jump to the common path. Vectors with a CPU-pushed
// error code: 8, 10-14, 17, 21, 29, 30.
global_asm!(
    r#"
.section .text
.p2align 4
.global exception_stubs
exception_stubs:
.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
.p2align 4
.if (\v == 8) || (\v >= 10 && \v <= 14) || (\v == 17) || (\v == 21) || (\v == 29) || (\v == 30)
    pushq $\v
.else
    pushq $0
    pushq $\v
.endif
    jmp exception_common
.endr
.p2align 4
exception_common:
    popq %rdi           /* vector */
    popq %rsi           /* error code */
    movq (%rsp), %rdx   /* rip from the interrupt frame */
    movq %cr2, %rcx
    andq $-16, %rsp
    call exception_handler
    ud2

.global wake_isr
wake_isr:
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    movq %rsp, %rax
    andq $-16, %rsp
    pushq %rax
    subq $8, %rsp
    call wake_handler
    addq $8, %rsp
    popq %rsp
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    iretq

.global spurious_isr
spurious_isr:
    iretq
"#,
    options(att_syntax)
);
