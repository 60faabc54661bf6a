//! Values moved out of memory, and read back exactly.
//!
//! - [`Shelf`]: numerators moved out of the heap for good, into unnamed temporary files
//!   mapped back read-only ([`Value::paged`]): the operating system keeps them in its page
//!   cache while there is room and reads them back from disk when there is not. On 8x8
//!   KNvKP the values' numerators are 16 GB (5.7 million positions of up to 21,853
//!   digits), more than the machine has beside the rest of the job.
//! - [`Spilled`]: held values moved out while they are not read at all.
//!
//! α's values are not read while β is solved apart (β's checkpoints keep α's strategies,
//! not its values), yet on 8x8 they are gigabytes (KNPvK: 5.7 million positions of up to
//! 4,351 digits, 4 GB). They go to an unnamed temporary file, which the operating system
//! removes when it is closed, whatever ends the process: no file is left behind.
//!
//! The file holds, for each value, its numerator and denominator as little-endian bytes,
//! each after its length (u32, little-endian). Only this process reads it back, so it has
//! no header; a short read is an error, never a wrong value.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use num_bigint::BigUint;
use zerocopy::FromBytes;

use crate::value::shared::Denominators;
use crate::value::{Images, Key, Pages, Value};

/// Bytes of the numerators held on the heap and of the denominators of `values` (what
/// their limbs hold; paged numerators do not count).
pub fn value_bytes(values: &[Value]) -> u64 {
    values
        .iter()
        .map(|v| (held_numer_bits(v) + v.denom().bits()).div_ceil(8))
        .sum()
}

/// Bits of `v`'s numerator if it is held on the heap, else 0.
fn held_numer_bits(v: &Value) -> u64 {
    if v.is_paged() { 0 } else { v.numer_bits() }
}

/// When and where an exact evaluation moves the numerators of the values it has solved
/// out of the heap (see [`Shelf`]).
#[derive(Clone, Debug)]
pub struct Filing {
    /// The directory of the unnamed temporary files.
    pub dir: PathBuf,
    /// Numerators are moved once those solved hold more than this many bytes (the first
    /// ones stay on the heap: small jobs never touch the disk).
    pub above: u64,
}

/// Numerators moved at a time: one file each.
const BATCH_BYTES: u64 = 256 << 20;

/// A file of numerators, mapped read-only.
struct Segment(Mmap);

impl Pages for Segment {
    fn limbs(&self) -> &[u64] {
        <[u64]>::ref_from_bytes(&self.0[..]).expect("a page-aligned mapping of whole limbs")
    }
}

/// Numerators moved out of the heap into unnamed temporary files (removed by the
/// operating system when the last value reading them is dropped, or the process ends,
/// however it ends), each mapped back read-only. The values keep their denominators and
/// compare in place; their numerators are copied out only where a number is needed.
pub struct Shelf {
    filing: Filing,
    /// Bytes of the numerators noted so far.
    noted: u64,
    /// Positions noted since the last move, and their numerators' bytes.
    pending: Vec<u32>,
    pending_bytes: u64,
    /// Bytes moved so far.
    moved: u64,
    /// The positions whose numerators were moved, by a fingerprint of their values
    /// ([`fingerprint`]): a value solved again at another position (many positions share
    /// one) takes the copy moved before instead of pages of its own.
    seen: HashMap<u64, u32>,
    /// Values that took a copy moved before.
    copies: u64,
}

/// A hash of `v` for [`Shelf`]'s lookup of equal values: its [`Key`]'s (the lengths and
/// outer limbs of its numerator and odd part, its power of two). Equal values have equal
/// fingerprints; values with equal fingerprints are compared.
fn fingerprint(v: &Value) -> u64 {
    use std::hash::BuildHasher;
    std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
        .hash_one(Key(v))
}

impl Shelf {
    /// A shelf moving numerators as `filing` says.
    pub fn new(filing: Filing) -> Shelf {
        Shelf {
            filing,
            noted: 0,
            pending: Vec::new(),
            pending_bytes: 0,
            moved: 0,
            seen: HashMap::new(),
            copies: 0,
        }
    }

