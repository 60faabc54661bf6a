//! `bidtb play`: a game against the engine in the terminal (docs/src/guide/play.md). It draws the
//! board, the bankrolls and who is winning against them, then asks for the person's input:
//! a bid, a move (or `hand` to hand the move over after winning a bid), `advice`, or
//! `quit`. Lines come from standard input, so a game can be scripted.

use std::io::{BufRead, Read, Write};

use num_rational::BigRational;

use bidtb::Color;
use bidtb::Error;
use bidtb::Tablebase;
use bidtb::fen;
use bidtb::internal::play::game::{color_name, parse_share};
use bidtb::internal::play::session::PlayError;
use bidtb::internal::play::{Match, Mode, Phase, Setup};

/// Which game.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(super) enum PlayMode {
    /// A fair coin picks the mover before every move (random-turn chess).
    Random,
    /// Bidding with continuous money: bids are exact shares of the total.
    Money,
    /// Bidding with whole chips and the tie-break marker (docs/src/guide/chips.md; needs chip files:
    /// `bidtb chips --chips K`).
    Chips,
}

/// A colour on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(super) enum Side {
    /// White.
    White,
    /// Black.
    Black,
}

impl From<Side> for Color {
    fn from(s: Side) -> Color {
        match s {
            Side::White => Color::White,
            Side::Black => Color::Black,
        }
    }
}

/// Arguments of `bidtb play`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    tables: super::TablesDir,
    /// The game.
    #[arg(long, value_enum, default_value = "money")]
    mode: PlayMode,
    /// Your colour (the engine plays the other).
    #[arg(long, alias = "color", value_enum, default_value = "white")]
    colour: Side,
    /// Money: your share of the total money, a fraction or decimal (1/2, 0.6).
    #[arg(long, value_parser = parse_bankroll, conflicts_with_all = ["chips", "tiebreak"])]
    bankroll: Option<BigRational>,
    /// Chips: White's and Black's chips, W:B (default 100:100).
    #[arg(long, value_parser = parse_chips)]
    chips: Option<(u32, u32)>,
    /// Chips: who holds the tie-break marker.
    #[arg(long, value_enum)]
    tiebreak: Option<Side>,
    /// The coin's seed, to replay a game (random otherwise).
    #[arg(long)]
    seed: Option<u64>,
    /// The starting position (FEN), e.g. 3k3R/8/3K4/8/8/8/8/8.
    #[arg(required = true, num_args = 1.., value_name = "FEN")]
    fen: Vec<String>,
}

fn parse_bankroll(text: &str) -> Result<BigRational, String> {
    bidtb::internal::play::game::check_share_length(text)?;
    parse_share(text)
        .filter(|x| *x <= BigRational::from_integer(1.into()))
        .ok_or_else(|| format!("{text:?}: your share of the money, from 0 to 1 (1/2, 0.6)"))
}

fn parse_chips(text: &str) -> Result<(u32, u32), String> {
    text.split_once(':')
        .and_then(|(w, b)| Some((w.trim().parse().ok()?, b.trim().parse().ok()?)))
        .ok_or_else(|| format!("{text:?}: White's and Black's chips as W:B, e.g. 100:100"))
}

/// The board as text, White's pieces upper case, from White's side.
fn draw(m: &Match) -> String {
    let g = m.game();
    let (board, pos) = (g.board(), g.position());
    let mut cells = vec!['.'; board.len()];
    for man in pos.men() {
        cells[man.square.0 as usize] = man.role.fen_letter(man.color);
    }
    let mut out = String::new();
    for r in (0..board.ranks() as usize).rev() {
        out += &format!("{:>3}  ", r + 1);
        for f in 0..board.files() as usize {
            out.push(cells[r * board.files() as usize + f]);
            out.push(' ');
        }
        out.push('\n');
    }
    out += "     ";
    for f in 0..board.files() {
        out.push((b'a' + f) as char);
        out.push(' ');
    }
    out.push('\n');
    out
}

