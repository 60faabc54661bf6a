//! The one reading of a stored position: [`Table::known`] gives its α, β and levels in the
//! closures T and T′ as a [`Known`], and [`Table::glance`] their shadows as a [`Glance`],
//! for every reader alike (the generator's exits, `verify`'s exits and the probe). Where
//! α = β the table stores one rank and β is α's value; the colour mirror is
//! [`Known::mirrored`]. How each distinct value is decoded is the reader's [`Decode`]:
//! straight from the file, or once for the many exits that share it.

use super::{ReadOnce, Table};
use crate::boundary::{Glance, Known};
use crate::error::Error;
use crate::value::Value;

/// How a reader decodes the dictionary entry of a rank.
pub trait Decode {
    /// The value of dictionary entry `rank` of `table`.
    fn value(&self, table: &Table, rank: usize) -> Result<Value, Error>;

    /// Its shadow (f64, within 2⁻⁵⁰), its digits not kept: by default the value as stored,
    /// decoded and let go.
    fn shadow(&self, table: &Table, rank: usize) -> Result<f64, Error> {
        Ok(table.dictionary_value_as_stored(rank)?.to_f64())
    }
}

/// Each value decoded from the file when it is asked for, in lowest terms
/// ([`Table::dictionary_value`]): the probe's way.
pub struct FromFile;

impl Decode for FromFile {
    fn value(&self, table: &Table, rank: usize) -> Result<Value, Error> {
        table.dictionary_value(rank)
    }
}

/// Each value decoded once, as stored, for every reader that asks for it.
impl Decode for ReadOnce {
    fn value(&self, table: &Table, rank: usize) -> Result<Value, Error> {
        ReadOnce::value(self, table, rank)
    }

    fn shadow(&self, table: &Table, rank: usize) -> Result<f64, Error> {
        ReadOnce::shadow(self, table, rank)
    }
}

impl Table {
    /// What position `i` says: its α and β (β's rank read only where it differs from α's)
    /// and its levels in T and T′ ([`super::UNREACHED`] outside them), decoded by `decode`.
    pub fn known(&self, i: usize, decode: &impl Decode) -> Result<Known, Error> {
        let (a, b) = self.ranks(i)?;
        let (a, b) = (a as usize, b as usize);
        let alpha = decode.value(self, a)?;
        Ok(Known {
            beta: if a == b {
                alpha.clone()
            } else {
                decode.value(self, b)?
            },
            alpha,
            level_white: self.level_white(i)?,
            level_black: self.level_black(i)?,
        })
    }

    /// Position `i`'s values seen from afar: their shadows and its levels.
    pub fn glance(&self, i: usize, decode: &impl Decode) -> Result<Glance, Error> {
        let (a, b) = self.ranks(i)?;
        let (a, b) = (a as usize, b as usize);
        let alpha = decode.shadow(self, a)?;
        Ok(Glance {
            alpha,
            beta: if a == b {
                alpha
            } else {
                decode.shadow(self, b)?
            },
            level_white: self.level_white(i)?,
            level_black: self.level_black(i)?,
        })
    }
}
