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
use x86_64::structures::idt::InterruptDescriptorTable;
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
    // SAFETY: 0x21/0xa1 are the legacy 8259 PICs' mask registers. The firmware
    // leaves them routing the PIT to vector 8 (the double-fault vector); the
    // kernel uses only the local APIC, so every legacy IRQ is masked.
    unsafe {
        x86_64::instructions::port::Port::<u8>::new(0x21).write(0xff);
        x86_64::instructions::port::Port::<u8>::new(0xa1).write(0xff);
    }
    let tss = TSS.call_once(|| {
        let mut tss = TaskStateSegment::new();
        let top = (&raw const IST_STACK) as u64 + IST_SIZE as u64;
        tss.interrupt_stack_table[0] = VirtAddr::new(top & !0xf);
        tss
    });
    let t = GDT.call_once(|| {
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
    });
    t.gdt.load();
    // SAFETY: the selectors come from the GDT just loaded; reloading CS/SS/DS/ES
    // with them and loading the TSS is the architectural way to switch GDTs.
    unsafe {
        CS::set_reg(t.code);
        SS::set_reg(t.data);
        DS::set_reg(t.data);
        ES::set_reg(t.data);
        load_tss(t.tss);
    }
    let idt = IDT.call_once(|| {
        let mut idt = InterruptDescriptorTable::new();
        // SAFETY: every handler address is an assembly stub below that follows the
        // interrupt calling convention (ends in iretq or never returns), and IST
        // index 0 is set in the TSS loaded above.
        unsafe {
            for v in 0..32u8 {
                let addr = (&raw const exception_stubs) as u64 + v as u64 * 16;
                let entry = match v {
                    0 => &mut idt.divide_error,
                    1 => &mut idt.debug,
                    2 => &mut idt.non_maskable_interrupt,
                    3 => &mut idt.breakpoint,
                    4 => &mut idt.overflow,
                    5 => &mut idt.bound_range_exceeded,
                    6 => &mut idt.invalid_opcode,
                    7 => &mut idt.device_not_available,
                    16 => &mut idt.x87_floating_point,
                    19 => &mut idt.simd_floating_point,
                    _ => continue,
                };
                entry
                    .set_handler_addr(VirtAddr::new(addr))
                    .set_stack_index(0);
            }
            let stub = |v: u64| VirtAddr::new((&raw const exception_stubs) as u64 + v * 16);
            idt.double_fault
                .set_handler_addr(stub(8))
                .set_stack_index(0);
            idt.invalid_tss
                .set_handler_addr(stub(10))
                .set_stack_index(0);
            idt.segment_not_present
                .set_handler_addr(stub(11))
                .set_stack_index(0);
            idt.stack_segment_fault
                .set_handler_addr(stub(12))
                .set_stack_index(0);
            idt.general_protection_fault
                .set_handler_addr(stub(13))
                .set_stack_index(0);
            idt.page_fault.set_handler_addr(stub(14)).set_stack_index(0);
            idt.alignment_check
                .set_handler_addr(stub(17))
                .set_stack_index(0);
            idt.machine_check
                .set_handler_addr(stub(18))
                .set_stack_index(0);
            for v in 32..=255u8 {
                let handler = match v {
                    SPURIOUS_VECTOR => spurious_isr as *const () as u64,
                    _ => wake_isr as *const () as u64,
                };
                idt[v]
                    .set_handler_addr(VirtAddr::new(handler))
                    .set_stack_index(0);
            }
        }
        idt
    });
    idt.load();
}

/// Loads the BSP's GDT (without its TSS) and the AP IDT on an application
/// processor, so that a wake-up IPI can end its `hlt`.
pub fn init_ap() {
    let Some(t) = GDT.get() else { return };
    t.gdt.load();
    // SAFETY: same GDT and selectors as the BSP loaded; see `init_bsp`.
    unsafe {
        CS::set_reg(t.code);
        SS::set_reg(t.data);
        DS::set_reg(t.data);
        ES::set_reg(t.data);
    }
    let idt = AP_IDT.call_once(|| {
        let mut idt = InterruptDescriptorTable::new();
        // SAFETY: both handlers are the assembly stubs below, which end in iretq.
        unsafe {
            idt[WAKE_VECTOR].set_handler_addr(VirtAddr::new(wake_isr as *const () as u64));
            idt[SPURIOUS_VECTOR].set_handler_addr(VirtAddr::new(spurious_isr as *const () as u64));
        }
        idt
    });
    idt.load();
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
