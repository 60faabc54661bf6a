//! `bidtb.Tablebase`: the tables of one or more directories, probed by FEN or
//! `chess.Board`, with values as `fractions.Fraction`.
//!
//! `probe_value` and `probe_bounds` take a fast path: they find the position's entry
//! ([`bidtb::Tablebase::locate`]) and read its value's rank in the table's dictionary, and
//! the Fraction made for a rank is kept, so a value is decoded and converted once per
//! table and rank (decoding runs a gcd on numbers of up to thousands of bits). Everything
//! else goes through the library's full [`bidtb::Probe`] (every move of both sides).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use bidtb::Board;
use bidtb::Error;
use bidtb::Material;
use bidtb::MoveInfo;
use bidtb::Table;
use bidtb::Value;
use bidtb::fen::{self, Parsed};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple, PyType};

use crate::error::{IntoPy, missing_table, to_py};

static FRACTION: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `fractions.Fraction`.
fn fraction_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    FRACTION.import(py, "fractions", "Fraction")
}

/// A Python int from a non-negative big integer (through u64 where it fits).
fn int_of<'py>(py: Python<'py>, n: &num_bigint::BigUint) -> PyResult<Bound<'py, PyAny>> {
    match n.to_u64() {
        Some(small) => Ok(small.into_pyobject(py)?.into_any()),
        None => Ok(n.into_pyobject(py)?.into_any()),
    }
}

/// A value as an exact `Fraction` (from its numerator and denominator as Python ints,
/// never through a float).
pub fn fraction(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    let (n, d) = (int_of(py, &v.numer())?, int_of(py, &v.denom())?);
    Ok(fraction_class(py)?.call1((n, d))?.unbind())
}

/// A signed rational (a bid) as an exact `Fraction`.
fn signed_fraction(py: Python<'_>, v: &BigRational) -> PyResult<Py<PyAny>> {
    let int = |n: &BigInt| -> PyResult<Bound<'_, PyAny>> {
        match n.to_i64() {
            Some(small) => Ok(small.into_pyobject(py)?.into_any()),
            None => Ok(n.into_pyobject(py)?.into_any()),
        }
    };
    Ok(fraction_class(py)?
        .call1((int(v.numer())?, int(v.denom())?))?
        .unbind())
}

/// A position given as a FEN string, or as a `chess.Board` from python-chess (read from its
/// bitboards; any other object with `board_fen()` through that). A board's `ep_square`, if
/// any, becomes the FEN's en-passant field.
pub fn parse_position(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Parsed> {
    if let Ok(s) = obj.cast::<PyString>() {
        return fen::parse(s.to_str()?).py(py);
    }
    let placement = match chess_placement(py, obj)? {
        Some(p) => p,
        None => match obj.getattr_opt(intern!(py, "board_fen"))? {
            Some(board_fen) => board_fen.call0()?.extract()?,
            None => {
                return Err(PyTypeError::new_err(format!(
                    "a position is a FEN string or a chess.Board, not {}",
                    obj.get_type().name()?
                )));
            }
        },
    };
    let ep: Option<u32> = match obj.getattr_opt(intern!(py, "ep_square"))? {
        Some(sq) if !sq.is_none() => Some(sq.extract()?),
        _ => None,
    };
    let text = match ep {
        // python-chess numbers squares a1 = 0, b1 = 1, ..., h8 = 63 (an 8x8 board).
        Some(sq) if sq < 64 => format!(
            "{placement} w - {}{}",
            char::from(b'a' + (sq % 8) as u8),
            sq / 8 + 1
        ),
        _ => placement,
    };
    fen::parse(&text).py(py)
}

/// The FEN placement of a python-chess board, from its bitboards (`occupied_co` and one
/// per piece type, bit 0 = a1, bit 63 = h8): several times faster than `board_fen()`.
/// None for an object without them.
fn chess_placement(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let Some(colours) = obj.getattr_opt(intern!(py, "occupied_co"))? else {
        return Ok(None);
    };
    // python-chess: occupied_co[WHITE] with WHITE = True = 1.
    let black: u64 = colours.get_item(0)?.extract()?;
    let white: u64 = colours.get_item(1)?.extract()?;
    let kinds = [
        (intern!(py, "kings"), 'k'),
        (intern!(py, "queens"), 'q'),
        (intern!(py, "rooks"), 'r'),
        (intern!(py, "bishops"), 'b'),
        (intern!(py, "knights"), 'n'),
        (intern!(py, "pawns"), 'p'),
    ];
    let mut cells = [None::<char>; 64];
    for (name, letter) in kinds {
        let Some(bits) = obj.getattr_opt(name)? else {
            return Ok(None);
        };
        let bits: u64 = bits.extract()?;
        for (sq, cell) in cells.iter_mut().enumerate() {
            if bits >> sq & 1 == 1 {
                *cell = Some(if white >> sq & 1 == 1 {
                    letter.to_ascii_uppercase()
                } else if black >> sq & 1 == 1 {
                    letter
                } else {
                    continue;
                });
            }
        }
    }
    let mut out = String::with_capacity(72);
    for rank in (0..8).rev() {
        let mut run = 0;
        for file in 0..8 {
            match cells[rank * 8 + file] {
                Some(c) => {
                    if run > 0 {
                        out.push(char::from(b'0' + run));
                        run = 0;
                    }
                    out.push(c);
                }
                None => run += 1,
            }
        }
        if run > 0 {
            out.push(char::from(b'0' + run));
        }
        if rank > 0 {
            out.push('/');
        }
    }
    Ok(Some(out))
}

/// One move of a probe: where it goes and what the position after it is worth.
#[pyclass(module = "bidtb", frozen, get_all)]
pub struct Move {
    /// The move in coordinate notation, e.g. `h8d8`, or `d7d8n` for a promotion.
    uci: String,
    /// α of the position after the move (its exact value where α = β), a Fraction.
    value: Py<PyAny>,
    /// β of the position after the move (equal to `value` where α = β), a Fraction.
    beta: Py<PyAny>,
    /// The mover's progress level of the position after the move: its T level for a
    /// White move, its T′ level for a Black move (0 for a king capture; None if unreached).
    level: Option<u32>,
    /// The FEN of the position after the move (None when the move captures the king).
    fen: Option<String>,
}

#[pymethods]
impl Move {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let level = self.level.map_or("None".to_string(), |l| l.to_string());
        Ok(format!(
            "Move('{}', value={}, level={level})",
            self.uci,
            self.value.bind(py).repr()?
        ))
    }

    fn __str__(&self) -> &str {
        &self.uci
    }
}

