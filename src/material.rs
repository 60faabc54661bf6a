//! Material as data: which pieces each side has, named like Syzygy's files (`KRvKN`,
//! `KQQvK`, `KPvKP`), parsed and printed in one place; the colour mirror; which stored
//! material answers for a material; what a material leads to (captures and promotions);
//! and every material up to a number of men, in dependency order.
//!
//! A material is the white king with a multiset of White's pieces and the black king with
//! a multiset of Black's. Of each mirror pair (`KvKQ` / `KQvK`), one is *stored*: the one
//! whose White side is the stronger (more pieces; with as many, the stronger pieces first,
//! Q > R > B > N > P), as in Syzygy's file names. A material that is its own mirror
//! (`KNvKN`) is stored. Nothing here caps the number of men below [`MAX_MEN`], which only
//! sizes the fixed arrays of a position.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// The most men (kings included) a position can hold: the size of its fixed arrays, and
/// the most whose keys fit 64 bits on every board (256⁷ · 33 < 2⁶⁴). Memory, not this,
/// limits what can be generated: five men on 8x8 already need about a billion positions.
pub const MAX_MEN: usize = 7;

/// A side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// White, moving up the board.
    White,
    /// Black, moving down.
    Black,
}

impl Color {
    /// Both sides, White first.
    pub const BOTH: [Color; 2] = [Color::White, Color::Black];

    /// The other side.
    pub fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `w` or `b`.
    pub fn letter(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }
}

/// A piece other than the king.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    /// Queen.
    Queen,
    /// Rook.
    Rook,
    /// Bishop.
    Bishop,
    /// Knight.
    Knight,
    /// Pawn (White's move up, Black's down).
    Pawn,
}

impl Piece {
    /// Every piece, strongest first: the order of names and of a position's men.
    pub const ALL: [Piece; 5] = [
        Piece::Queen,
        Piece::Rook,
        Piece::Bishop,
        Piece::Knight,
        Piece::Pawn,
    ];

    /// The promotion choices, in the order moves list them.
    pub const PROMOTIONS: [Piece; 4] = [Piece::Queen, Piece::Rook, Piece::Bishop, Piece::Knight];

    /// Upper-case letter, as in `KQvK`.
    pub fn letter(self) -> char {
        match self {
            Piece::Queen => 'Q',
            Piece::Rook => 'R',
            Piece::Bishop => 'B',
            Piece::Knight => 'N',
            Piece::Pawn => 'P',
        }
    }

    /// The piece for an upper- or lower-case letter other than K.
    pub fn from_letter(c: char) -> Option<Piece> {
        match c.to_ascii_uppercase() {
            'Q' => Some(Piece::Queen),
            'R' => Some(Piece::Rook),
            'B' => Some(Piece::Bishop),
            'N' => Some(Piece::Knight),
            'P' => Some(Piece::Pawn),
            _ => None,
        }
    }

    /// 0 for the queen up to 4 for the pawn.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What stands on a square: a king or a piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The king: capturing it ends the game.
    King,
    /// Any other piece.
    Piece(Piece),
}

impl Role {
    /// The FEN letter of this role for `color` (upper case for White).
    pub fn fen_letter(self, color: Color) -> char {
        let c = match self {
            Role::King => 'K',
            Role::Piece(p) => p.letter(),
        };
        match color {
            Color::White => c,
            Color::Black => c.to_ascii_lowercase(),
        }
    }
}

/// A material: how many of each piece each side has besides its king.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Material {
    /// `counts[color][piece]`.
    counts: [[u8; 5]; 2],
}

impl Material {
    /// Bare kings.
    pub const KVK: Material = Material {
        counts: [[0; 5]; 2],
    };

    /// The material with the given pieces of each side (in any order).
    pub fn from_pieces(white: &[Piece], black: &[Piece]) -> Material {
        let mut m = Material::KVK;
        for &p in white {
            m.counts[0][p.index()] += 1;
        }
        for &p in black {
            m.counts[1][p.index()] += 1;
        }
        m
    }

