//! The bytes a [`super::Table`] reads: a read-only memory map of its file (the contract of
//! [`super::Table::map`]), or bytes held in memory ([`super::Table::from_bytes`]). Both
//! are read as one `&[u8]`, through the same validation and the same checked reads.

use std::ops::{Deref, Range};

use memmap2::Mmap;

/// A table's bytes: mapped from its file, or in memory.
#[derive(Debug)]
pub(super) enum Source {
    /// A read-only map of the file, which must not change while it is mapped, with its
    /// registration for the SIGBUS handler (dropped first: the fields drop in order).
    Mapped(crate::mapguard::Guard, Mmap),
    /// Bytes in memory (a fuzz test's random file, a table made in memory).
    Memory(Box<[u8]>),
}

impl Deref for Source {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Source::Mapped(_, map) => map,
            Source::Memory(bytes) => bytes,
        }
    }
}

impl Source {
    /// A map of `map`, registered with the SIGBUS handler ([`crate::mapguard`]).
    pub(super) fn mapped(map: Mmap) -> Source {
        Source::Mapped(crate::mapguard::Guard::new(map.as_ptr(), map.len()), map)
    }

    /// Whether a read of the map faulted: the file was truncated under it
    /// ([`crate::mapguard`]).
    pub(super) fn poisoned(&self) -> bool {
        match self {
            Source::Mapped(guard, _) => guard.poisoned(),
            Source::Memory(_) => false,
        }
    }

    /// Bytes `range` are about to be read whole: a map asks for them in one request (a
    /// table read in no order would otherwise fault them in a page at a time). A refused
    /// hint only leaves the faults; bytes in memory need none.
    pub(super) fn will_need(&self, range: Range<usize>) {
        if let Source::Mapped(_, map) = self {
            let _ = map.advise_range(memmap2::Advice::WillNeed, range.start, range.len());
        }
    }

    /// Pages will be read in no order (see [`super::Table::advise_random`]).
    pub(super) fn advise_random(&self) {
        if let Source::Mapped(_, map) = self {
            // A failure leaves the default read-ahead, which is only slower.
            let _ = map.advise(memmap2::Advice::Random);
        }
    }

    /// Let go of the pages read (see [`super::Table::release_pages`]).
    pub(super) fn release_pages(&self) {
        if let Source::Mapped(_, map) = self {
            // SAFETY: the mapping is read-only and backed by the file (see `Table::map`):
            // dropping its pages only makes the next read fault them in again, with the
            // same bytes. A failure leaves the pages where they were, which is harmless.
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }
}
