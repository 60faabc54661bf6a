//! The refinement's approximation `y` of `L·x·2^k`, grown every round by
//! `y ← 2^step · y + dy` without touching its long part every round: the corrections of
//! recent rounds wait as 128-bit integers, are summed into a short block every
//! [`RECENT_BITS`], and the block is added to the long part every [`FOLD_BITS`]. A round
//! then costs time in the size of its corrections, not of the whole approximation.

use num_bigint::BigInt;
use num_traits::Zero;
use rayon::prelude::*;

use super::short::{Corrections, add_i128, from_twos_complement, shift_left};

/// The bits of short corrections kept before they are summed into the block.
const RECENT_BITS: u64 = 960;

/// Limbs of the sum of one row's recent corrections: [`RECENT_BITS`], one more step, the
/// 128 bits of a correction, and a sign.
const RECENT_LIMBS: usize = (RECENT_BITS as usize + 64 + 128) / 64 + 1;

/// The block is added to the long part once it holds this many bits (each addition
/// copies the long part: on 8x8 KNvKN's largest system, 246,028 rows of up to 130,000
/// bits, a block of 1,024 bits made the additions 44 s of its 305).
const FOLD_BITS: u64 = 8192;

/// Rows whose recent corrections are summed together (their sums, 136 bytes each, stay
/// in the cache while the rounds are read).
const FLUSH_ROWS: usize = 256;

/// `y = (high · 2^block_bits + block) · 2^recent.bits + Σ recent`.
pub(super) struct Approximation {
    high: Vec<BigInt>,
    block: Vec<BigInt>,
    block_bits: u64,
    recent: Recent,
}

impl Approximation {
    pub(super) fn new(y: Vec<BigInt>) -> Approximation {
        let m = y.len();
        Approximation {
            high: y,
            block: vec![BigInt::zero(); m],
            block_bits: 0,
            recent: Recent::new(m),
        }
    }

    /// `y ← 2^step · y + dy`.
    pub(super) fn add(&mut self, dy: Corrections, step: u64) {
        match dy {
            Corrections::Short(dy) => {
                if !self.recent.has_room(step) {
                    self.recent.flush(&mut self.block, &mut self.block_bits);
                }
                self.recent.push(dy, step);
            }
            Corrections::Long(dy) => {
                self.recent.flush(&mut self.block, &mut self.block_bits);
                self.block.par_iter_mut().zip(&dy).for_each(|(b, dyi)| {
                    *b <<= step;
                    *b += dyi;
                });
                self.block_bits += step;
            }
        }
        if self.block_bits >= FOLD_BITS {
            self.fold();
        }
    }

    /// Everything into the long part.
    fn fold(&mut self) {
        self.recent.flush(&mut self.block, &mut self.block_bits);
        let bits = self.block_bits;
        self.high
            .par_iter_mut()
            .zip(self.block.par_iter_mut())
            .for_each(|(h, b)| {
                *h = (&*h << bits) + std::mem::take(b);
            });
        self.block_bits = 0;
    }

    /// The whole `y`.
    pub(super) fn whole(&mut self) -> &[BigInt] {
        self.fold();
        &self.high
    }

    /// The whole `y`, taken (for a state handed over).
    pub(super) fn take(mut self) -> Vec<BigInt> {
        self.fold();
        self.high
    }
}

/// The short corrections of the last rounds, kept until they are summed into the block
/// together (one long addition a row every [`RECENT_BITS`] instead of one a round).
struct Recent {
    m: usize,
    /// Round by round, every row's correction.
    values: Vec<i128>,
    /// Each round's step.
    steps: Vec<u64>,
    /// The steps' sum.
    bits: u64,
}

impl Recent {
    fn new(m: usize) -> Recent {
        Recent {
            m,
            values: Vec::new(),
            steps: Vec::new(),
            bits: 0,
        }
    }

    /// Whether a round of `step` bits may still be kept.
    fn has_room(&self, step: u64) -> bool {
        self.bits + step <= RECENT_BITS
    }

    /// Keep a round's corrections.
    fn push(&mut self, dy: Vec<i128>, step: u64) {
        debug_assert!(self.has_room(step) && dy.len() == self.m);
        self.values.extend(dy);
        self.steps.push(step);
        self.bits += step;
    }

    /// `block ← 2^bits · block + Σ_r dy_r · 2^(the steps after r)`, what the rounds would
    /// have made one by one (`block ← 2^step · block + dy`); nothing is kept after.
    fn flush(&mut self, block: &mut [BigInt], block_bits: &mut u64) {
        if self.steps.is_empty() {
            return;
        }
        let (m, values, steps, bits) = (self.m, &self.values, &self.steps, self.bits);
        // Rows a chunk at a time, each round's corrections of the chunk read together (the
        // rounds are stored one after the other: reading a row's alone would miss the
        // cache once a round).
        block
            .par_chunks_mut(FLUSH_ROWS)
            .enumerate()
            .for_each(|(c, rows)| {
                let first = c * FLUSH_ROWS;
                // Below 2^(RECENT_BITS + 125) in magnitude: the corrections are below 2^124.
                let mut sums = vec![[0u64; RECENT_LIMBS]; rows.len()];
                for (r, &step) in steps.iter().enumerate() {
                    let round = &values[r * m + first..r * m + first + rows.len()];
                    for (sum, &v) in sums.iter_mut().zip(round) {
                        shift_left(sum, step as u32);
                        add_i128(sum, v);
                    }
                }
                for (b, sum) in rows.iter_mut().zip(&sums) {
                    *b <<= bits;
                    *b += from_twos_complement(sum);
                }
            });
        *block_bits += bits;
        self.values.clear();
        self.steps.clear();
        self.bits = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::One;

    /// Short and long corrections of every size and sign, added round by round, give the
    /// `y` of the plain recurrence, read at any round.
    #[test]
    fn the_approximation_is_the_plain_recurrence() {
        let m = 3;
        let mut y = Approximation::new(vec![BigInt::from(5), BigInt::zero(), -BigInt::one()]);
        let mut want = vec![BigInt::from(5), BigInt::zero(), -BigInt::one()];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for round in 0..300u64 {
            let step = 1 + round % 48;
            let dy: Vec<i128> = (0..m)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let v = ((x as i128) << 59) ^ (x as i128);
                    let v = v >> (round % 120);
                    if (i as u64 + round).is_multiple_of(3) {
                        -v
                    } else {
                        v
                    }
                })
                .collect();
            // Now and then a round of long corrections.
            let long = round % 37 == 5;
            let plain: Vec<BigInt> = dy
                .iter()
                .map(|&v| BigInt::from(v) << if long { 200 } else { 0 })
                .collect();
            for (w, d) in want.iter_mut().zip(&plain) {
                *w = (&*w << step) + d;
            }
            y.add(
                if long {
                    Corrections::Long(plain)
                } else {
                    Corrections::Short(dy)
                },
                step,
            );
            if round % 50 == 49 {
                assert_eq!(y.whole(), &want[..], "round {round}");
            }
        }
        assert!(want.iter().any(|v| v.bits() > 5000));
        assert!(want.iter().any(|v| v < &BigInt::zero()));
        assert_eq!(y.take(), want);
    }
}