    /// How many `piece`s `color` has.
    pub fn count(&self, color: Color, piece: Piece) -> usize {
        self.counts[color.index()][piece.index()] as usize
    }

    /// The pieces of `color`, strongest first (repeated as often as they stand).
    pub fn pieces_of(&self, color: Color) -> Vec<Piece> {
        Piece::ALL
            .into_iter()
            .flat_map(|p| std::iter::repeat_n(p, self.count(color, p)))
            .collect()
    }

    /// Every man besides the two kings, in a position's order: White's pieces strongest
    /// first, then Black's.
    pub fn men(&self) -> Vec<(Color, Piece)> {
        Color::BOTH
            .into_iter()
            .flat_map(|c| self.pieces_of(c).into_iter().map(move |p| (c, p)))
            .collect()
    }

    /// Number of men, the two kings included.
    pub fn man_count(&self) -> usize {
        2 + self
            .counts
            .iter()
            .flatten()
            .map(|&n| n as usize)
            .sum::<usize>()
    }

    /// Number of pawns of both sides.
    pub fn pawn_count(&self) -> usize {
        self.count(Color::White, Piece::Pawn) + self.count(Color::Black, Piece::Pawn)
    }

    /// Whether any pawn stands (then only the left–right mirror is a symmetry).
    pub fn has_pawns(&self) -> bool {
        self.pawn_count() > 0
    }

    /// Whether both sides have pawns (only then can en passant arise).
    pub fn has_pawns_on_both_sides(&self) -> bool {
        self.count(Color::White, Piece::Pawn) > 0 && self.count(Color::Black, Piece::Pawn) > 0
    }

    /// The colour mirror: the same pieces with colours swapped (`KQvKR` → `KRvKQ`).
    pub fn mirror(&self) -> Material {
        Material {
            counts: [self.counts[1], self.counts[0]],
        }
    }

    /// A side's strength, for choosing the stored side of a mirror pair: its piece count,
    /// then its pieces strongest first (a queen outranks everything below it).
    fn strength(&self, color: Color) -> (usize, Vec<std::cmp::Reverse<Piece>>) {
        let pieces = self.pieces_of(color);
        (
            pieces.len(),
            pieces.into_iter().map(std::cmp::Reverse).collect(),
        )
    }

    /// Whether this is the material tables hold for its mirror pair: White's side at least
    /// as strong as Black's.
    pub fn is_stored(&self) -> bool {
        self.strength(Color::White) >= self.strength(Color::Black)
    }

    /// The stored material answering for this one, and whether it is the mirror.
    pub fn stored(&self) -> (Material, bool) {
        if self.is_stored() {
            (*self, false)
        } else {
            (self.mirror(), true)
        }
    }

    /// Whether this material is its own colour mirror (`KvK`, `KNvKN`, `KPvKP`).
    pub fn is_self_mirror(&self) -> bool {
        self.mirror() == *self
    }

    /// The materials one move can lead to: a capture of one enemy piece, a promotion, or a
    /// promotion that captures; not stored forms, not this material itself.
    pub fn next(&self) -> Vec<Material> {
        let mut out = Vec::new();
        for mover in Color::BOTH {
            let (own, enemy) = (mover.index(), mover.other().index());
            let mut captures = vec![*self];
            for p in Piece::ALL {
                if self.counts[enemy][p.index()] > 0 {
                    let mut m = *self;
                    m.counts[enemy][p.index()] -= 1;
                    captures.push(m);
                }
            }
            for m in &captures {
                out.push(*m);
                if m.counts[own][Piece::Pawn.index()] > 0 {
                    for q in Piece::PROMOTIONS {
                        let mut promoted = *m;
                        promoted.counts[own][Piece::Pawn.index()] -= 1;
                        promoted.counts[own][q.index()] += 1;
                        out.push(promoted);
                    }
                }
            }
        }
        out.retain(|m| m != self);
        out.sort();
        out.dedup();
        out
    }

