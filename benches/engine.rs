//! Benchmarks of the generation stages on 8x8: building the game graph, one kernel
//! iteration at the precision of the end of the published run (all positions, and compacted
//! to the late run's KNvK), one guess computation, and
//! the solve method's stages (floating-point values, the exact evaluation of the chain
//! under the final strategies, the whole solve with its certificate), and a batch of
//! numerators put in lowest terms over one long odd denominator.

use bidtb::internal::graph::Graph;
use bidtb::internal::index::Index;
use bidtb::internal::iterate::guesses::{simplest_from_rows, simplest_from_rows_resuming};
use bidtb::internal::iterate::kernel::Kernel;
use criterion::{Criterion, criterion_group, criterion_main};
use num_bigint::BigUint;

/// The allocator the `bidtb` binary uses, so that the figures match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn board() -> bidtb::Board {
    "8x8".parse().unwrap()
}

fn graph_8x8(c: &mut Criterion) {
    let mut g = c.benchmark_group("graph");
    g.sample_size(10);
    g.bench_function("index+graph 8x8", |b| {
        b.iter(|| {
            let index = Index::three_piece(board());
            Graph::new(&index)
        })
    });
    g.finish();
}

fn kernel_8x8(c: &mut Criterion) {
    let index = Index::three_piece(board());
    let graph = Graph::new(&index);
    let mut kernel = Kernel::new(&graph, 43);
    // Real iterations first, so that pruning has shrunk the option lists as in a real run,
    // then move to the precision of iteration 2644 (42 active limbs).
    for _ in 0..64 {
        kernel.step(|_| false);
    }
    kernel.pretend_iteration(2644);
    let mut g = c.benchmark_group("kernel");
    g.sample_size(20);
    g.bench_function("one iteration 8x8 at 2644 bits", |b| {
        b.iter(|| {
            kernel.pretend_iteration(2644);
            kernel.step(|_| false)
        })
    });
    // The kernel of a late default run: compacted to the KNvK positions (the ones still
    // unsettled there) and what they read.
    let knight = index.class_number("KNvK".parse().unwrap()).unwrap();
    let range = index.class_range(knight);
    let sought: Vec<bool> = (0..graph.positions()).map(|p| range.contains(&p)).collect();
    let mut retired = Kernel::new(&graph, 43);
    for _ in 0..64 {
        retired.step(|_| false);
    }
    let proved: Vec<bool> = sought.iter().map(|&s| !s).collect();
    retired.retire(&proved);
    g.bench_function(
        "one iteration 8x8 at 2644 bits, others retired in place (not compacted)",
        |b| {
            b.iter(|| {
                retired.pretend_iteration(2644);
                retired.step(|_| false)
            })
        },
    );
    let kept = kernel.compact(&sought).len();
    g.bench_function(
        format!("one iteration 8x8 at 2644 bits, compacted to KNvK ({kept} positions)"),
        |b| {
            b.iter(|| {
                kernel.pretend_iteration(2644);
                kernel.step(|_| false)
            })
        },
    );
    g.finish();
}

fn guess_138_digits(c: &mut Criterion) {
    // An interval of width 2^-1000 around a fraction with a 138-digit denominator.
    let width = 43;
    let f = 64 * width - 1;
    let q: BigUint = "1".repeat(138).parse().unwrap();
    let p: BigUint = &q / 2u32 + 123_456_789u32;
    let want = bidtb::Value::new(p.clone(), q.clone());
    assert_eq!(want.denom().to_string().len(), 138);
    let base: BigUint = (&p << f) / &q;
    let delta = BigUint::from(1u8) << (f - 1000);
    let row = |v: &BigUint| {
        let mut l = v.to_u64_digits();
        l.resize(width, 0);
        l
    };
    let (a, b) = (row(&(&base - &delta)), row(&(&base + &delta)));
    assert_eq!(simplest_from_rows(&a, &b).0, want);
    c.bench_function("simplest rational, 138-digit denominator", |bench| {
        bench.iter(|| simplest_from_rows(&a, &b))
    });
    // The common case in a run: the interval shrank a little since the last guess, and the
    // descent resumes from that guess's prefix.
    let wider = BigUint::from(1u8) << (f - 990);
    let (wa, wb) = (row(&(&base - &wider)), row(&(&base + &wider)));
    let prefix = simplest_from_rows_resuming(&wa, &wb, None).3;
    assert!(prefix.is_some());
    assert_eq!(simplest_from_rows_resuming(&a, &b, prefix.as_ref()).0, want);
    c.bench_function("simplest rational, 138-digit, resumed", |bench| {
        bench.iter(|| simplest_from_rows_resuming(&a, &b, prefix.as_ref()))
    });
}