/// Show the game: the turns played since the last report (`shown` of its history were
/// shown before; each turn is shown once, however many the engine played in between),
/// the board, the bankrolls and the assessment.
fn report(
    m: &mut Match,
    tb: &Tablebase,
    out: &mut impl Write,
    shown: &mut usize,
) -> Result<(), Error> {
    let state = m.to_json(tb, false)?;
    let g = m.game();
    let mut text = String::new();
    for t in g.history().iter().skip(*shown) {
        let who = |c: Color| if c == m.human() { "you" } else { "engine" };
        if let Some((w, b)) = &t.bids {
            text += &format!(
                "bids: White {} / Black {} -> {} won the bid{}\n",
                w.show(),
                b.show(),
                color_name(t.control.expect("a winner")),
                if t.handed_over {
                    " and handed the move over"
                } else {
                    ""
                }
            );
        } else if let Some(c) = t.coin {
            text += &format!("coin: {}\n", color_name(c));
        }
        text += &format!(
            "{} ({}) played {}\n",
            who(t.mover),
            color_name(t.mover),
            t.uci
        );
    }
    *shown = g.history().len();
    text += &format!("\n{}{}\n", draw(m), fen::write(g.board(), g.position()));
    if g.purse().mode() != Mode::Random {
        text += &format!(
            "bankrolls: White {}, Black {}\n",
            state["purse"]["white"].as_str().unwrap_or("?"),
            state["purse"]["black"].as_str().unwrap_or("?")
        );
    }
    text += &format!("{}\n", state["assessment"]["text"].as_str().unwrap_or(""));
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("stdout", e))
}

/// The longest line the game reads: a bid of two numbers of
/// [`bidtb::internal::play::game::MAX_DIGITS`] digits and a little more.
const MAX_LINE: usize = 2 * bidtb::internal::play::game::MAX_DIGITS + 64;

/// A line of input.
enum Line {
    /// A line of text, without its newline.
    Text(String),
    /// A line that is not read (not UTF-8, or too long): why, to say before asking again.
    Refused(String),
    /// The end of the input.
    End,
}

/// Read one line of at most [`MAX_LINE`] bytes: a longer one is skipped to its end and
/// refused, as is one that is not UTF-8 text, so that the game asks again instead of ending.
fn read_line(input: &mut impl BufRead) -> std::io::Result<Line> {
    let mut bytes = Vec::new();
    let n = input
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut bytes)?;
    if n == 0 {
        return Ok(Line::End);
    }
    if bytes.len() > MAX_LINE && bytes.last() != Some(&b'\n') {
        // Skip the rest of the line, a buffer at a time.
        loop {
            let buf = input.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    input.consume(i + 1);
                    break;
                }
                None => {
                    let all = buf.len();
                    input.consume(all);
                }
            }
        }
        return Ok(Line::Refused(format!(
            "that line is longer than {MAX_LINE} bytes (a number has at most {} digits): \
             type a bid, a move, hand, advice or quit",
            bidtb::internal::play::game::MAX_DIGITS
        )));
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Line::Text(text)),
        Err(_) => Ok(Line::Refused(
            "that line is not UTF-8 text: type a bid, a move, hand, advice or quit".into(),
        )),
    }
}

fn prompt(m: &Match) -> String {
    let g = m.game();
    match g.phase() {
        Phase::Bid => match g.purse().mode() {
            Mode::Chips => "your bid (chips, * adds the marker; advice, quit)> ".into(),
            _ => "your bid (a share, e.g. 1/8 or 0.125; advice, quit)> ".into(),
        },
        Phase::Control(_) => {
            let (w, b) = g.bids().cloned().expect("bids in");
            format!(
                "bids: White {} / Black {}: you won the bid. Your move, or `hand` to let the engine move> ",
                w.show(),
                b.show()
            )
        }
        Phase::Move(_) => match g.coin() {
            Some(_) if g.purse().mode() == Mode::Random => "the coin picks you: your move> ".into(),
            _ => "your move> ".into(),
        },
        Phase::Over(_) => String::new(),
    }
}