fn move_of(py: Python<'_>, m: &MoveInfo) -> PyResult<Py<Move>> {
    let value = fraction(py, &m.value)?;
    let beta = match &m.beta {
        Some(b) => fraction(py, b)?,
        None => value.clone_ref(py),
    };
    Py::new(
        py,
        Move {
            uci: m.uci.clone(),
            value,
            beta,
            level: m.level,
            fen: m.fen.clone(),
        },
    )
}

/// A side's moves, best first.
type Moves = Vec<Py<Move>>;
/// A side's best move.
type Best = Option<Py<Move>>;

/// Everything `bidtb query` says of a position.
#[pyclass(module = "bidtb", frozen, get_all)]
pub struct Probe {
    /// The board, `FxR` (files x ranks), e.g. `8x8`.
    board: String,
    /// The position's FEN (its placement, and ` - - <square>` with an en-passant right).
    fen: String,
    /// The material as queried, e.g. `KRvK`, `KvKR`, `KRvKN`.
    material: String,
    /// α: the exact value (White's winning chance; Black's share of the money needed),
    /// a Fraction.
    value: Py<PyAny>,
    /// β (equal to `value` wherever α = β, which is every three-piece position).
    beta: Py<PyAny>,
    /// Every White move, best first: highest value, then lowest T level.
    white: Vec<Py<Move>>,
    /// Every Black move, best first: lowest β, then lowest T′ level.
    black: Vec<Py<Move>>,
    /// The bid on α, (x_W − x_B)/2 of the total money: negative in a zugzwang.
    bid: Py<PyAny>,
    /// The bid on β (equal to `bid` where no value involved has α < β).
    bid_beta: Py<PyAny>,
    /// Whether the bid is negative: each player would rather the other moved.
    zugzwang: bool,
    /// The position's level in White's closure T (None outside it).
    level_white: Option<u32>,
    /// The position's level in Black's closure T′ (None outside it).
    level_black: Option<u32>,
    /// Whether every table used carries a certificate (the values are proved exact).
    certified: bool,
    json: String,
}

#[pymethods]
impl Probe {
    /// White's best move (None if White has no move).
    #[getter]
    fn best_white(&self, py: Python<'_>) -> Option<Py<Move>> {
        self.white.first().map(|m| m.clone_ref(py))
    }