    /// Bytes of numerators moved out so far.
    pub fn moved(&self) -> u64 {
        self.moved
    }

    /// Values that took the copy of an equal value moved before, instead of pages of
    /// their own.
    pub fn copies(&self) -> u64 {
        self.copies
    }

    /// Note that `positions` of `x` have their values: once the values noted hold more
    /// than the filing's threshold, the numerators of those noted after it are moved out,
    /// a batch at a time.
    pub fn note(&mut self, x: &mut [Value], positions: &[u32]) -> io::Result<()> {
        for &p in positions {
            // A copy of a value held elsewhere (the other bound's) is not this
            // evaluation's to move.
            if !x[p as usize].is_only_copy() {
                continue;
            }
            let bytes = held_numer_bits(&x[p as usize]).div_ceil(8);
            self.noted += bytes;
            if self.noted > self.filing.above && bytes > 0 {
                self.pending.push(p);
                self.pending_bytes += bytes;
            }
        }
        if self.pending_bytes >= BATCH_BYTES {
            self.flush(x)?;
        }
        Ok(())
    }

    /// Move out the numerators noted and not moved yet.
    pub fn flush(&mut self, x: &mut [Value]) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        self.moved += self.put(x, &pending)?;
        Ok(())
    }

    /// Move the numerators of `x[p]` for `p` in `which` (those held, not 0, and not shared
    /// with a value held elsewhere) to one new file, each value once: one equal to a
    /// value moved before takes its copy. Returns the bytes written.
    pub fn put(&mut self, x: &mut [Value], which: &[u32]) -> io::Result<u64> {
        let mut chosen: Vec<usize> = Vec::new();
        // (position, the position of the equal value moved)
        let mut copies: Vec<(usize, usize)> = Vec::new();
        for p in which.iter().map(|&p| p as usize) {
            let v = &x[p];
            if v.is_paged() || v.is_zero() || !v.is_only_copy() {
                continue;
            }
            match self.seen.entry(fingerprint(v)) {
                Entry::Occupied(e) if *e.get() as usize != p && x[*e.get() as usize] == *v => {
                    copies.push((p, *e.get() as usize));
                }
                Entry::Occupied(_) => chosen.push(p),
                Entry::Vacant(e) => {
                    e.insert(p as u32);
                    chosen.push(p);
                }
            }
        }
        self.copies += copies.len() as u64;
        let written = self.write(x, &chosen)?;
        for (p, q) in copies {
            x[p] = x[q].clone();
        }
        Ok(written)
    }

    /// Move the numerators of `x[p]` for `p` in `chosen` to one new file; returns their
    /// bytes.
    fn write(&self, x: &mut [Value], chosen: &[usize]) -> io::Result<u64> {
        if chosen.is_empty() {
            return Ok(0);
        }
        let file = tempfile::tempfile_in(&self.filing.dir)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut places = Vec::with_capacity(chosen.len());
        let mut start = 0usize;
        for &p in chosen {
            let digits = x[p].numer_digits();
            for limb in digits.iter() {
                // Read back by this process alone, as native limbs.
                w.write_all(&limb.to_ne_bytes())?;
            }
            places.push((start, digits.len()));
            start += digits.len();
        }
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_data().ok();
        // SAFETY: the file is unnamed and private to this process (no one else can change
        // it under the mapping), and nothing writes to it again.
        let map = unsafe { Mmap::map(&file) }?;
        // The values are read in no order the file knows (a position's successors, the
        // table's values in increasing order): no read-ahead. This machine's disk reads
        // 8 MiB ahead of a fault, and writing 6x6 KBNvKN's table, its 40 GB of pages
        // beyond the page cache, read 1 GB/s from disk to serve 256 faults a second.
        #[cfg(unix)]
        map.advise(memmap2::Advice::Random).ok();
        let pages: Arc<dyn Pages> = Arc::new(Segment(map));
        for (&p, (start, len)) in chosen.iter().zip(places) {
            x[p] = std::mem::take(&mut x[p]).paged(pages.clone(), start, len);
        }
        Ok(start as u64 * 8)
    }
}

