//! Upgrading a table file in place to the version this build writes ([`upgrade`]).

use std::path::Path;

use rayon::prelude::*;

use crate::error::Error;
use crate::value::Value;

use super::header::{TableInfo, VERSION};
use super::read::Table;
use super::write::{Contents, write};

/// What [`upgrade`] did to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upgraded {
    /// The version the file had.
    pub from: u32,
    /// Its length before, in bytes.
    pub bytes_before: u64,
    /// Its length after (the same where it was already current).
    pub bytes_after: u64,
}

/// Rewrite the table at `path` in the current version ([`VERSION`]) if it is older (a
/// version 7 file, which stores means, is as current),
/// atomically: the same positions, values, levels and header facts, in the layout this
/// build writes, so that the file is the one this build would have generated. The new file
/// is read back and compared with the old one, still open, position by position and entry
/// by entry; if anything differs the old bytes are put back and the error says so. Holds
/// the old file's values decoded (8x8 KBvKN: 9.5 GB of digits).
pub fn upgrade(path: &Path) -> Result<Upgraded, Error> {
    let old = Table::open(path)?;
    let info = old.info().clone();
    let bytes_before = old.bytes.len() as u64;
    if info.version >= VERSION {
        return Ok(Upgraded {
            from: info.version,
            bytes_before,
            bytes_after: bytes_before,
        });
    }
    let dictionary: Vec<Value> = (0..info.dictionary_len)
        .into_par_iter()
        .map(|k| old.dictionary_value_as_stored(k))
        .collect::<Result<_, Error>>()?;
    let n = old.len();
    let mut keys = Vec::with_capacity(n);
    let (mut values, mut betas) = (Vec::with_capacity(n), Vec::new());
    let (mut levels_white, mut levels_black) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        keys.push(old.key(i)?);
        values.push(&dictionary[old.rank(i)? as usize]);
        if info.has_beta {
            betas.push(&dictionary[old.rank_beta(i)? as usize]);
        }
        levels_white.push(old.level_white(i)?);
        levels_black.push(old.level_black(i)?);
    }
    let contents = Contents {
        board: info.board,
        material: info.material,
        raw_positions: info.raw_positions,
        first_richman_iteration: info.first_richman_iteration,
        stable_at: info.stable_at,
        converged: info.converged,
        certified_alpha: info.certified_alpha,
        certified_beta: info.certified_beta,
        keys,
        values,
        values_beta: info.has_beta.then_some(betas),
        levels_white,
        levels_black,
        // Every value whole: which value is the mean of which needs the game (`bidtb
        // generate` writes them).
        means: Vec::new(),
    };
    write(path, &contents)?;
    drop(contents);
    let same = Table::open(path).and_then(|new| {
        let facts = |i: &TableInfo| {
            let mut i = i.clone();
            i.version = VERSION;
            i
        };
        new.check_all()?;
        let row = |t: &Table, i: usize| -> Result<[u64; 5], Error> {
            Ok([
                t.key(i)?,
                t.rank(i)?.into(),
                t.rank_beta(i)?.into(),
                t.level_white(i)?.into(),
                t.level_black(i)?.into(),
            ])
        };
        let rows = (0..n)
            .into_par_iter()
            .map(|i| Ok(row(&new, i)? == row(&old, i)?))
            .collect::<Result<Vec<bool>, Error>>()?
            .iter()
            .all(|&same| same);
        let entries = (0..info.dictionary_len)
            .into_par_iter()
            .map(|k| Ok(new.dictionary_value_as_stored(k)? == dictionary[k]))
            .collect::<Result<Vec<bool>, Error>>()?;
        Ok(
            (facts(&info) == *new.info() && rows && entries.iter().all(|&e| e))
                .then_some(new.bytes.len() as u64),
        )
    });
    match same {
        Ok(Some(bytes_after)) => Ok(Upgraded {
            from: info.version,
            bytes_before,
            bytes_after,
        }),
        other => {
            // The old file's map outlives its replacement: put its bytes back.
            crate::atomic::write_atomic(path, &old.bytes)?;
            let why = match other {
                Err(e) => format!("the rewritten file could not be read back ({e})"),
                Ok(_) => "the rewritten file differs from it".to_string(),
            };
            Err(Error::Table {
                path: path.display().to_string(),
                reason: format!("not upgraded, the file is as it was: {why}"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::*;
    use num_bigint::BigUint;

    #[test]
    fn an_upgraded_file_is_the_file_this_build_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KRvK.bidtb");
        let den = BigUint::from(3u8).pow(300) + 2u8;
        let mut alphas: Vec<Value> = (1..=9u32)
            .map(|k| Value::new(&den * k / 11u8, den.clone()))
            .collect();
        alphas.extend([v(0, 1), v(1, 2)]);
        let mut betas = alphas.clone();
        betas[3] = v(1, 1);
        for c in [contents(&alphas, None), contents(&alphas, Some(&betas))] {
            let current = encode(&c);
            let legacy = if c.values_beta.is_some() { 2 } else { 1 };
            for (old, from) in [
                (encode_v4(&c), 4),
                (encode_v3(&c), 3),
                (encode_legacy(&c), legacy),
            ] {
                std::fs::write(&path, &old).unwrap();
                let u = upgrade(&path).unwrap();
                assert_eq!(u.from, from);
                let sizes = (old.len() as u64, current.len() as u64);
                assert_eq!((u.bytes_before, u.bytes_after), sizes);
                assert_eq!(std::fs::read(&path).unwrap(), current);
                // A current file is left alone.
                let again = upgrade(&path).unwrap();
                assert_eq!(
                    (again.from, again.bytes_after),
                    (VERSION, current.len() as u64)
                );
            }
        }
        // A damaged file is refused and left as it was.
        let mut bad = encode_v3(&contents(&alphas, None));
        let last = bad.len() - 1;
        bad[last] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert!(upgrade(&path).unwrap_err().to_string().contains("checksum"));
        assert_eq!(std::fs::read(&path).unwrap(), bad);
    }
}