    /// Black's best move (None if Black has no move).
    #[getter]
    fn best_black(&self, py: Python<'_>) -> Option<Py<Move>> {
        self.black.first().map(|m| m.clone_ref(py))
    }

    /// The JSON text that `bidtb query --json` prints for this position.
    fn to_json(&self) -> &str {
        &self.json
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Probe('{}', value={})",
            self.fen,
            self.value.bind(py).repr()?
        ))
    }
}

fn probe_of(py: Python<'_>, p: &bidtb::Probe) -> PyResult<Probe> {
    let list = |moves: &[MoveInfo]| -> PyResult<Vec<Py<Move>>> {
        moves.iter().map(|m| move_of(py, m)).collect()
    };
    let value = fraction(py, &p.value)?;
    let beta = match &p.beta {
        Some(b) => fraction(py, b)?,
        None => value.clone_ref(py),
    };
    let bid = signed_fraction(py, &p.bid)?;
    let bid_beta = match &p.bid_beta {
        Some(b) => signed_fraction(py, b)?,
        None => bid.clone_ref(py),
    };
    Ok(Probe {
        board: p.board.to_string(),
        fen: p.fen.clone(),
        material: p.class.clone(),
        value,
        beta,
        white: list(&p.white)?,
        black: list(&p.black)?,
        bid,
        bid_beta,
        zugzwang: p.zugzwang,
        level_white: p.level_white,
        level_black: p.level_black,
        certified: p.certified,
        json: p.to_json().to_string(),
    })
}

/// The Fractions made so far: by directory, board, stored material, dictionary rank and
/// whether the complement (1 − v, for a position read through the colour mirror).
type CacheKey = (usize, Board, Material, u32, bool);

/// Fractions kept at most (then the cache starts again): a bound on memory where values
/// have thousands of digits.
const CACHE_LIMIT: usize = 1 << 18;

/// Exact tables for bidding chess, probed like `chess.syzygy.Tablebase`.
///
/// Open with `bidtb.open_tablebase(directory)` (or `Tablebase(directory)`), add more
/// directories with `add_directory`, and close with `close()` or a `with` block. A
/// directory holds tables as `bidtb generate --out DIR` (or `bidtb.generate(out=DIR)`)
/// writes them: `DIR/8x8/KRvK.bidtb`. A position is a FEN of any board size, or a
/// `chess.Board` (8x8); it has no side to move. Values are `fractions.Fraction`.
#[pyclass(module = "bidtb")]
pub struct Tablebase {
    dirs: Vec<bidtb::Tablebase>,
    cache: Mutex<HashMap<CacheKey, Py<PyAny>>>,
}

impl Tablebase {
    /// The directory holding a position's table, its table, the position's index in it and
    /// whether it is read through the colour mirror.
    fn locate(&self, py: Python<'_>, p: &Parsed) -> PyResult<(usize, &Table, usize, bool)> {
        let mut missing = None;
        for (d, tb) in self.dirs.iter().enumerate() {
            match tb.locate(p.board, &p.position) {
                Ok((t, i, mirrored)) => return Ok((d, t, i, mirrored)),
                Err(e @ Error::MissingTable { .. }) => {
                    missing.get_or_insert(e);
                }
                Err(e) => return Err(to_py(py, e)),
            }
        }
        Err(match missing {
            Some(e) => to_py(py, e),
            None => self.no_directory(py, p),
        })
    }

    /// The error for a probe with no directory open.
    fn no_directory(&self, py: Python<'_>, p: &Parsed) -> PyErr {
        if let Err(e) = p.position.validate(p.board) {
            return to_py(py, e);
        }
        let material = p.position.material().stored().0.to_string();
        let board = p.board.to_string();
        missing_table(
            py,
            format!(
                "missing table {material} on {board}: no table directory is open (open one \
                 with bidtb.open_tablebase(DIR) or add_directory(DIR)); generate it with \
                 `bidtb generate --board {board} --method solve --material {material} --out \
                 DIR`"
            ),
            &material,
            &board,
            None,
        )
    }