/// Values written out to an unnamed file; [`Spilled::back`] puts them back. Values whose
/// numerators are paged already ([`Shelf`]) stay where they are: on the heap they hold
/// little, and read back from the file they would be held whole.
pub struct Spilled {
    file: File,
    /// The paged values, in place; None where a value went to the file.
    stayed: Vec<Option<Value>>,
    /// The bytes written to the file.
    written: u64,
}

impl Spilled {
    /// Move the values of `images` to an unnamed file in `dir` (the system's temporary
    /// directory if None), leaving its fixed-point images in place.
    pub fn out(images: &mut Images, dir: Option<&Path>) -> io::Result<Spilled> {
        let file = match dir {
            Some(dir) => tempfile::tempfile_in(dir)?,
            None => tempfile::tempfile()?,
        };
        let values = images.take_values();
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let written = (|| {
            let mut bytes = Vec::new();
            for v in values.iter().filter(|v| !v.is_paged()) {
                for part in [v.numer(), v.denom()] {
                    bytes.clear();
                    crate::value::bytes::append_le_bytes(&part, &mut bytes);
                    let n = u32::try_from(bytes.len())
                        .map_err(|_| io::Error::other("a value too large to spill"))?;
                    w.write_all(&n.to_le_bytes())?;
                    w.write_all(&bytes)?;
                }
            }
            w.flush()
        })();
        if let Err(e) = written {
            // The values stay where they were: nothing is lost.
            images.restore_values(values);
            return Err(e);
        }
        let stayed = values
            .into_iter()
            .map(|v| v.is_paged().then_some(v))
            .collect();
        let file = w.into_inner().map_err(|e| e.into_error())?;
        let written = file.metadata()?.len();
        Ok(Spilled {
            file,
            stayed,
            written,
        })
    }

    /// The values that stayed where they were (those whose numerators are paged), by
    /// node; None where a value went to the file.
    pub fn paged_values(&self) -> Vec<Option<Value>> {
        self.stayed.clone()
    }

    /// The bytes of the file: the numerators and denominators of the values not paged
    /// (a paged value stays where it is, in its own file), each whole.
    pub fn bytes(&self) -> u64 {
        self.written
    }