fn solve_8x8(c: &mut Criterion) {
    use bidtb::internal::solve::{self, Bound, Game, Settings, approx, evaluate, strategy};
    let index = Index::three_piece(board());
    let graph = Graph::new(&index);
    let game = Game::closed(&graph);
    let settings = Settings::default();
    let go_on = |_: solve::Event<'_>| true;
    let mut g = c.benchmark_group("solve");
    g.sample_size(10);
    g.bench_function("float value iteration 8x8", |b| {
        b.iter(|| {
            approx::iterate(
                game,
                Bound::Alpha,
                settings.float_tolerance,
                settings.max_sweeps,
            )
        })
    });
    let a = approx::iterate(
        game,
        Bound::Alpha,
        settings.float_tolerance,
        settings.max_sweeps,
    );
    let (strategies, _, _) = strategy::from_approx(game, &a.values, settings.near);
    g.bench_function("exact evaluation 8x8 (the exact step)", |b| {
        b.iter(|| evaluate::evaluate(game, &strategies, Bound::Alpha, &go_on).is_ok())
    });
    g.bench_function("whole solve 8x8 with certificate", |b| {
        b.iter(|| solve::solve_bound(game, Bound::Alpha, &settings, &go_on).is_ok())
    });
    // The certificate alone, on the exact values: its pass over every position (greedy
    // moves, ties, the equation) and the two closures.
    let Ok(solved) = solve::solve_bound(game, Bound::Alpha, &settings, &go_on) else {
        panic!("8x8 solves")
    };
    g.bench_function("certificate 8x8", |b| {
        b.iter(|| bidtb::internal::certificate::certify_from(&solved.values, &graph, game.start))
    });
    g.finish();
}

/// A number of `limbs` 64-bit limbs from a seed (xorshift), odd.
fn long_number(limbs: usize, seed: u64) -> BigUint {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let digits: Vec<u64> = (0..limbs)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    BigUint::from_slice(
        &digits
            .iter()
            .flat_map(|d| [*d as u32, (*d >> 32) as u32])
            .collect::<Vec<_>>(),
    ) | BigUint::from(1u8)
}

/// The gcds of 64 numerators with a 23,000-bit odd part (the size of 7x7 KNvKN's), as a
/// level's pending means take them: all coprime to it, and with one multiple of it among
/// them (a mean whose denominator loses the whole odd part, one batch in nine there).
fn lowest_terms(c: &mut Criterion) {
    use bidtb::internal::value::long::{Modulus, gcds_with};
    let r = long_number(360, 1);
    let modulus = Modulus::new(&r);
    let coprime: Vec<BigUint> = (0..64).map(|s| long_number(360, 100 + s)).collect();
    let mut with_multiple = coprime.clone();
    with_multiple[17] = &r * 3u8;
    let mut g = c.benchmark_group("lowest terms");
    for (name, numbers) in [("coprime", &coprime), ("one multiple", &with_multiple)] {
        let numbers: Vec<&BigUint> = numbers.iter().collect();
        g.bench_function(format!("64 gcds with 23,000 bits, {name}"), |b| {
            b.iter(|| gcds_with(&modulus, &numbers))
        });
    }
    // 8x8's size: a 70,000-bit rough part, the numerators a little longer (its smooth
    // part and the twos), all coprime to it or one sharing a 10,000-bit factor with it.
    let factor = long_number(160, 2);
    let r = long_number(940, 3) * &factor;
    let coprime: Vec<BigUint> = (0..64).map(|s| long_number(1_105, 200 + s)).collect();
    let mut sharing = coprime.clone();
    sharing[40] = long_number(940, 4) * &factor;
    let modulus = Modulus::new(&r);
    for (name, numbers) in [
        ("coprime", &coprime),
        ("one sharing a long factor", &sharing),
    ] {
        let numbers: Vec<&BigUint> = numbers.iter().collect();
        g.bench_function(format!("64 gcds with 70,000 bits, {name}"), |b| {
            b.iter(|| gcds_with(&modulus, &numbers))
        });
    }
    // 8x8 KNvKN's size: rough parts up to 63,500 bits, below the 1,000 limbs from which
    // malachite multiplies numbers of equal length by its FFT.
    let r = long_number(940, 5);
    let modulus = Modulus::new(&r);
    let coprime: Vec<BigUint> = (0..64).map(|s| long_number(940, 300 + s)).collect();
    let numbers: Vec<&BigUint> = coprime.iter().collect();
    g.bench_function("64 gcds with 60,000 bits, coprime", |b| {
        b.iter(|| gcds_with(&modulus, &numbers))
    });
    level_of_means(&mut g);
    g.finish();
}