    /// The Fraction of dictionary entry `rank` of table `t` (of directory `d`), or of its
    /// complement.
    fn value_at(
        &self,
        py: Python<'_>,
        key: (usize, Board),
        t: &Table,
        rank: u32,
        complement: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = (key.0, key.1, t.info().material, rank, complement);
        // The lock is never held across a call into Python (which may switch threads).
        if let Some(f) = self.lock().get(&key) {
            return Ok(f.clone_ref(py));
        }
        let v = t.dictionary_value(rank as usize).py(py)?;
        let v = if complement { v.complement() } else { v };
        let f = fraction(py, &v)?;
        let mut cache = self.lock();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, f.clone_ref(py));
        Ok(f)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Py<PyAny>>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// α and, if asked, β of a position, through the cache.
    fn bounds(
        &self,
        py: Python<'_>,
        position: &Bound<'_, PyAny>,
        beta: bool,
    ) -> PyResult<(Py<PyAny>, Option<Py<PyAny>>)> {
        let p = parse_position(py, position)?;
        let (d, t, i, mirrored) = self.locate(py, &p)?;
        let key = (d, p.board);
        // Through the mirror, α is 1 − the stored β and β is 1 − the stored α.
        let ranks = (|| Ok::<_, Error>((t.rank(i)?, t.rank_beta(i)?)))();
        let (a, b) = match ranks.map_err(|e| to_py(py, e))? {
            (alpha, beta) if mirrored => (beta, alpha),
            ranks => ranks,
        };
        let alpha = self.value_at(py, key, t, a, mirrored)?;
        let upper = match (beta, a == b && !mirrored) {
            (false, _) => None,
            (true, true) => Some(alpha.clone_ref(py)),
            (true, false) => Some(self.value_at(py, key, t, b, mirrored)?),
        };
        Ok((alpha, upper))
    }

    /// The library's full probe of a position, from the directory holding its table.
    fn full(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<bidtb::Probe> {
        let p = parse_position(py, position)?;
        let (d, ..) = self.locate(py, &p)?;
        self.dirs[d].probe(p.board, &p.position).py(py)
    }
}

#[pymethods]
impl Tablebase {
    /// A tablebase with the tables of `directory` (none if not given; add directories
    /// with `add_directory`).
    #[new]
    #[pyo3(signature = (directory = None))]
    fn new(py: Python<'_>, directory: Option<PathBuf>) -> PyResult<Tablebase> {
        let mut tb = Tablebase {
            dirs: Vec::new(),
            cache: Mutex::new(HashMap::new()),
        };
        if let Some(dir) = directory {
            tb.add_directory(py, dir)?;
        }
        Ok(tb)
    }

    /// Open the tables of `directory` (its subdirectories named like boards, `8x8`, and
    /// the `.bidtb` files in them) and return how many were found. A position is answered
    /// from the first directory holding its table; the tables its moves lead to must be
    /// in that directory too (as `generate` makes them). A table file present but
    /// unusable (truncated, corrupted, another version) raises `BidtbError`; a directory
    /// that does not exist raises `FileNotFoundError`.
    fn add_directory(&mut self, py: Python<'_>, directory: PathBuf) -> PyResult<usize> {
        let tb = py.detach(|| bidtb::Tablebase::open(&directory)).py(py)?;
        let found = tb.boards().map(|b| tb.materials(b).len()).sum();
        self.dirs.push(tb);
        Ok(found)
    }

    /// Close every table (unmap the files). The tablebase stays usable: probes then raise
    /// `MissingTableError` until a directory is added again.
    fn close(&mut self) {
        self.dirs.clear();
        self.lock().clear();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, _args: &Bound<'_, PyTuple>) {
        self.close();
    }

    /// The directories opened, in the order they are searched.
    #[getter]
    fn directories(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.root().to_path_buf()).collect()
    }

    /// The boards (`FxR`) with tables, sorted.
    fn boards(&self) -> Vec<String> {
        let mut out: Vec<Board> = self.dirs.iter().flat_map(|d| d.boards()).collect();
        out.sort();
        out.dedup();
        out.iter().map(Board::to_string).collect()
    }

    /// The materials (as stored: `KRvK`, `KRvKN`) with a table on `board` (`FxR`).
    fn materials(&self, py: Python<'_>, board: &str) -> PyResult<Vec<String>> {
        let board: Board = board.parse().py(py)?;
        let mut out: Vec<Material> = self.dirs.iter().flat_map(|d| d.materials(board)).collect();
        out.sort();
        out.dedup();
        Ok(out.iter().map(Material::to_string).collect())
    }

    /// The exact value of a position: α, the share of the money Black needs (equally
    /// White's winning chance when a fair coin decides who moves), as a Fraction. Where
    /// α < β (some four-piece positions), this is the lower value; see `probe_bounds`.
    ///
    /// Raises `MissingTableError` if its table is not there, `ValueError` for a bad FEN or
    /// position.
    fn probe_value(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Ok(self.bounds(py, position, false)?.0)
    }