    /// The stored materials that one move from a position of `materials` leads to, outside
    /// `materials` (the exits of their graph, read from finished tables), sorted.
    pub fn next_outside(materials: &[Material]) -> Vec<Material> {
        let mut out: Vec<Material> = materials
            .iter()
            .flat_map(|m| m.next())
            .map(|m| m.stored().0)
            .filter(|m| !materials.contains(m))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The stored materials this one needs solved first (every stored material its moves
    /// lead to, directly or not), in dependency order, without this one.
    pub fn dependencies(&self) -> Vec<Material> {
        let mut seen = vec![self.stored().0];
        let mut stack = vec![*self];
        while let Some(m) = stack.pop() {
            for n in m.next() {
                let stored = n.stored().0;
                if !seen.contains(&stored) {
                    seen.push(stored);
                    stack.push(stored);
                }
            }
        }
        seen.retain(|m| *m != self.stored().0);
        sort_by_dependency(&mut seen);
        seen
    }

    /// Every stored material with 2 to `men` men (kings included), in dependency order:
    /// `KvK`, the three-piece materials, then the four-piece ones, ...
    pub fn all_up_to(men: usize) -> Vec<Material> {
        let mut out = Vec::new();
        let mut stack = vec![Material::KVK];
        while let Some(m) = stack.pop() {
            if m.is_stored() && !out.contains(&m) {
                out.push(m);
            }
            if m.man_count() >= men {
                continue;
            }
            for color in Color::BOTH {
                for p in Piece::ALL {
                    let mut bigger = m;
                    bigger.counts[color.index()][p.index()] += 1;
                    stack.push(bigger);
                }
            }
        }
        sort_by_dependency(&mut out);
        out
    }

    /// The three-piece materials with a white piece and bare kings, in the order of the
    /// study (and of format version 1's class byte): KvK, KQvK, KRvK, KBvK, KNvK, KPvK.
    pub fn three_piece() -> [Material; 6] {
        let one = |p: Piece| Material::from_pieces(&[p], &[]);
        [
            Material::KVK,
            one(Piece::Queen),
            one(Piece::Rook),
            one(Piece::Bishop),
            one(Piece::Knight),
            one(Piece::Pawn),
        ]
    }

    /// A request: every stored material with up to `men` men, or the named ones and what
    /// they need, in dependency order.
    pub fn with_dependencies(wanted: &[Material]) -> Vec<Material> {
        let mut out: Vec<Material> = Vec::new();
        for m in wanted {
            for d in m.dependencies().into_iter().chain([m.stored().0]) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
        sort_by_dependency(&mut out);
        out
    }
}

/// Sort materials so that each comes after every material it leads to: fewer men first
/// (captures remove men), then fewer pawns (promotions remove pawns), then by name.
pub fn sort_by_dependency(list: &mut [Material]) {
    list.sort_by_cached_key(|m| (m.man_count(), m.pawn_count(), m.to_string()));
}

impl fmt::Display for Material {
    /// `K` and White's pieces strongest first, `v`, `K` and Black's: `KQRvKN`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |c: Color| -> String {
            std::iter::once('K')
                .chain(self.pieces_of(c).into_iter().map(Piece::letter))
                .collect()
        };
        write!(f, "{}v{}", side(Color::White), side(Color::Black))
    }
}

impl FromStr for Material {
    type Err = Error;