/// A level of 256 pending means over 64 odd parts that are one 62,000-bit core times
/// 1,000-bit cofactors, as 8x8 KNvKP's levels are (`finish_means`: gathered around the
/// core, or one by one through their smooth and rough parts before).
fn level_of_means(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    use bidtb::Value;
    use bidtb::internal::value::arith::{Mean, finish_means, mean_or_pending};
    let core = long_number(970, 20);
    let pairs: Vec<(Value, Value)> = (0..256u64)
        .map(|k| {
            let odd = &core * long_number(16, 400 + k / 4);
            let numerator = |seed| long_number(960, seed);
            (
                Value::new(numerator(1_000 + 2 * k), odd.clone()),
                Value::new(numerator(1_001 + 2 * k), odd),
            )
        })
        .collect();
    let pending = || {
        pairs
            .iter()
            .map(|(a, b)| match mean_or_pending(a, b) {
                Mean::Pending(p) => p,
                Mean::Done(_) => unreachable!("long odd parts wait"),
            })
            .collect::<Vec<_>>()
    };
    g.bench_function("a level of 256 means over odd parts sharing a core", |b| {
        b.iter_batched(pending, finish_means, criterion::BatchSize::LargeInput)
    });
}

/// Products of two numbers of one length (in 64-bit limbs), as the certificate's
/// cross-multiplications and the lowest terms' running products take them: on both sides
/// of the lengths (389 to 999 limbs) where malachite multiplies equal lengths by
/// Toom–Cook and unequal ones by its FFT.
fn long_products(c: &mut Criterion) {
    use bidtb::internal::value::long::mul;
    let mut g = c.benchmark_group("long product");
    for limbs in [300, 500, 800, 940, 1_100] {
        let (a, b) = (long_number(limbs, 7), long_number(limbs, 8));
        g.bench_function(
            format!("{} bits by {} bits", limbs * 64, limbs * 64),
            |bench| bench.iter(|| mul(&a, &b)),
        );
    }
    // The certificate's fixed-point images: floor(v · 2^511) of a 60,000-bit value, a
    // division with a 512-bit quotient.
    let d = long_number(940, 9);
    let v = bidtb::internal::value::Value::new(long_number(939, 10), d);
    g.bench_function(
        "fixed-point image (8 limbs) of a 60,000-bit value",
        |bench| bench.iter(|| bidtb::internal::value::images::fixed_point(&v, 8)),
    );
    g.finish();
}

/// Floor divisions of a signed long number by a long one, as a reconstruction rounds each
/// entry to a multiple of the common denominator (`solve::linear`): num-integer's
/// (num-bigint's Burnikel–Ziegler) against `value::long::div_mod_floor` (malachite's where
/// the division is long), at the lengths of 6x6 knight materials and beyond.
fn floor_divisions(c: &mut Criterion) {
    use bidtb::internal::value::long::div_mod_floor;
    use num_bigint::{BigInt, Sign};
    let mut g = c.benchmark_group("floor division");
    for (dividend, divisor) in [(200, 100), (600, 100), (600, 300), (1_200, 600)] {
        let a = BigInt::from_biguint(Sign::Minus, long_number(dividend, 11));
        let b = BigInt::from(long_number(divisor, 12));
        let name = format!("{} bits by {} bits", dividend * 64, divisor * 64);
        g.bench_function(format!("{name}, num-integer"), |bench| {
            bench.iter(|| num_integer::Integer::div_mod_floor(&a, &b))
        });
        g.bench_function(format!("{name}, value::long"), |bench| {
            bench.iter(|| div_mod_floor(&a, &b))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    graph_8x8,
    kernel_8x8,
    guess_138_digits,
    solve_8x8,
    lowest_terms,
    long_products,
    floor_divisions
);
criterion_main!(benches);
