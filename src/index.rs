//! Position indexing: every valid position of a material gets a dense index, positions that
//! are images of each other under a board symmetry sharing one.
//!
//! **Keys.** With S squares, the *raw key* of a position lists its men's squares in the
//! position's order (white king, black king, White's pieces strongest first, Black's),
//! most significant first, in base S: `((wk · S + bk) · S + m₁) · S + m₂ …`; for materials
//! with pawns on both sides (on boards of at least 5 ranks) it is then multiplied by
//! `E = 1 + 2F` and an en-passant code added: 0 for no right, else `1 + file + F · side` of
//! the pawn that may be taken (side 0 White, 1 Black). The three-piece keys are those of
//! format versions 1 and 2, `(wk · S + bk) · S + piece`. The *canonical key* is the
//! smallest raw key over the position's images under the symmetries of its material
//! (left–right always; up–down and, on square boards, the diagonal without pawns).
//!
//! **Index.** Within a material, positions are numbered in increasing canonical key. The
//! canonical king pair is the smallest over the symmetries (kings are the key's most
//! significant digits), so each king pair's positions form one run of keys; a lookup finds
//! the bucket of keys from their leading digits and binary-searches the few keys in it. An
//! [`Index`] lays several materials end to end, giving one global numbering (the study's
//! six three-piece classes, iterated jointly; or one material, solved on its own).

use rayon::prelude::*;

use crate::geometry::{Board, Square, Symmetry};
use crate::material::{Color, Material};
use crate::position::Position;

const NONE: u32 = u32::MAX;

/// How a material's keys are laid out on a board.
#[derive(Clone, Copy, Debug)]
struct Radix {
    squares: u64,
    men: usize,
    /// En-passant codes per placement (1 when no right can arise).
    ep: u64,
    files: u64,
}

impl Radix {
    fn new(board: Board, material: Material) -> Radix {
        let ep = material.has_pawns_on_both_sides() && board.ranks() >= 5;
        Radix {
            squares: board.len() as u64,
            men: material.man_count(),
            ep: if ep { 1 + 2 * board.files() as u64 } else { 1 },
            files: board.files() as u64,
        }
    }

    /// Keys per king pair.
    fn per_king_pair(&self) -> u64 {
        self.squares.pow(self.men as u32 - 2) * self.ep
    }

    /// Every key lies below this.
    fn key_space(&self) -> u64 {
        self.squares.pow(self.men as u32) * self.ep
    }
}

/// Every raw key of `material` on `board` lies below this.
pub fn key_space(board: Board, material: Material) -> u64 {
    Radix::new(board, material).key_space()
}

/// Canonical keys of one material's positions on one board, fast: each symmetry as a
/// table of squares, the runs of identical men to put in order, the key's radix. What the
/// index and the graph compute for every position and every move.
#[derive(Clone, Debug)]
pub struct Canon {
    radix: Radix,
    /// Per symmetry, the image of every square.
    maps: Vec<Vec<u8>>,
    /// The ranges of men that are identical (two or more of a kind).
    runs: Vec<(usize, usize)>,
}

impl Canon {
    /// The canonical keys of `material` on `board`.
    pub fn new(board: Board, material: Material) -> Canon {
        let maps = symmetries(board, material)
            .into_iter()
            .map(|sym| board.squares().map(|s| board.transform(sym, s).0).collect())
            .collect();
        let mut runs = Vec::new();
        let mut i = 2;
        for (_, n) in Color::BOTH.into_iter().flat_map(|c| {
            crate::material::Piece::ALL
                .into_iter()
                .map(move |p| (p, material.count(c, p)))
        }) {
            if n > 1 {
                runs.push((i, i + n));
            }
            i += n;
        }
        Canon {
            radix: Radix::new(board, material),
            maps,
            runs,
        }
    }