    /// Read the values back into `images` (the one they came from); the file goes away.
    pub fn back(mut self, images: &mut Images) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(0))?;
        let mut r = BufReader::with_capacity(1 << 20, self.file);
        let mut part = || -> io::Result<BigUint> {
            let mut n = [0u8; 4];
            r.read_exact(&mut n)?;
            let mut bytes = vec![0u8; u32::from_le_bytes(n) as usize];
            r.read_exact(&mut bytes)?;
            Ok(crate::value::bytes::from_le_bytes(&bytes))
        };
        let mut values = Vec::with_capacity(self.stayed.len());
        let denominators = Denominators::new();
        for stayed in self.stayed {
            if let Some(v) = stayed {
                values.push(v);
                continue;
            }
            let numer = part()?;
            let denom = part()?;
            // Written from values in lowest terms: read back as they were, each
            // denominator once.
            values.push(denominators.share(Value::new_raw(numer, denom)));
        }
        images.restore_values(values);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_values_come_back_exactly() {
        let big = Value::new(
            BigUint::from(3u8).pow(900),
            BigUint::from(2u8).pow(1500) + 7u8,
        );
        let values = vec![Value::zero(), Value::one(), Value::small(1, 3), big];
        let mut images = Images::of(values.clone());
        let heads: Vec<u64> = (0..4)
            .map(|i| crate::value::Imaged::head(&images, i))
            .collect();
        let spilled = Spilled::out(&mut images, Some(&std::env::temp_dir())).unwrap();
        assert!(images.values().is_empty());
        // Each value's numerator and denominator, each after its length.
        let whole: usize = values
            .iter()
            .flat_map(|v| [v.numer(), v.denom()])
            .map(|part| {
                let mut bytes = Vec::new();
                crate::value::bytes::append_le_bytes(&part, &mut bytes);
                4 + bytes.len()
            })
            .sum();
        assert_eq!(spilled.bytes(), whole as u64);
        spilled.back(&mut images).unwrap();
        assert_eq!(images.values(), &values[..]);
        let after: Vec<u64> = (0..4)
            .map(|i| crate::value::Imaged::head(&images, i))
            .collect();
        assert_eq!(heads, after);
        assert!(value_bytes(&values) > 300);
    }

    /// Values of many sizes, an equal pair, zero, one and a shared copy.
    fn assorted() -> Vec<Value> {
        let den = BigUint::from(3u8).pow(700) + 2u8;
        let mut values = vec![Value::zero(), Value::one(), Value::small(1, 3)];
        for k in [1u32, 2, 5, 64, 65, 400, 1000] {
            let numer = (&den >> (1100 - k)) + k;
            values.push(Value::new(numer, den.clone()));
        }
        // Numerators of one length whose low limbs order them the other way round.
        let top = BigUint::from(1u8) << 100u8;
        values.push(Value::new(&top + 5u8, den.clone()));
        values.push(Value::new(
            &top + (BigUint::from(1u8) << 70u8) + 1u8,
            den.clone(),
        ));
        values.push(values[6].clone());
        values.push(Value::new(
            (&den >> 3u8) + 1u8,
            &den * BigUint::from(2u8).pow(40),
        ));
        values.push(values.last().unwrap().clone());
        values
    }

    /// Paged values are the same values: equal, ordered, hashed, read, shown, serialized
    /// and imaged as they were held; only values held nowhere else and not 0 move.
    #[test]
    fn paged_values_are_the_same_values() {
        let held = assorted();
        // Fresh copies (not clones of `held`): those are the only copies.
        let mut x: Vec<Value> = held
            .iter()
            .map(|v| Value::new(v.numer().into_owned(), v.denom().into_owned()))
            .collect();
        let (a, b) = (x.len() - 2, x.len() - 1);
        x[b] = x[a].clone();
        let dir = tempfile::tempdir().unwrap();
        let mut shelf = Shelf::new(Filing {
            dir: dir.path().to_path_buf(),
            above: 0,
        });
        let all: Vec<u32> = (0..x.len() as u32).collect();
        shelf.note(&mut x, &all).unwrap();
        shelf.flush(&mut x).unwrap();
        assert!(shelf.moved() > 0);
        for (i, v) in x.iter().enumerate() {
            let moved = !(v.is_zero() || i == a || i == b);
            assert_eq!(v.is_paged(), moved, "{i}");
        }
        // Nothing named is left in the directory: the files are unnamed.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let key = |v: &Value| {
            use std::hash::{BuildHasher, RandomState};
            static STATE: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
            STATE
                .get_or_init(RandomState::new)
                .hash_one(crate::value::Key(v))
        };
        for (i, (p, h)) in x.iter().zip(&held).enumerate() {
            assert_eq!(p, h, "{i}");
            assert_eq!(p.numer(), h.numer(), "{i}");
            assert_eq!(p.numer_bits(), h.numer_bits(), "{i}");
            assert_eq!(p.numer_digits(), h.numer_digits(), "{i}");
            assert_eq!(p.to_string(), h.to_string(), "{i}");
            assert_eq!(p.to_f64(), h.to_f64(), "{i}");
            assert_eq!(p.is_one(), h.is_one(), "{i}");
            assert_eq!(p.complement(), h.complement(), "{i}");
            assert_eq!(key(p), key(h), "{i}");
            assert_eq!(
                crate::value::fixed_point(p, 5),
                crate::value::fixed_point(h, 5)
            );
            assert_eq!(
                postcard::to_allocvec(p).unwrap(),
                postcard::to_allocvec(h).unwrap()
            );
            for (j, (q, g)) in x.iter().zip(&held).enumerate() {
                assert_eq!(p.cmp(q), h.cmp(g), "{i} {j}");
                assert_eq!(p == q, h == g, "{i} {j}");
                assert_eq!(p.cmp(g), h.cmp(g), "{i} {j}");
            }
        }
        // α's values spilled with paged ones among them: the paged stay paged.
        let mut images = Images::of(x.clone());
        drop(x);
        let spilled = Spilled::out(&mut images, Some(dir.path())).unwrap();
        spilled.back(&mut images).unwrap();
        assert_eq!(images.values(), &held[..]);
        assert!(images.values()[5].is_paged());
    }

    /// A value equal to one moved before, in its batch or an earlier one, takes its pages:
    /// each numerator is written once. A value that only looks alike (the same length
    /// and outer limbs, another middle) gets pages of its own.
    #[test]
    fn equal_values_are_moved_once() {
        let den = BigUint::from(3u8).pow(700) + 2u8;
        let numer = &den >> 3u8;
        let alike = &numer + (BigUint::from(1u8) << 500u32);
        let fresh = |n: &BigUint| Value::new(n.clone(), den.clone());
        let want = vec![fresh(&numer), fresh(&alike), fresh(&numer), fresh(&numer)];
        assert_ne!(want[0], want[1]);
        assert_eq!(fingerprint(&want[0]), fingerprint(&want[1]));
        let mut x: Vec<Value> = [&numer, &alike, &numer, &numer]
            .iter()
            .map(|n| fresh(n))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let mut shelf = Shelf::new(Filing {
            dir: dir.path().to_path_buf(),
            above: 0,
        });
        shelf.note(&mut x, &[0, 1, 2]).unwrap();
        shelf.flush(&mut x).unwrap();
        shelf.note(&mut x, &[3]).unwrap();
        shelf.flush(&mut x).unwrap();
        assert_eq!(x, want);
        assert!(x.iter().all(Value::is_paged));
        assert_eq!(shelf.copies(), 2);
        let bytes = |v: &Value| 8 * v.numer_digits().len() as u64;
        assert_eq!(shelf.moved(), bytes(&want[0]) + bytes(&want[1]));
        // Positions 0, 2 and 3 hold one value; 1 its own.
        let only: Vec<bool> = x.iter().map(Value::is_only_copy).collect();
        assert_eq!(only, [false, true, false, false]);
    }

    /// A directory that cannot take the file is an error naming the cause, and the values
    /// stay held and whole.
    #[test]
    fn an_unwritable_directory_is_an_error_and_loses_nothing() {
        let mut x = assorted();
        // Copies, not clones: the values of `x` are their only copies.
        let want: Vec<Value> = x
            .iter()
            .map(|v| Value::new(v.numer().into_owned(), v.denom().into_owned()))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let mut shelf = Shelf::new(Filing {
            dir: dir.path().join("missing"),
            above: 0,
        });
        let all: Vec<u32> = (0..x.len() as u32).collect();
        shelf.note(&mut x, &all).unwrap();
        let e = shelf.flush(&mut x).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        assert!(x.iter().all(|v| !v.is_paged()));
        assert_eq!(x, want);
    }

    /// Below the threshold nothing moves; past it, what is noted after it does.
    #[test]
    fn the_first_bytes_stay_held() {
        let mut x = assorted();
        let x0 = x.clone();
        drop(x0);
        let dir = tempfile::tempdir().unwrap();
        let mut shelf = Shelf::new(Filing {
            dir: dir.path().to_path_buf(),
            above: 1 << 20,
        });
        let all: Vec<u32> = (0..x.len() as u32).collect();
        shelf.note(&mut x, &all).unwrap();
        shelf.flush(&mut x).unwrap();
        assert_eq!(shelf.moved(), 0);
        assert!(x.iter().all(|v| !v.is_paged()));
        let mut shelf = Shelf::new(Filing {
            dir: dir.path().to_path_buf(),
            above: 100,
        });
        shelf.note(&mut x, &all[..6]).unwrap();
        shelf.note(&mut x, &all[6..]).unwrap();
        shelf.flush(&mut x).unwrap();
        // 3^700 has 1,110 bits: the numerators up to the 400-bit one hold about 80 bytes,
        // the next 127.
        assert!(x[..9].iter().all(|v| !v.is_paged()));
        assert!(x[9].is_paged());
    }
}
