//! What a job knows before its method runs, and what a stored position is to everyone who
//! reads one: [`Known`], a stored position's exact α and β and its levels in the closures
//! T and T′, with its float shadow [`Glance`], their one colour mirror and the one
//! [`UNREACHED`] level; [`Solved`], the materials solved before a job (tables on disk or
//! in memory); [`Terminals`], what a graph's terminal nodes are worth; and the boundary
//! stage [`terminals`] that reads them. It sits below both methods and the query side: the
//! generator's exits, `verify` and the probe meet here and nowhere else.
//!
//! **The boundary stage**: what a job's terminal nodes are worth (the two king captures, 1 and
//! 0, and each exit into a material solved before, read from that material) and the
//! levels its closures start from.
//!
//! **Exits that never decide anything are not read.** An exit is a fixed value. Where a
//! side's options at a position include another terminal node (a king capture, another
//! exit) that is decisively better for that side by the values' shadows ([`DECISIVE`]
//! apart; each shadow is an f64 within 2·10⁻¹³ of its value, less than half of that),
//! the exit is never that side's best option there, whatever the positions' values are. An exit of which that holds at every position it is an option
//! of, for both bounds, changes nothing when its value is replaced by the worst value for
//! its side (0 where White moves there, 1 where Black does): every maximum and minimum,
//! every equation, every greedy move and so every closure stays the same, and so does
//! every strategy an improvement could reach. It is given that value instead of its own,
//! and its digits are never read. A black pawn that promotes can pick a queen as well as a
//! knight: on 7x7 KNvKP most of the exits into KNvKN, each with thousands of digits, are
//! such exits. The exits' levels in their own closures are kept, always.
//!
//! Exits are glanced at first (shadows and levels, their digits decoded and let go), then
//! those still needed are read in full.

use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use crate::certificate::Start;
use crate::error::Error;
use crate::graph::{Exit, Graph};
use crate::material::Material;
use crate::value::Value;
use crate::value::arith::DECISIVE;

/// The level of a position outside a closure (T or T′): stored so in tables, checkpoints
/// and exits' levels alike.
pub use crate::certificate::UNREACHED;

/// What a material solved before says of one of its positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    /// α.
    pub alpha: Value,
    /// β (α where they agree).
    pub beta: Value,
    /// Its level in White's closure T ([`UNREACHED`] outside it).
    pub level_white: u32,
    /// Its level in Black's closure T′.
    pub level_black: u32,
}

impl Known {
    /// The same position seen through the colour mirror: α′ = 1 − β, β′ = 1 − α, the
    /// closures swapped.
    pub fn mirrored(self) -> Known {
        Known {
            alpha: self.beta.complement(),
            beta: self.alpha.complement(),
            level_white: self.level_black,
            level_black: self.level_white,
        }
    }
}

/// What is known of a graph's terminal nodes (the win, the loss, the exits, in node order)
/// before a method runs: their values for each bound (the exits' α for α, their β for β)
/// and their levels in the closures T and T′ (0 for the king captures; an exit's levels in
/// its own material's closures).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminals {
    /// Values for α.
    pub alpha: Vec<Value>,
    /// Values for β.
    pub beta: Vec<Value>,
    /// Levels the closures start from.
    pub start: Start,
}

impl Terminals {
    /// One flag per node of a graph of `positions` positions: the terminal nodes whose β
    /// differs from their α (what [`crate::certificate::certify_again`] checks again).
    pub fn changed(&self, positions: usize) -> Vec<bool> {
        std::iter::repeat_n(false, positions)
            .chain(self.alpha.iter().zip(&self.beta).map(|(a, b)| a != b))
            .collect()
    }

    /// A graph without exits: the win is worth 1, the loss 0, both at level 0.
    pub fn closed() -> Terminals {
        let ends = vec![Value::one(), Value::zero()];
        Terminals {
            alpha: ends.clone(),
            beta: ends,
            start: Start {
                white: vec![0, 0],
                black: vec![0, 0],
            },
        }
    }
}

/// Materials solved before a job, whose positions its exits lead to.
pub trait Solved: Sync {
    /// What is known of the position with canonical key `key` of the stored material
    /// `material`.
    fn known(&self, material: Material, key: u64) -> Result<Known, Error>;

    /// The shadows of α and β of the position with canonical key `key` of the stored
    /// material `material` (f64, within 2⁻⁵⁰, or 2·10⁻¹³ where a table of means gives a
    /// mean's from its halves') and its levels, its digits not kept
    /// ([`terminals`] reads in full only the exits that may decide something).
    fn glance(&self, material: Material, key: u64) -> Result<Glance, Error> {
        let k = self.known(material, key)?;
        Ok(Glance {
            alpha: k.alpha.to_f64(),
            beta: k.beta.to_f64(),
            level_white: k.level_white,
            level_black: k.level_black,
        })
    }