pub(super) fn run(args: Args) -> Result<(), (u8, Error)> {
    let fail = |e: Error| (super::exit_code(&e), e);
    let text = args.fen.join(" ");
    let parsed = fen::parse(&text).map_err(fail)?;
    let tb = super::query::open_for_game(&args.tables.tables, &parsed).map_err(fail)?;
    let mode = match args.mode {
        PlayMode::Random => Mode::Random,
        PlayMode::Money => Mode::Money,
        PlayMode::Chips => Mode::Chips,
    };
    if mode != Mode::Chips && (args.chips.is_some() || args.tiebreak.is_some()) {
        return Err((
            2,
            Error::Usage("--chips and --tiebreak go with --mode chips".into()),
        ));
    }
    if mode != Mode::Money && args.bankroll.is_some() {
        return Err((2, Error::Usage("--bankroll goes with --mode money".into())));
    }
    let setup = Setup {
        fen: text,
        mode,
        human: args.colour.into(),
        share: args.bankroll,
        chips: args.chips,
        tiebreak: args.tiebreak.map_or(Color::White, Color::from),
        seed: args.seed,
    };
    let to_error = |e: PlayError| match e {
        PlayError::Refused(r) => (2, Error::Usage(r.text)),
        PlayError::Tables(e) => fail(e),
    };
    let mut m = Match::new(&tb, &setup).map_err(to_error)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let io = |e: std::io::Error| (1, Error::io("stdout", e));
    writeln!(
        out,
        "{} on {}: you play {}, the engine {}",
        match mode {
            Mode::Random => "random-turn chess",
            Mode::Money => "bidding chess with money",
            Mode::Chips => "bidding chess with chips",
        },
        m.game().board(),
        color_name(m.human()),
        color_name(m.human().other())
    )
    .map_err(io)?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut shown = 0;
    loop {
        report(&mut m, &tb, &mut out, &mut shown).map_err(fail)?;
        if let Phase::Over(w) = m.game().phase() {
            let verdict = if w == m.human() {
                "you win"
            } else {
                "the engine wins"
            };
            writeln!(
                out,
                "game over: {} captured the king ({verdict})",
                color_name(w)
            )
            .map_err(io)?;
            return Ok(());
        }
        loop {
            write!(out, "{}", prompt(&m)).map_err(io)?;
            out.flush().map_err(io)?;
            let line = match read_line(&mut input).map_err(|e| (1, Error::io("stdin", e)))? {
                Line::End => {
                    writeln!(out).map_err(io)?;
                    return Err((
                        1,
                        Error::Usage("the game was left unfinished (end of input)".into()),
                    ));
                }
                Line::Refused(why) => {
                    writeln!(out, "{why}").map_err(io)?;
                    continue;
                }
                Line::Text(line) => line,
            };
            let input = line.trim();
            let result = match (input, m.game().phase()) {
                ("", _) => continue,
                ("quit" | "q" | "exit", _) => {
                    writeln!(out, "game abandoned").map_err(io)?;
                    return Ok(());
                }
                ("advice" | "?", _) => {
                    let a = m.advice(&tb).map_err(fail)?;
                    writeln!(out, "advice: {}", a["text"].as_str().unwrap_or("-")).map_err(io)?;
                    continue;
                }
                ("hand" | "hand over" | "pass", _) => m.hand_over(&tb),
                (_, Phase::Bid) => m.bid(&tb, input),
                _ => m.play(&tb, input),
            };
            match result {
                Ok(()) => break,
                Err(PlayError::Refused(r)) => {
                    writeln!(out, "{}", bidtb::internal::error::printable(&r.text)).map_err(io)?
                }
                Err(PlayError::Tables(e)) => return Err(fail(e)),
            }
        }
    }
}