    /// The canonical key of `pos` (of this material): the smallest raw key of its images.
    /// The kings are the key's leading digits, so only the symmetries that give the
    /// smallest king pair are worked out in full.
    #[inline]
    pub fn key(&self, pos: &Position) -> u64 {
        let squares = pos.squares();
        let n = squares.len();
        let (wk, bk) = (squares[0].0 as usize, squares[1].0 as usize);
        let pair = |map: &Vec<u8>| map[wk] as u64 * self.radix.squares + map[bk] as u64;
        let least = self
            .maps
            .iter()
            .map(pair)
            .min()
            .expect("the identity is a symmetry");
        // The en-passant pawn's side does not change under a board symmetry.
        let ep = pos.ep().map(|p| {
            let side = pos.man(pos.at(p).expect("the pawn stands there")).color;
            (p.0 as usize, self.radix.files * side.index() as u64)
        });
        let mut best = u64::MAX;
        let mut t = [0u8; crate::material::MAX_MEN];
        for map in self.maps.iter().filter(|m| pair(m) == least) {
            for (slot, s) in t.iter_mut().zip(squares) {
                *slot = map[s.0 as usize];
            }
            for &(a, b) in &self.runs {
                t[a..b].sort_unstable();
            }
            let mut key = 0u64;
            for &s in &t[..n] {
                key = key * self.radix.squares + s as u64;
            }
            let code = ep.map_or(0, |(p, side)| 1 + (map[p] as u64 % self.radix.files) + side);
            best = best.min(key * self.radix.ep + code);
        }
        best
    }
}

/// The raw key of a position (see the module comment).
pub fn raw_key(board: Board, pos: &Position) -> u64 {
    let radix = Radix::new(board, pos.material());
    let mut key = 0u64;
    for s in pos.squares() {
        key = key * radix.squares + s.0 as u64;
    }
    let code = match pos.ep() {
        None => 0,
        Some(p) => {
            let side = pos.man(pos.at(p).expect("the pawn stands there")).color;
            1 + board.file_of(p) as u64 + radix.files * side.index() as u64
        }
    };
    key * radix.ep + code
}

/// The position of `material` with raw key `key`; None if the key does not describe one
/// (a square off the board or an en-passant code without its pawn). Not validated.
pub fn position_of_key(board: Board, material: Material, key: u64) -> Option<Position> {
    let radix = Radix::new(board, material);
    if key >= radix.key_space() {
        return None;
    }
    let pos = decode(board, material, radix, key)?;
    // Identical men out of order are not the key of any position.
    (raw_key(board, &pos) == key).then_some(pos)
}

/// The position a key below the key space spells, unchecked.
fn decode(board: Board, material: Material, radix: Radix, key: u64) -> Option<Position> {
    let (mut rest, code) = (key / radix.ep, key % radix.ep);
    let mut squares = [Square(0); crate::material::MAX_MEN];
    for s in squares[..radix.men].iter_mut().rev() {
        *s = Square((rest % radix.squares) as u8);
        rest /= radix.squares;
    }
    let ep = if code == 0 {
        None
    } else {
        let (file, side) = ((code - 1) % radix.files, (code - 1) / radix.files);
        let color = if side == 0 {
            Color::White
        } else {
            Color::Black
        };
        let rank = match color {
            Color::White => 3,
            Color::Black => board.ranks() as i32 - 4,
        };
        Some(board.square(file as i32, rank)?)
    };
    Some(Position::new(material, &squares[..radix.men], ep))
}

/// The symmetries a material's positions are reduced by on `board`.
pub fn symmetries(board: Board, material: Material) -> Vec<Symmetry> {
    board.symmetries(material.has_pawns())
}

/// The canonical key of a position: the smallest raw key over its images under the board
/// symmetries of its material. Positions that are images of each other share it.
pub fn canonical_key(board: Board, pos: &Position) -> u64 {
    canonical_with(board, &symmetries(board, pos.material()), pos)
}

fn canonical_with(board: Board, syms: &[Symmetry], pos: &Position) -> u64 {
    syms.iter()
        .map(|&sym| raw_key(board, &pos.transform(board, sym)))
        .min()
        .expect("the identity is a symmetry")
}

