//! Serial console (COM1 through `uart_16550`) and QEMU's isa-debug-exit device.

use core::fmt::{self, Write};
use spin::Mutex;
use uart_16550::SerialPort;
use x86_64::instructions::port::Port;

const COM1: u16 = 0x3f8;
/// I/O port of `-device isa-debug-exit,iobase=0xf4,iosize=4`.
const DEBUG_EXIT_PORT: u16 = 0xf4;
/// Written to the debug-exit port on success: QEMU exits with (0x10 << 1) | 1 = 33.
pub const EXIT_SUCCESS: u32 = 0x10;
/// Written on failure: QEMU exits with (0x11 << 1) | 1 = 35.
pub const EXIT_FAILURE: u32 = 0x11;

static SERIAL: Mutex<Option<SerialPort>> = Mutex::new(None);

/// Initialises COM1. Printing before this silently drops output.
pub fn init() {
    // SAFETY: 0x3f8 is COM1 on every PC-compatible machine QEMU emulates, and
    // nothing else in the kernel touches those ports.
    let mut port = unsafe { SerialPort::new(COM1) };
    port.init();
    *SERIAL.lock() = Some(port);
}

struct Console<'a>(&'a mut SerialPort);

impl Write for Console<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                self.0.send(b'\r');
            }
            self.0.send(b);
        }
        Ok(())
    }
}

/// Writes formatted text to the serial console, holding the lock for the whole
/// call so that lines from different CPUs never interleave.
pub fn print(args: fmt::Arguments) {
    if let Some(port) = SERIAL.lock().as_mut() {
        let _ = Console(port).write_fmt(args);
    }
}

/// Writes without taking the usual buffer path: for the panic handler, where the
/// lock may be held by the panicking CPU itself.
pub fn emergency_print(args: fmt::Arguments) {
    // SAFETY: forcibly unlocking is acceptable only because we are about to exit
    // QEMU; interleaved output is the worst case.
    unsafe { SERIAL.force_unlock() };
    print(args);
}

/// Exits QEMU through isa-debug-exit; halts if the device is absent.
pub fn exit(code: u32) -> ! {
    // SAFETY: writing the debug-exit port terminates QEMU; on a machine without
    // the device the write is ignored and we park below.
    unsafe { Port::<u32>::new(DEBUG_EXIT_PORT).write(code) };
    super::cpu::park()
}
