//! A small discrete-event queue in virtual nanoseconds.
//!
//! Why not a simulation framework such as `nexosim`: a bring-up has one blocking
//! process (the boot CPU walking the hotplug states) and a handful of event kinds
//! raised by the APs (alive, calibrated). An actor framework with async models,
//! mailboxes and a multi-threaded executor would add compile time and scheduling
//! machinery, and would make bit-identical replay depend on its executor; a binary
//! heap keyed by `(time, sequence)` gives a total, deterministic order in a few
//! lines and runs 16384 CPUs' events in well under a millisecond.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Virtual time, in nanoseconds since the start of secondary bring-up.
pub type Nanos = u64;

/// Events raised by application processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The AP at this index of the bring-up order runs kernel code and can report in.
    Alive(u32),
    /// The AP finished a delay calibration that runs after it went online.
    Calibrated(u32),
}

/// The queue: pending events ordered by time, ties broken by insertion order, so
/// that a run is a pure function of its inputs. Generic over the event type so
/// other simulations (task placement, crates/place) share it; bring-up uses [`Event`].
#[derive(Debug)]
pub struct Queue<E: Ord = Event> {
    heap: BinaryHeap<Reverse<(Nanos, u64, E)>>,
    seq: u64,
    now: Nanos,
}

impl<E: Ord> Default for Queue<E> {
    fn default() -> Self {
        Queue {
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
        }
    }
}

impl<E: Ord> Queue<E> {
    /// An empty queue at time 0.
    pub fn new() -> Queue<E> {
        Queue::default()
    }

    /// Current virtual time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Moves the clock forward by `ns` of work done by the running process
    /// (without delivering events: the process is busy).
    pub fn advance(&mut self, ns: Nanos) {
        self.now += ns;
    }

    /// Schedules `event` at absolute time `at` (never before now).
    pub fn schedule(&mut self, at: Nanos, event: E) {
        let at = at.max(self.now);
        self.heap.push(Reverse((at, self.seq, event)));
        self.seq += 1;
    }

    /// Delivers the earliest pending event, moving the clock to its time if that is
    /// later than now (events due while the process was busy are delivered "late",
    /// at the current time, as a polling boot CPU would notice them).
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let Reverse((at, _, ev)) = self.heap.pop()?;
        self.now = self.now.max(at);
        Some((at, ev))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_time_then_insertion_order() {
        let mut q = Queue::new();
        q.schedule(30, Event::Alive(3));
        q.schedule(10, Event::Alive(1));
        q.schedule(10, Event::Calibrated(0));
        q.schedule(20, Event::Alive(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (10, Event::Alive(1)),
                (10, Event::Calibrated(0)),
                (20, Event::Alive(2)),
                (30, Event::Alive(3)),
            ]
        );
        assert_eq!(q.now(), 30);
    }

    #[test]
    fn late_events_do_not_move_the_clock_back() {
        let mut q = Queue::new();
        q.schedule(5, Event::Alive(0));
        q.advance(100);
        assert_eq!(q.pop(), Some((5, Event::Alive(0))));
        assert_eq!(q.now(), 100);
        // Scheduling in the past clamps to now.
        q.schedule(1, Event::Alive(1));
        assert_eq!(q.pop(), Some((100, Event::Alive(1))));
    }
}