    /// Parse a name such as `KRvKN`, `KQQvK` or `KvKP` (pieces of a side in any order;
    /// printed strongest first).
    fn from_str(s: &str) -> Result<Material, Error> {
        let bad = |why: &str| Error::Material(format!("'{s}': {why}"));
        let (white, black) = s
            .split_once('v')
            .ok_or_else(|| bad("expected White's men, 'v', Black's men, e.g. KRvKN"))?;
        let side = |text: &str, who: &str| -> Result<Vec<Piece>, Error> {
            let rest = text
                .strip_prefix('K')
                .ok_or_else(|| bad(&format!("{who}'s side must start with its king K")))?;
            rest.chars()
                .map(|c| {
                    Piece::from_letter(c)
                        .filter(|_| c.is_ascii_uppercase())
                        .ok_or_else(|| {
                            bad(&format!(
                                "'{c}' is not a piece letter (Q, R, B, N or P; one king a side)"
                            ))
                        })
                })
                .collect()
        };
        let m = Material::from_pieces(&side(white, "White")?, &side(black, "Black")?);
        if m.man_count() > MAX_MEN {
            return Err(bad(&format!("more than {MAX_MEN} men")));
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Material {
        s.parse().unwrap()
    }

    #[test]
    fn names_round_trip_and_normalise() {
        for name in ["KvK", "KQvK", "KRvKN", "KQQvK", "KPvKP", "KvKQ", "KQRBNvK"] {
            assert_eq!(m(name).to_string(), name);
        }
        assert_eq!(m("KNQvK").to_string(), "KQNvK");
        for bad in [
            "", "K", "KvQ", "QvK", "KxvK", "KKvK", "KvKk", "kvk", "KQvKv",
        ] {
            assert!(bad.parse::<Material>().is_err(), "{bad}");
        }
        assert!("KQQQQQQvK".parse::<Material>().is_err());
    }

    #[test]
    fn the_stored_side_is_the_stronger() {
        assert_eq!(m("KvKQ").stored(), (m("KQvK"), true));
        assert_eq!(m("KNvKR").stored(), (m("KRvKN"), true));
        assert_eq!(m("KRvKN").stored(), (m("KRvKN"), false));
        assert_eq!(m("KPvKQ").stored(), (m("KQvKP"), true));
        assert_eq!(m("KvKPP").stored(), (m("KPPvK"), true));
        assert_eq!(m("KPvKNN").stored(), (m("KNNvKP"), true));
        assert!(m("KNvKN").is_self_mirror() && m("KNvKN").is_stored());
    }

    /// 1 two-man material, 5 three-man and 30 four-man: 15 with both extra pieces White's,
    /// 15 with one each (up to the mirror).
    #[test]
    fn all_materials_up_to_four_men() {
        let all = Material::all_up_to(4);
        assert_eq!(all.len(), 36);
        assert_eq!(all.iter().filter(|m| m.man_count() == 4).count(), 30);
        let both_white = all
            .iter()
            .filter(|m| m.man_count() == 4 && m.pieces_of(Color::Black).is_empty())
            .count();
        assert_eq!(both_white, 15);
        assert_eq!(all[0], Material::KVK);
        let mut first: Vec<Material> = all[..6].to_vec();
        let mut three = Material::three_piece().to_vec();
        first.sort();
        three.sort();
        assert_eq!(first, three);
        assert!(all.iter().all(Material::is_stored));
        // Dependency order: everything a material needs comes before it.
        for (i, x) in all.iter().enumerate() {
            for d in x.dependencies() {
                let at = all.iter().position(|y| *y == d).unwrap();
                assert!(at < i, "{d} must come before {x}");
            }
        }
        assert_eq!(Material::all_up_to(3).len(), 6);
    }

    #[test]
    fn what_materials_lead_to() {
        let names = |x: Vec<Material>| x.iter().map(|m| m.to_string()).collect::<Vec<_>>();
        assert_eq!(names(m("KRvKN").dependencies()), ["KvK", "KNvK", "KRvK"]);
        let deps = names(m("KPvKP").dependencies());
        for needed in ["KQvKP", "KNvKP", "KPvK", "KQvKQ", "KQvKN", "KNvKN", "KQvK"] {
            assert!(deps.contains(&needed.to_string()), "{needed}: {deps:?}");
        }
        // A pawn that captures on the last rank promotes in the same move.
        assert!(m("KPvKN").next().contains(&m("KQvK")));
        assert_eq!(
            names(Material::with_dependencies(&[m("KvKR")])),
            ["KvK", "KRvK"]
        );
    }
}