    /// Get ready to glance at many positions (from many threads): find what makes each
    /// glance cheap, such as every shadow of a table of means (one pass over its
    /// dictionary, no mean decoded). Called once, before the first glance. Nothing by
    /// default.
    fn ready(&self) -> Result<(), Error> {
        Ok(())
    }

    /// The job has read every exit it needs: let go of what was held only to answer them
    /// (the pages of memory-mapped tables). Nothing by default.
    fn release(&self) {}
}

/// A stored position's values seen from afar: their shadows (f64, within 2·10⁻¹³) and its
/// levels in the closures T and T′.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Glance {
    /// α's shadow.
    pub alpha: f64,
    /// β's shadow.
    pub beta: f64,
    /// Level in White's closure T.
    pub level_white: u32,
    /// Level in Black's closure T′.
    pub level_black: u32,
}

impl Glance {
    /// The same position seen through the colour mirror (as [`Known::mirrored`]).
    pub fn mirrored(self) -> Glance {
        Glance {
            alpha: 1.0 - self.beta,
            beta: 1.0 - self.alpha,
            level_white: self.level_black,
            level_black: self.level_white,
        }
    }
}

/// No material solved before: for jobs whose graphs have no exits.
pub struct NothingSolved;

impl Solved for NothingSolved {
    fn known(&self, material: Material, _key: u64) -> Result<Known, Error> {
        Err(Error::Usage(format!(
            "{material} is needed and has not been solved"
        )))
    }
}

/// What the boundary stage read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// Exits of the job.
    pub exits: usize,
    /// Exits read in full (the others never decide anything: module comment).
    pub needed: usize,
}

/// Flags of an exit: which sides move there, and whether it may be its side's best
/// option somewhere, by α's values or β's.
const BY_WHITE: u8 = 1;
const BY_BLACK: u8 = 2;
const MAY_DECIDE: u8 = 4;

/// What is known of a graph's terminal nodes: 1 and 0 at level 0, and each exit's values
/// and levels, through the colour mirror where the exit is the mirror of its stored
/// position; an exit that never decides anything at the worst value for its side (module
/// comment). None when `stopping` turns true before every exit is read (a stop asked
/// for, or the memory guard: reading the exits of a large job takes minutes and
/// gigabytes).
pub fn terminals(
    graph: &Graph,
    solved: &dyn Solved,
    stopping: &(dyn Fn() -> bool + Sync),
) -> Result<Option<(Terminals, Read)>, Error> {
    if !graph.exits().is_empty() {
        solved.ready()?;
    }
    let Some(glances) = each_exit(graph, stopping, |_, e| {
        let g = solved.glance(e.material, e.key)?;
        Ok(if e.mirrored { g.mirrored() } else { g })
    })?
    else {
        return Ok(None);
    };
    let flags = exit_flags(
        graph.positions(),
        |i| [graph.white(i), graph.black(i)],
        &glances,
    );
    let needed = |k: usize| {
        let f = flags[k];
        f & MAY_DECIDE != 0 || f & (BY_WHITE | BY_BLACK) == BY_WHITE | BY_BLACK
    };
    let (one, zero) = (Value::one(), Value::zero());
    let Some(values) = each_exit(graph, stopping, |k, e| {
        if !needed(k) {
            let worst = if flags[k] & BY_WHITE != 0 {
                &zero
            } else {
                &one
            };
            return Ok((worst.clone(), worst.clone()));
        }
        let known = solved.known(e.material, e.key)?;
        let known = if e.mirrored { known.mirrored() } else { known };
        Ok((known.alpha, known.beta))
    })?
    else {
        return Ok(None);
    };
    let mut t = Terminals::closed();
    for ((alpha, beta), g) in values.into_iter().zip(&glances) {
        t.alpha.push(alpha);
        t.beta.push(beta);
        t.start.white.push(g.level_white);
        t.start.black.push(g.level_black);
    }
    let read = Read {
        exits: glances.len(),
        needed: (0..glances.len()).filter(|&k| needed(k)).count(),
    };
    Ok(Some((t, read)))
}

/// `read` of every exit, in parallel, in the graph's order; None once `stopping` is true.
fn each_exit<T: Send>(
    graph: &Graph,
    stopping: &(dyn Fn() -> bool + Sync),
    read: impl Fn(usize, &Exit) -> Result<T, Error> + Sync,
) -> Result<Option<Vec<T>>, Error> {
    /// Why the exits were not all read.
    enum Halt {
        Stopped,
        Failed(Error),
    }
    let out: Result<Vec<T>, Halt> = graph
        .exits()
        .par_iter()
        .enumerate()
        .map(|(k, e)| {
            if stopping() {
                return Err(Halt::Stopped);
            }
            read(k, e).map_err(Halt::Failed)
        })
        .collect();
    match out {
        Ok(v) => Ok(Some(v)),
        Err(Halt::Stopped) => Ok(None),
        Err(Halt::Failed(e)) => Err(e),
    }
}

