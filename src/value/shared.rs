//! One copy of each denominator's odd part for the many values that have it.
//!
//! A material's values share few denominators: the positions below a large system of the
//! exact evaluation inherit its denominator times powers of two (on 8x8 KRvKN 1,002,109
//! values have 79,145 denominators, KNNvK 914,176 values 46,971), and with four men they
//! have thousands of digits. A value holds its denominator as an odd part and a power of
//! two ([`Value::shared_odd`], [`Value::twos`]), so that the denominators d·2ᵏ of one
//! system share d. [`Denominators`] keeps the distinct odd parts it has seen and gives
//! each value it is shown the one copy of its odd part, so that what the values take is
//! about their numerators alone.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use num_bigint::BigUint;

use super::Value;

/// A denominator's odd part as a set key: hashed by its length and a few of its limbs (hashing
/// thousands of digits for every value would cost more than the sharing saves), equal by
/// every limb.
#[derive(Clone, PartialEq, Eq)]
struct Key(Arc<BigUint>);

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        super::hash_outer_limbs(self.0.iter_u64_digits(), 4, state);
    }
}

/// The distinct denominators seen so far, each held once; safe to share between threads.
#[derive(Default)]
pub struct Denominators {
    seen: Mutex<HashSet<Key>>,
}

impl Denominators {
    /// An empty set.
    pub fn new() -> Denominators {
        Denominators::default()
    }

    /// `v` holding the one copy of its denominator's odd part (the set keeps `v`'s own the
    /// first time it meets that odd part). A value also held elsewhere is returned as it is
    /// ([`Value::with_odd`]).
    pub fn share(&self, v: Value) -> Value {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match seen.get(&Key(v.shared_odd().clone())) {
            Some(Key(one)) if Arc::ptr_eq(one, v.shared_odd()) => v,
            Some(Key(one)) => {
                let one = one.clone();
                v.with_odd(one)
            }
            None => {
                seen.insert(Key(v.shared_odd().clone()));
                v
            }
        }
    }

    /// Every value of `values` holding the one copy of its denominator's odd part.
    pub fn share_all(&self, values: &mut [Value]) {
        for v in values.iter_mut() {
            *v = self.share(std::mem::take(v));
        }
    }

    /// The number of distinct denominators seen.
    pub fn len(&self) -> usize {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether none has been seen.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal denominators end up as one copy, the values unchanged; other denominators,
    /// also ones whose hashed limbs agree, stay apart.
    #[test]
    fn equal_denominators_are_one_copy() {
        let big = BigUint::from(3u8).pow(2000);
        // Same length, same first and last four limbs, a different limb in the middle.
        let other: BigUint = &big + (BigUint::from(1u8) << (64 * 10));
        let values = vec![
            Value::new_raw(BigUint::from(1u8), big.clone()),
            Value::new_raw(BigUint::from(2u8), big.clone()),
            Value::new_raw(BigUint::from(5u8), other.clone()),
            Value::new_raw(BigUint::from(4u8), big.clone()),
            Value::small(1, 2),
            Value::small(1, 2),
        ];
        // Fresh copies: a value held elsewhere too is left alone (see below).
        let mut shared: Vec<Value> = values
            .iter()
            .map(|v| Value::new_raw(v.numer().into_owned(), v.denom().into_owned()))
            .collect();
        let pool = Denominators::new();
        pool.share_all(&mut shared);
        assert_eq!(shared, values);
        assert!(Arc::ptr_eq(shared[0].shared_odd(), shared[1].shared_odd()));
        assert!(Arc::ptr_eq(shared[0].shared_odd(), shared[3].shared_odd()));
        assert!(!Arc::ptr_eq(shared[0].shared_odd(), shared[2].shared_odd()));
        assert!(Arc::ptr_eq(shared[4].shared_odd(), shared[5].shared_odd()));
        assert_eq!(pool.len(), 3);
        // Sharing again changes nothing.
        pool.share_all(&mut shared);
        assert_eq!(shared, values);
        assert_eq!(pool.len(), 3);
        // A value also held elsewhere keeps its own denominator: sharing it would copy its
        // numerator.
        let held = Value::new_raw(BigUint::from(7u8), big.clone());
        let elsewhere = held.clone();
        let after = pool.share(held);
        assert_eq!(after, elsewhere);
        assert!(Arc::ptr_eq(after.shared_odd(), elsewhere.shared_odd()));
        assert!(!Arc::ptr_eq(after.shared_odd(), shared[0].shared_odd()));
    }
}