/// The numbers of positions of `material` on `board` exactly as its index counts them:
/// (valid positions before symmetry, canonical positions), the `positions` and
/// `canonical_positions` a run reports. Enumerates them in parallel over king pairs
/// without keeping them (a king pair's keys at a time): for a plan, whose counts must be
/// the run's ([`estimate_positions`] is a bound for memory estimates, not a count).
pub fn count_positions(board: Board, material: Material) -> (u64, usize) {
    let symmetries = symmetries(board, material);
    let canon = Canon::new(board, material);
    let s = board.len();
    (0..s * s)
        .into_par_iter()
        .map(|kk| {
            let (keys, raw) = king_pair_positions(board, material, &symmetries, &canon, kk);
            (raw, keys.len())
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// The index of one material on one board.
#[derive(Debug)]
pub struct MaterialIndex {
    material: Material,
    board: Board,
    symmetries: Vec<Symmetry>,
    radix: Radix,
    raw_count: u64,
    /// Canonical keys, increasing: position i has key `keys[i]`.
    keys: Vec<u64>,
    /// Where each bucket of keys starts (and the last one ends) in `keys`.
    buckets: Buckets,
    canon: Canon,
}

/// The keys cut into buckets of equal width, for lookups: bucket b holds the keys from
/// `b · width` to `(b + 1) · width − 1`, so a lookup binary-searches only its bucket's few
/// keys. The width is the key space over a power of the squares no larger than it need be
/// for about one key per bucket (never coarser than a king pair): on 6x6 five men a bucket
/// holds the keys of one placement of the kings and the first piece, at most 36, against
/// 46,656 a king pair (the graph's lookups took 15 % of its time searching those).
#[derive(Debug)]
struct Buckets {
    width: u64,
    starts: Vec<u32>,
}

impl Buckets {
    fn new(radix: Radix, keys: &[u64]) -> Buckets {
        // Buckets of one king pair, then one more man's square at a time while there are
        // fewer buckets than twice the keys.
        let (mut width, mut count) = (radix.per_king_pair(), radix.squares * radix.squares);
        let enough = (2 * keys.len() as u64).max(count);
        for _ in 2..radix.men {
            if count * radix.squares > enough {
                break;
            }
            width /= radix.squares;
            count *= radix.squares;
        }
        let mut starts = vec![0u32; count as usize + 1];
        for &k in keys {
            starts[(k / width) as usize + 1] += 1;
        }
        for b in 0..count as usize {
            starts[b + 1] += starts[b];
        }
        Buckets { width, starts }
    }

    /// The range of `keys` where `key` would be.
    #[inline]
    fn range(&self, key: u64) -> Option<std::ops::Range<usize>> {
        let b = (key / self.width) as usize;
        let (&start, &end) = (self.starts.get(b)?, self.starts.get(b + 1)?);
        Some(start as usize..end as usize)
    }
}

impl MaterialIndex {
    /// Enumerate the material's positions on `board`, in parallel over king pairs.
    pub fn new(board: Board, material: Material) -> MaterialIndex {
        let symmetries = symmetries(board, material);
        let radix = Radix::new(board, material);
        let canon = Canon::new(board, material);
        let s = board.len();
        let pairs: Vec<(Vec<u64>, u64)> = (0..s * s)
            .into_par_iter()
            .map(|kk| king_pair_positions(board, material, &symmetries, &canon, kk))
            .collect();
        let mut keys = Vec::with_capacity(pairs.iter().map(|p| p.0.len()).sum());
        let mut raw_count = 0;
        for (list, raw) in pairs {
            keys.extend(list);
            raw_count += raw;
        }
        assert!(
            keys.len() < NONE as usize,
            "{material} on {board}: too many positions for 32-bit indices"
        );
        MaterialIndex {
            material,
            board,
            symmetries,
            radix,
            raw_count,
            buckets: Buckets::new(radix, &keys),
            keys,
            canon,
        }
    }

    /// The material.
    pub fn material(&self) -> Material {
        self.material
    }

    /// Number of valid positions before symmetry reduction.
    pub fn raw_count(&self) -> u64 {
        self.raw_count
    }

    /// Number of indexed (canonical) positions.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the material has no position on this board (KPvK on a 2-rank board).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The canonical position with local index `i`.
    pub fn position(&self, i: usize) -> Position {
        decode(self.board, self.material, self.radix, self.keys[i]).expect("indexed keys decode")
    }

    /// The canonical key of local index `i` (keys increase with the index).
    pub fn key(&self, i: usize) -> u64 {
        self.keys[i]
    }

    /// Every canonical key, in index order.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// The local index of the position with canonical key `key`.
    pub fn find(&self, key: u64) -> Option<usize> {
        let range = self.buckets.range(key)?;
        let start = range.start;
        self.keys[range].binary_search(&key).ok().map(|i| i + start)
    }

    /// The local index of a position of this material known to be valid (any symmetric
    /// image): the graph's lookup, which skips validation.
    pub fn index_of_valid(&self, pos: &Position) -> Option<usize> {
        debug_assert_eq!(pos.material(), self.material);
        self.find(self.canon.key(pos))
    }

    /// The canonical keys of this material.
    pub fn canon(&self) -> &Canon {
        &self.canon
    }

    /// The local index of a valid position of this material (any symmetric image).
    pub fn index_of(&self, pos: &Position) -> Option<usize> {
        if pos.material() != self.material || pos.validate(self.board).is_err() {
            return None;
        }
        self.index_of_valid(pos)
    }

    /// The board symmetries used for this material, identity first.
    pub fn symmetries(&self) -> &[Symmetry] {
        &self.symmetries
    }
}

/// The canonical positions whose king pair is `kk` (`wk · S + bk`), keys increasing, and
/// how many positions they stand for before symmetry reduction.
fn king_pair_positions(
    board: Board,
    material: Material,
    syms: &[Symmetry],
    canon: &Canon,
    kk: usize,
) -> (Vec<u64>, u64) {
    let s = board.len();
    let (wk, bk) = (Square((kk / s) as u8), Square((kk % s) as u8));
    let pair_key = |w: Square, b: Square| w.0 as usize * s + b.0 as usize;
    let canonical_pair = syms
        .iter()
        .map(|&sym| pair_key(board.transform(sym, wk), board.transform(sym, bk)))
        .min();
    if wk == bk || canonical_pair != Some(kk) {
        return (Vec::new(), 0);
    }
    let men = material.man_count();
    // Whether man i is identical to man i − 1 (then it takes only higher squares).
    let kinds: Vec<_> = std::iter::repeat_n(None, 2)
        .chain(material.men().into_iter().map(Some))
        .collect();
    let repeats: Vec<bool> = (0..men)
        .map(|i| i > 2 && kinds[i] == kinds[i - 1])
        .collect();
    let ep = Radix::new(board, material).ep > 1;
    let mut squares = vec![wk, bk];
    let mut keys = Vec::new();
    let mut raw = 0u64;
    let mut visit = |squares: &[Square]| {
        let pos = Position::new(material, squares, None);
        if pos.validate(board).is_err() {
            return;
        }
        let mut variants = vec![pos];
        if ep {
            variants.extend(
                pos.squares()
                    .iter()
                    .filter(|&&p| pos.ep_possible(board, p))
                    .map(|&p| pos.with_ep(Some(p))),
            );
        }
        let mut found: Vec<u64> = Vec::new();
        for v in variants {
            let key = raw_key(board, &v);
            if canon.key(&v) != key {
                continue;
            }
            let mut images: Vec<u64> = syms
                .iter()
                .map(|&sym| raw_key(board, &v.transform(board, sym)))
                .collect();
            images.sort_unstable();
            images.dedup();
            raw += images.len() as u64;
            found.push(key);
        }
        found.sort_unstable();
        keys.extend(found);
    };
    place(board, &repeats, &mut squares, &mut visit);
    (keys, raw)
}

/// Every placement of the men after those in `squares`, in increasing key order (a man
/// identical to the one before it only on higher squares), each given to `visit`.
fn place(
    board: Board,
    repeats: &[bool],
    squares: &mut Vec<Square>,
    visit: &mut dyn FnMut(&[Square]),
) {
    let i = squares.len();
    if i == repeats.len() {
        visit(squares);
        return;
    }
    let from = if repeats[i] {
        squares[i - 1].0 as usize + 1
    } else {
        0
    };
    for sq in (from..board.len()).map(|q| Square(q as u8)) {
        if squares.contains(&sq) {
            continue;
        }
        squares.push(sq);
        place(board, repeats, squares, visit);
        squares.pop();
    }
}

/// Whether `material` has any position on `board`: its men fit on the board and its pawns
/// on the ranks between the first and the last (KPPPPvK has none on 3x3: four pawns, three
/// squares they may stand on).
pub fn has_positions(board: Board, material: Material) -> bool {
    let pawns = material.pawn_count();
    let pawn_squares = board.files() as usize * (board.ranks() as usize).saturating_sub(2);
    material.man_count() <= board.len() && pawns <= pawn_squares
}

/// A quick upper estimate of the number of indexed positions of `material` on `board`
/// (after symmetry), for memory planning before anything is built.
pub fn estimate_positions(board: Board, material: Material) -> usize {
    let s = board.len() as f64;
    let pawn_squares = board.files() as f64 * (board.ranks() as f64 - 2.0).max(0.0);
    let mut count = s * (s - 1.0);
    let mut placed = 2.0;
    let mut runs: std::collections::HashMap<(Color, crate::material::Piece), f64> =
        Default::default();
    for (color, piece) in material.men() {
        let room = if piece == crate::material::Piece::Pawn {
            pawn_squares
        } else {
            s - placed
        };
        count *= room.max(0.0);
        placed += 1.0;
        let run = runs.entry((color, piece)).or_insert(0.0);
        *run += 1.0;
        count /= *run;
    }
    let syms = symmetries(board, material).len() as f64;
    let ep = if Radix::new(board, material).ep > 1 {
        1.1
    } else {
        1.0
    };
    (count * ep / syms) as usize + 64
}

/// The index of several materials on one board, laid end to end.
#[derive(Debug)]
pub struct Index {
    board: Board,
    classes: Vec<MaterialIndex>,
    offsets: Vec<usize>,
}

impl Index {
    /// Index `materials` on `board` (in this order), in parallel.
    pub fn new(board: Board, materials: &[Material]) -> Index {
        let classes: Vec<MaterialIndex> = materials
            .par_iter()
            .map(|&m| MaterialIndex::new(board, m))
            .collect();
        let mut offsets = Vec::with_capacity(classes.len() + 1);
        let mut total = 0;
        for c in &classes {
            offsets.push(total);
            total += c.len();
        }
        offsets.push(total);
        assert!(
            total + 2 < NONE as usize,
            "too many positions for 32-bit indices"
        );
        Index {
            board,
            classes,
            offsets,
        }
    }

    /// The study's six three-piece classes (KvK, KQvK, KRvK, KBvK, KNvK, KPvK), which its
    /// iteration runs jointly.
    pub fn three_piece(board: Board) -> Index {
        Index::new(board, &Material::three_piece())
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// Total number of indexed positions over all materials.
    pub fn len(&self) -> usize {
        *self.offsets.last().expect("offsets end with the total")
    }

    /// Whether no position is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The materials, in the order given.
    pub fn classes(&self) -> &[MaterialIndex] {
        &self.classes
    }

    /// The number of the material `m` in this index, if it is one of its materials.
    pub fn class_number(&self, m: Material) -> Option<usize> {
        self.classes.iter().position(|c| c.material() == m)
    }

    /// The range of global indices of material number `c`.
    pub fn class_range(&self, c: usize) -> std::ops::Range<usize> {
        self.offsets[c]..self.offsets[c + 1]
    }

    /// The material number of a global index.
    pub fn class_of(&self, global: usize) -> usize {
        self.offsets.partition_point(|&o| o <= global) - 1
    }

    /// The global index of a valid position (any symmetric image) of one of the materials.
    pub fn index_of(&self, pos: &Position) -> Option<usize> {
        let c = self.class_number(pos.material())?;
        self.classes[c].index_of(pos).map(|i| i + self.offsets[c])
    }

    /// The canonical position with global index `i`.
    pub fn position(&self, i: usize) -> Position {
        let c = self.class_of(i);
        self.classes[c].position(i - self.offsets[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fen(f: &str) -> Position {
        crate::fen::parse(f).unwrap().position
    }

    #[test]
    fn raw_counts_on_8x8() {
        let idx = Index::three_piece(Board::new(8, 8).unwrap());
        let raw: Vec<_> = idx.classes().iter().map(|c| c.raw_count()).collect();
        assert_eq!(
            raw,
            vec![
                64 * 63,
                64 * 63 * 62,
                64 * 63 * 62,
                64 * 63 * 62,
                64 * 63 * 62,
                48 * 63 * 62
            ]
        );
        // Symmetry divides pawnless classes by nearly 8 and the pawn class by nearly 2.
        let kq = &idx.classes()[1];
        assert!(kq.len() as u64 * 8 >= kq.raw_count() && (kq.len() as u64) * 7 < kq.raw_count());
        let kp = &idx.classes()[5];
        assert_eq!(
            kp.len() as u64 * 2,
            kp.raw_count(),
            "no KPvK position is its own mirror on 8 files"
        );
    }

    /// The counts of four-piece positions on 8x8 before symmetry (Syzygy's: two
    /// identical pieces are one placement).
    #[test]
    fn four_piece_counts_on_4x4_and_identical_pieces() {
        let board = Board::new(4, 4).unwrap();
        let m = |s: &str| MaterialIndex::new(board, s.parse().unwrap());
        assert_eq!(m("KRNvK").raw_count(), 16 * 15 * 14 * 13);
        assert_eq!(m("KRRvK").raw_count(), 16 * 15 * 14 * 13 / 2);
        assert_eq!(m("KRvKN").raw_count(), 16 * 15 * 14 * 13);
        // Pawns: 8 squares each on 4x4; the kings and the other man take the rest.
        let kpp = m("KPPvK").raw_count();
        assert_eq!(kpp, 8 * 7 / 2 * 14 * 13);
    }

    #[test]
    fn every_symmetric_image_maps_to_the_same_index() {
        for (f, r) in [(3, 3), (4, 3), (3, 5), (2, 4)] {
            let board = Board::new(f, r).unwrap();
            let all = Material::all_up_to(4);
            let idx = Index::new(board, &all);
            for g in 0..idx.len() {
                let pos = idx.position(g);
                let c = &idx.classes()[idx.class_of(g)];
                for &sym in c.symmetries() {
                    assert_eq!(idx.index_of(&pos.transform(board, sym)), Some(g));
                }
            }
        }
    }

    #[test]
    fn en_passant_positions_are_their_own() {
        let board = Board::new(3, 5).unwrap();
        let idx = MaterialIndex::new(board, "KPvKP".parse().unwrap());
        let with = fen("2k/pP1/3/3/K2 - - b3");
        let without = fen("2k/pP1/3/3/K2");
        let (a, b) = (
            idx.index_of(&with).unwrap(),
            idx.index_of(&without).unwrap(),
        );
        assert_ne!(a, b);
        assert_eq!(idx.position(a).ep(), board.parse_square("b4"));
        assert!(idx.keys().windows(2).all(|w| w[0] < w[1]));
    }

    /// A material has positions exactly where its index is not empty.
    #[test]
    fn has_positions_says_whether_the_index_is_empty() {
        for (f, r) in [(2, 2), (3, 2), (2, 3), (3, 3), (2, 4)] {
            let board = Board::new(f, r).unwrap();
            for m in Material::all_up_to(5) {
                let empty = MaterialIndex::new(board, m).is_empty();
                assert_eq!(has_positions(board, m), !empty, "{m} on {board}");
            }
        }
    }

    /// A lookup finds every key at its index and no key that is not there, whatever the
    /// buckets' width: by king pair (three men, few keys), by one or two more men's squares
    /// (four and five men), with en-passant codes (KPPvKP on 3x5).
    #[test]
    fn lookups_find_exactly_the_keys() {
        let m = |s: &str| s.parse::<Material>().unwrap();
        for (f, r, name) in [
            (8, 8, "KRvK"),
            (4, 4, "KRvKN"),
            (4, 4, "KQRvKN"),
            (5, 5, "KRPvKB"),
            (3, 5, "KPPvKP"),
        ] {
            let idx = MaterialIndex::new(Board::new(f, r).unwrap(), m(name));
            let keys = idx.keys();
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(idx.find(k), Some(i), "{name} on {f}x{r}");
            }
            let space = Radix::new(idx.board, idx.material).key_space();
            let absent = [0, 1, space - 1, space, space + 7, u64::MAX]
                .into_iter()
                .chain(keys.iter().flat_map(|&k| [k.wrapping_sub(1), k + 1]));
            for k in absent.filter(|k| keys.binary_search(k).is_err()) {
                assert_eq!(idx.find(k), None, "{name} on {f}x{r}: key {k}");
            }
        }
    }

    #[test]
    fn invalid_positions_have_no_index() {
        let board = Board::new(8, 8).unwrap();
        let idx = Index::three_piece(board);
        let m: Material = "KPvK".parse().unwrap();
        let s = |n: &str| board.parse_square(n).unwrap();
        let pawn_on = |sq| Position::new(m, &[s("a1"), s("h8"), sq], None);
        assert_eq!(idx.index_of(&pawn_on(s("e8"))), None);
        assert_eq!(idx.index_of(&pawn_on(s("e1"))), None);
        assert!(idx.index_of(&pawn_on(s("e2"))).is_some());
        let kings = Position::new(Material::KVK, &[s("a1"), s("a1")], None);
        assert_eq!(idx.index_of(&kings), None);
    }
}