/// The flags of every exit: the sides that move there, and whether, by α's shadows or
/// β's, it is not decisively worse for its side than another terminal option at some
/// position it is an option of. Nodes are numbered as in a [`Graph`] of `n` positions
/// (the win `n`, the loss `n + 1`, exit k `n + 2 + k`); `options(i)` are White's and
/// Black's options at position i.
fn exit_flags<'a>(
    n: usize,
    options: impl Fn(usize) -> [&'a [u32]; 2] + Sync,
    glances: &[Glance],
) -> Vec<u8> {
    let first_exit = n + 2;
    let flags: Vec<AtomicU8> = glances.iter().map(|_| AtomicU8::new(0)).collect();
    let shadow = |t: usize, alpha: bool| -> f64 {
        match t.checked_sub(first_exit) {
            Some(k) if alpha => glances[k].alpha,
            Some(k) => glances[k].beta,
            None if t == n => 1.0,
            None => 0.0,
        }
    };
    (0..n).into_par_iter().for_each(|i| {
        let [white, black] = options(i);
        for (side, list) in [(BY_WHITE, white), (BY_BLACK, black)] {
            if !list.iter().any(|&t| t as usize >= first_exit) {
                continue;
            }
            let terminal = || list.iter().map(|&t| t as usize).filter(|&t| t >= n);
            for alpha in [true, false] {
                // The side's best terminal option, and the exits not decisively worse.
                let shadows = terminal().map(|t| shadow(t, alpha));
                let best = if side == BY_WHITE {
                    shadows.fold(f64::NEG_INFINITY, f64::max)
                } else {
                    shadows.fold(f64::INFINITY, f64::min)
                };
                for t in terminal().filter(|&t| t >= first_exit) {
                    let s = shadow(t, alpha);
                    let worse = if side == BY_WHITE {
                        s + DECISIVE < best
                    } else {
                        s > best + DECISIVE
                    };
                    let f = if worse { side } else { side | MAY_DECIDE };
                    flags[t - first_exit].fetch_or(f, Ordering::Relaxed);
                }
            }
        }
    });
    flags.into_iter().map(AtomicU8::into_inner).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::driver::{self, InMemory};
    use crate::generate::{Control, Options, Silent};
    use crate::geometry::Board;
    use crate::index::Index;
    use crate::material::Material;
    use std::sync::atomic::AtomicUsize;
    use std::sync::atomic::Ordering;

    fn glance(alpha: f64, beta: f64) -> Glance {
        Glance {
            alpha,
            beta,
            level_white: 3,
            level_black: 4,
        }
    }

    /// Three positions (nodes 0–2; the win 3, the loss 4, exits 0–5 are nodes 5–10).
    /// Position 0: White may take the king or move to exit 0 (worth 0.9); Black may move to
    /// exit 1 (0.2), exit 2 (0.7) or exit 3 (0.2 + 10⁻¹⁴, not decisively worse than exit
    /// 1). Position 1: Black may move to exit 2 or to position 0. Position 2: Black may
    /// move to exit 1, exit 4 (0.5 by α, 0.1 by β) or exit 5 (0.5 by α, 0.3 by β).
    #[test]
    fn an_exit_decisively_worse_for_its_side_at_every_position_never_decides() {
        let white: [&[u32]; 3] = [&[3, 5], &[0], &[0]];
        let black: [&[u32]; 3] = [&[6, 7, 8], &[7, 0], &[6, 9, 10]];
        let glances = [
            glance(0.9, 0.9),
            glance(0.2, 0.2),
            glance(0.7, 0.7),
            glance(0.2 + 1e-14, 0.2 + 1e-14),
            glance(0.5, 0.1),
            glance(0.5, 0.3),
        ];
        let flags = exit_flags(3, |i| [white[i], black[i]], &glances);
        assert_eq!(flags[0], BY_WHITE, "below the king's capture");
        assert_eq!(flags[1], BY_BLACK | MAY_DECIDE);
        // Worse than exit 1 at position 0, but Black's only terminal option at position 1.
        assert_eq!(flags[2], BY_BLACK | MAY_DECIDE);
        assert_eq!(flags[3], BY_BLACK | MAY_DECIDE, "a near tie is not decided");
        assert_eq!(flags[4], BY_BLACK | MAY_DECIDE, "the best by beta");
        assert_eq!(flags[5], BY_BLACK, "worse by both bounds");
        // Without position 1, exit 2 is worse than exit 1 wherever Black may move there.
        let flags = exit_flags(
            3,
            |i| [white[i], if i == 1 { &[0] } else { black[i] }],
            &glances,
        );
        assert_eq!(flags[2], BY_BLACK);
    }

    /// The obvious boundary: every exit read in full.
    fn every_exit(graph: &Graph, solved: &dyn Solved) -> Terminals {
        let mut t = Terminals::closed();
        for e in graph.exits() {
            let k = solved.known(e.material, e.key).unwrap();
            let k = if e.mirrored { k.mirrored() } else { k };
            t.alpha.push(k.alpha);
            t.beta.push(k.beta);
            t.start.white.push(k.level_white);
            t.start.black.push(k.level_black);
        }
        t
    }

    /// The job of `material` on `board` with what it needs solved before.
    fn job(board: Board, material: &str) -> (Material, Graph, InMemory) {
        let material: Material = material.parse().unwrap();
        let mut solved = InMemory::default();
        let mut deps = Options::solve(board);
        deps.materials = Material::next_outside(&[material]);
        assert!(matches!(
            driver::run(&deps, &Silent, &Control::default(), &mut solved),
            Ok(driver::Driven::Finished(_, skipped)) if skipped.is_empty()
        ));
        let graph = Graph::new(&Index::new(board, &[material]));
        (material, graph, solved)
    }

    /// α and β of every position, solved with `terminals`.
    fn solved_with(board: Board, m: Material, graph: &Graph, t: &Terminals) -> Vec<(Value, Value)> {
        let Ok(crate::solve::run::Run::Finished(out)) = crate::solve::run::run(
            board,
            &[m],
            graph,
            t,
            &Silent,
            &Control::default(),
            &Default::default(),
        ) else {
            panic!("{m} on {board} was not solved");
        };
        let beta = out.beta.as_ref().map_or(&out.alpha.values, |b| &b.values);
        (0..graph.positions())
            .map(|i| {
                (
                    out.alpha.values.values()[i].clone(),
                    beta.values()[i].clone(),
                )
            })
            .collect()
    }

    /// Exits that never decide anything are given the worst value for their side, and the
    /// solve finds every position's α and β as with every exit read in full; on materials
    /// where many exits are left unread (promotions to a queen beside others, captures
    /// beside a king's capture), with α < β (KBvKP, KBvKN) and without.
    #[test]
    fn exits_left_unread_change_no_value() {
        for (side, material) in [(4, "KNvKP"), (4, "KBvKP"), (4, "KBvKN"), (5, "KPvKP")] {
            let board = Board::new(side, side).unwrap();
            let (m, graph, solved) = job(board, material);
            let (t, read) = terminals(&graph, &solved, &|| false).unwrap().unwrap();
            let full = every_exit(&graph, &solved);
            assert_eq!(read.exits, graph.exits().len());
            assert!(read.needed * 10 < read.exits * 9, "{material}: {read:?}");
            assert_eq!(t.start, full.start, "{material}: the levels are all kept");
            let unread: Vec<usize> = (2..t.alpha.len())
                .filter(|&k| t.alpha[k] != full.alpha[k] || t.beta[k] != full.beta[k])
                .collect();
            assert!(!unread.is_empty(), "{material}: every exit kept its value");
            for &k in &unread {
                let worst = &t.alpha[k];
                assert!(worst.is_zero() || worst.is_one(), "{material}: exit {k}");
                assert_eq!(&t.beta[k], worst);
            }
            let (pruned, full) = (
                solved_with(board, m, &graph, &t),
                solved_with(board, m, &graph, &full),
            );
            let differ = (0..full.len()).filter(|&i| pruned[i] != full[i]).count();
            assert_eq!(
                differ, 0,
                "{material} on {board}: positions whose values differ"
            );
        }
    }

    /// A stop while the exits are read ends the stage with nothing (the memory guard and
    /// Ctrl-C are heard there too, not only once the solve starts).
    #[test]
    fn reading_the_exits_stops_when_asked() {
        let board = Board::new(4, 4).unwrap();
        let (_, graph, solved) = job(board, "KQvKR");
        assert!(graph.exits().len() > 100, "{}", graph.exits().len());
        let (t, _) = terminals(&graph, &solved, &|| false).unwrap().unwrap();
        assert_eq!(t.alpha.len(), graph.terminals().len());
        let asked = AtomicUsize::new(0);
        let stop_after_ten = || asked.fetch_add(1, Ordering::Relaxed) >= 10;
        let stopped = terminals(&graph, &solved, &stop_after_ten).unwrap();
        assert!(stopped.is_none());
        assert!(asked.load(Ordering::Relaxed) < 2 * graph.exits().len());
    }
}
