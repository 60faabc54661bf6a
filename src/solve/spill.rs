//! Values moved out of memory while they are not needed, and read back exactly.
//!
//! α's values are not read while β is solved apart (β's checkpoints keep α's strategies,
//! not its values), yet on 8x8 they are gigabytes (KNPvK: 5.7 million positions of up to
//! 4,351 digits, 4 GB). They go to an unnamed temporary file, which the operating system
//! removes when it is closed, whatever ends the process: no file is left behind.
//!
//! The file holds, for each value, its numerator and denominator as little-endian bytes,
//! each after its length (u32, little-endian). Only this process reads it back, so it has
//! no header; a short read is an error, never a wrong value.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use num_bigint::BigUint;

use crate::value::shared::Denominators;
use crate::value::{Images, Value};

/// Bytes of the numerators and denominators of `values` (what their limbs hold).
pub fn value_bytes(values: &[Value]) -> u64 {
    values
        .iter()
        .map(|v| (v.numer().bits() + v.denom().bits()).div_ceil(8))
        .sum()
}

/// Values written out to an unnamed file; [`Spilled::back`] puts them back.
pub struct Spilled {
    file: File,
    len: usize,
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
        let len = values.len();
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let written = (|| {
            for v in &values {
                let denom = v.denom();
                for part in [v.numer(), &*denom] {
                    let bytes = part.to_bytes_le();
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
        drop(values);
        let file = w.into_inner().map_err(|e| e.into_error())?;
        Ok(Spilled { file, len })
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
            Ok(BigUint::from_bytes_le(&bytes))
        };
        let mut values = Vec::with_capacity(self.len);
        let denominators = Denominators::new();
        for _ in 0..self.len {
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
        spilled.back(&mut images).unwrap();
        assert_eq!(images.values(), &values[..]);
        let after: Vec<u64> = (0..4)
            .map(|i| crate::value::Imaged::head(&images, i))
            .collect();
        assert_eq!(heads, after);
        assert!(value_bytes(&values) > 300);
    }
}
