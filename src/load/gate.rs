//! The byte budget between the reader and the parser threads: the reader waits while too many
//! bytes are queued or being parsed, so memory does not grow with the bundle when
//! decompression outruns parsing.

use std::sync::Mutex;

/// Bytes of bundle content queued or being parsed at once (one larger file still passes
/// alone).
pub(super) const IN_FLIGHT_BYTES: usize = 8 << 20;

/// A byte budget shared by the reader and the parser threads.
pub(super) struct Gate {
    pub(super) used: Mutex<usize>,
    pub(super) freed: std::sync::Condvar,
    pub(super) budget: usize,
}

impl Gate {
    pub(super) fn new(budget: usize) -> Gate {
        Gate {
            used: Mutex::new(0),
            freed: std::sync::Condvar::new(),
            budget,
        }
    }

    /// Waits until `size` more bytes fit, or nothing is in flight.
    pub(super) fn acquire(&self, size: usize) {
        let Ok(mut used) = self.used.lock() else {
            return;
        };
        while *used > 0 && *used + size > self.budget {
            used = match self.freed.wait(used) {
                Ok(g) => g,
                Err(_) => return,
            };
        }
        *used += size;
    }

    pub(super) fn release(&self, size: usize) {
        if let Ok(mut used) = self.used.lock() {
            *used = used.saturating_sub(size);
        }
        self.freed.notify_all();
    }
}
