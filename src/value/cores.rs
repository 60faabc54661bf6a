//! Long odd numbers gathered around common divisors (their *cores*).
//!
//! The long odd parts of a level's pending means (see [`super::arith::finish_means`])
//! are few numbers apart: on 8x8 KNvKP one level's 2,963 odd parts of about 63,000 bits
//! are all one number of 62,376 bits times a cofactor of at most about 2,000 bits (the
//! denominators below one large system, less the factors that cancelled on the way). A
//! gcd with `o = core · cofactor` is then one gcd with the core, taken for the many
//! numbers over it at once ([`super::long::gcds_with`]), and a short one with the
//! cofactor, where the odd parts one by one (or their rough parts) each paid a long gcd.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::long;

/// Numbers gathered by [`gather`]: the cores, and for each number its core and cofactor.
pub struct Cores {
    /// The cores: each divides every number placed with it.
    pub cores: Vec<BigUint>,
    /// For each number, in order: the index of its core and `number / core`; `None` for
    /// a number left alone (short, or sharing no long divisor with the cores).
    pub placed: Vec<Option<(usize, BigUint)>>,
}

/// At most this many cores are kept: a level's odd parts have been seen to share one.
const MAX_CORES: usize = 4;

/// At most this many long gcds are spent on finding the cores of one set of numbers (the
/// level measured above shrank its core 12 times); numbers met after the budget is spent
/// and divisible by no core are left alone.
const GCD_BUDGET: usize = 32;

/// A core may shrink to a gcd with a new number where it keeps all but this fraction of
/// its bits (1/16); a smaller gcd means the number belongs elsewhere.
const SHRINK_DIVISOR: u64 = 16;

/// The numbers (odd, of any length) gathered around at most [`MAX_CORES`] long common divisors. A number
/// divisible by a core is placed with it (one division, with a short quotient); one that
/// is not shrinks the first core whose gcd with it keeps nearly all of the core's bits
/// (every number placed with the core before is divisible by the gcd too); failing that
/// it seeds a core of its own while there is room. Numbers shorter than
/// [`long::LONG_GCD`] are left alone: their gcds are cheap one by one.
pub fn gather(numbers: &[&BigUint]) -> Cores {
    let mut cores: Vec<BigUint> = Vec::new();
    let mut core_of: Vec<Option<usize>> = vec![None; numbers.len()];
    let mut gcds_left = GCD_BUDGET;
    for (i, &n) in numbers.iter().enumerate() {
        if n.bits() < long::LONG_GCD {
            continue;
        }
        if let Some(k) = cores.iter().position(|c| divides(c, n)) {
            core_of[i] = Some(k);
            continue;
        }
        for (k, core) in cores.iter_mut().enumerate() {
            if gcds_left == 0 {
                break;
            }
            gcds_left -= 1;
            let g = long::gcd(core, n);
            if g.bits() >= long::LONG_GCD && g.bits() >= core.bits() - core.bits() / SHRINK_DIVISOR
            {
                *core = g;
                core_of[i] = Some(k);
                break;
            }
        }
        if core_of[i].is_none() && cores.len() < MAX_CORES {
            core_of[i] = Some(cores.len());
            cores.push(n.clone());
        }
    }
    let placed = numbers
        .iter()
        .zip(core_of)
        .map(|(&n, k)| k.map(|k| (k, long::div_exact(n, &cores[k]))))
        .collect();
    Cores { cores, placed }
}

/// Whether `d` (> 0) divides `n`.
fn divides(d: &BigUint, n: &BigUint) -> bool {
    n.bits() >= d.bits() && long::rem(n, d).is_zero()
}

/// `gcd(t, core · cofactor)` from `core_gcd = gcd(t, core)`: every factor that t shares
/// with the product divides `c = core_gcd · gcd(t, cofactor)`, so the gcd is
/// `gcd(gcd(t, c), o mod c)` for `o = core · cofactor`: short numbers where c is (nearly
/// always 1, and then there is nothing more to do).
pub fn gcd_through(t: &BigUint, o: &BigUint, core_gcd: BigUint, cofactor: &BigUint) -> BigUint {
    use super::arith::gcd;
    let c = if cofactor.is_one() {
        core_gcd
    } else {
        core_gcd * gcd(t, cofactor)
    };
    if c.is_one() {
        return c;
    }
    gcd(&gcd(t, &c), &(o % &c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_integer::Integer;

    fn odd(bits: u64, seed: u64) -> BigUint {
        long::test_number(bits, seed) | BigUint::one()
    }

    /// Numbers sharing a long core are placed with one core that divides them all, with
    /// their cofactors; unrelated and short numbers are left alone or seed cores of their
    /// own; and gcds through the core equal plain gcds, also where factors of the core,
    /// of the cofactor and of both cancel.
    #[test]
    fn gathered_gcds_equal_plain_gcds() {
        let core = odd(long::LONG_GCD + 700, 1);
        let (p, q) = (BigUint::from(1_000_003u32), BigUint::from(999_983u32));
        let numbers: Vec<BigUint> = vec![
            &core * &p * 3u8,
            &core * &q,
            &core * &p * &q * 5u8,
            &core * 7u8,
            odd(long::LONG_GCD + 900, 2),
            BigUint::from(3u8 * 5 * 7),
            &core * &q * 9u8,
        ];
        let refs: Vec<&BigUint> = numbers.iter().collect();
        let cores = gather(&refs);
        let first = cores.placed[0].as_ref().expect("placed").0;
        for i in [0, 1, 2, 3, 6] {
            let (k, cofactor) = cores.placed[i].as_ref().expect("placed");
            assert_eq!(*k, first, "number {i} with the others");
            assert_eq!(&cores.cores[*k] * cofactor, numbers[i], "cofactor {i}");
        }
        assert!(cores.cores[first].bits() >= core.bits(), "the core is long");
        assert!(cores.placed[5].is_none(), "a short number is left alone");
        assert_ne!(cores.placed[4].as_ref().map(|c| c.0), Some(first));
        let ts = [
            BigUint::one(),
            &p * &q * 21u8,
            core.clone(),
            &core * &q + &p,
            (&core / 3u8) * &p * 35u8,
            odd(long::LONG_GCD + 300, 9) * &q * 9u8,
        ];
        for (i, n) in numbers.iter().enumerate() {
            let Some((k, cofactor)) = &cores.placed[i] else {
                continue;
            };
            for t in &ts {
                let core_gcd = t.gcd(&cores.cores[*k]);
                assert_eq!(gcd_through(t, n, core_gcd, cofactor), t.gcd(n), "{i}");
            }
        }
    }

    /// A core shrinks to the gcd where a number shares nearly all of it, and every number
    /// placed before stays divisible.
    #[test]
    fn cores_shrink_to_what_all_share() {
        let core = odd(long::LONG_GCD * 2, 4);
        let f = BigUint::from(1_000_003u32);
        let numbers = [&core * &f * 11u8, &core * &f * 13u8, &core * 17u8];
        let refs: Vec<&BigUint> = numbers.iter().collect();
        let cores = gather(&refs);
        assert_eq!(cores.cores, vec![core.clone()]);
        for (n, placed) in numbers.iter().zip(&cores.placed) {
            let (k, cofactor) = placed.as_ref().expect("placed");
            assert_eq!(&cores.cores[*k] * cofactor, *n);
        }
    }
}