    /// Like `probe_value`, but `default` instead of `MissingTableError` where the table is
    /// not there (bad input still raises).
    #[pyo3(signature = (position, default = None))]
    fn get_value(
        &self,
        py: Python<'_>,
        position: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.bounds(py, position, false) {
            Ok((v, _)) => Ok(v),
            Err(e) if is_missing(py, &e) => Ok(default.unwrap_or_else(|| py.None())),
            Err(e) => Err(e),
        }
    }

    /// Both exact values of a position, (α, β): α counts play that never ends for Black, β
    /// for White. They are equal wherever some play ends the game (every three-piece
    /// position).
    fn probe_bounds(
        &self,
        py: Python<'_>,
        position: &Bound<'_, PyAny>,
    ) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        let (a, b) = self.bounds(py, position, true)?;
        Ok((a, b.expect("asked for beta")))
    }

    /// Everything `bidtb query` says of a position: its values, every move of each side
    /// (best first), the bid, the zugzwang flag, the progress levels, whether certified.
    fn probe(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<Probe> {
        let p = self.full(py, position)?;
        probe_of(py, &p)
    }

    /// Every move of each side with the exact value after it and its progress level, best
    /// first: `(white_moves, black_moves)`. White's best move has the highest value (then
    /// the lowest T level), Black's the lowest (then the lowest T′ level).
    fn probe_moves(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<(Moves, Moves)> {
        let p = self.full(py, position)?;
        let list = |moves: &[MoveInfo]| -> PyResult<Vec<Py<Move>>> {
            moves.iter().map(|m| move_of(py, m)).collect()
        };
        Ok((list(&p.white)?, list(&p.black)?))
    }

    /// Each side's best move, `(white, black)`: the move that side should make if it wins
    /// the bid (None for a side without a move).
    fn best_moves(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<(Best, Best)> {
        let p = self.full(py, position)?;
        let best = |m: Option<&MoveInfo>| m.map(|m| move_of(py, m)).transpose();
        Ok((best(p.best_white())?, best(p.best_black())?))
    }

    /// The bid, as a share of the total money: (x_W − x_B)/2, where x_W is the value after
    /// White's best move and x_B after Black's. Each player bids it; negative in a
    /// zugzwang (each would rather the other moved). A Fraction.
    fn bid(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let p = self.full(py, position)?;
        signed_fraction(py, &p.bid)
    }

    /// Whether the position is a zugzwang: the bid is negative, each player would rather
    /// the other moved.
    fn is_zugzwang(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.full(py, position)?.zugzwang)
    }

    /// Bidding with whole chips (docs/src/guide/chips.md): with White holding `white` chips and
    /// Black `black`, the tie-break marker with `tiebreak` ("white" or "black"), read from
    /// the chip tables of `white + black` chips (`bidtb chips --chips K`). Returns a dict,
    /// as `bidtb query --json --chips W:B` prints under "chips": the holdings, the
    /// thresholds `win` and `not_lose` (holdings like "50" or "49*"), the `outcome`
    /// ("white wins", "black wins" or "draw"), the `advice` (each a side, its bid and what
    /// to do when the bid is won) and every move with the thresholds after it.
    #[pyo3(signature = (position, white, black, tiebreak = "white"))]
    fn probe_chips(
        &self,
        py: Python<'_>,
        position: &Bound<'_, PyAny>,
        white: u32,
        black: u32,
        tiebreak: &str,
    ) -> PyResult<Py<PyAny>> {
        let marker = match tiebreak {
            "white" => bidtb::Color::White,
            "black" => bidtb::Color::Black,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "tiebreak is 'white' or 'black', not '{other}'"
                )));
            }
        };
        let p = parse_position(py, position)?;
        let (d, ..) = self.locate(py, &p)?;
        let advice = self.dirs[d]
            .chip_advice(p.board, &p.position, white, black, marker)
            .py(py)?;
        let json = py.import("json")?;
        Ok(json
            .call_method1("loads", (advice.to_json().to_string(),))?
            .unbind())
    }

    fn __repr__(&self) -> String {
        let dirs: Vec<String> = self
            .dirs
            .iter()
            .map(|d| format!("'{}'", d.root().display()))
            .collect();
        format!("Tablebase([{}])", dirs.join(", "))
    }
}

/// Whether a Python error is a `bidtb.MissingTableError`.
fn is_missing(py: Python<'_>, e: &PyErr) -> bool {
    crate::error::missing_table_class(py).is_ok_and(|cls| e.is_instance(py, &cls))
}
