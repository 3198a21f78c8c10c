//! The reader and the parser threads: the walk runs on the calling thread and hands units of
//! work to a pool, under a byte budget: the reader waits while too many bytes are queued or
//! being parsed, so memory does not grow with the bundle when decompression outruns parsing.

use std::path::Path;
use std::sync::Mutex;

use super::LoadConfig;
use crate::bundle::{self, Buffers, Entry, OpenError, WalkSummary};

/// Hands a unit of work and its size in bytes on to be run.
pub(super) type Sink<'a, U> = dyn FnMut(U, usize) + 'a;

/// Walks the bundle at `path` in pieces of `piece_bytes`; `route` turns each entry into units
/// of work, each with its size, and `run` does a unit: on `cfg.threads` pool threads under
/// the byte budget (a unit counts until `run` returns), or inline with one thread.
pub(super) fn walk_in_parallel<U: Send>(
    path: &Path,
    cfg: &LoadConfig,
    piece_bytes: usize,
    buffers: &Buffers,
    route: &mut dyn FnMut(Entry, &mut Sink<U>),
    run: &(dyn Fn(U) + Sync),
) -> Result<WalkSummary, OpenError> {
    let progress = cfg.progress.clone();
    let mut walk = |sink: &mut Sink<U>| {
        bundle::walk_in_pieces(
            path,
            &cfg.limits,
            piece_bytes,
            Some(buffers),
            &mut |entry| {
                if let Some(p) = &progress {
                    p(&entry.path, entry.bytes.len() as u64);
                }
                route(entry, sink);
            },
        )
    };
    if cfg.threads <= 1 {
        return walk(&mut |unit, _| run(unit));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads)
        .build()
        .map_err(|e| OpenError {
            path: path.to_path_buf(),
            reason: format!("cannot start {} parser threads: {e}", cfg.threads),
        })?;
    let in_flight = Gate::new(IN_FLIGHT_BYTES);
    pool.in_place_scope(|scope| {
        let in_flight = &in_flight;
        walk(&mut |unit, size| {
            in_flight.acquire(size);
            scope.spawn(move |_| {
                run(unit);
                in_flight.release(size);
            });
        })
    })
}

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
