//! Pictures as standalone SVG, built by hand (no font files, no drawing crate): the value
//! heatmap of a position ([`heatmap`]) and the convergence plot of a run ([`plot`]).
//! Colours are presentation only; every value shown as text or in a tooltip is exact.

use std::fmt::Write;

use bidtb::internal::iterate::convergence::Convergence;
use bidtb::internal::probe::map::ValueMap;
use bidtb::internal::probe::{decimal, fraction};

/// Escape text for SVG content and attributes.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The colour of a value in [0, 1]: blue where Black wins (0), near-white at 1/2, red where
/// White wins (1). The same scale as the explorer page.
pub fn colour(v: f64) -> String {
    const STOPS: [(f64, [f64; 3]); 5] = [
        (0.0, [33.0, 102.0, 172.0]),
        (0.25, [103.0, 169.0, 207.0]),
        (0.5, [247.0, 247.0, 247.0]),
        (0.75, [239.0, 138.0, 98.0]),
        (1.0, [178.0, 24.0, 43.0]),
    ];
    let v = v.clamp(0.0, 1.0);
    let i = STOPS
        .windows(2)
        .position(|w| v <= w[1].0)
        .unwrap_or(STOPS.len() - 2);
    let ((a, ca), (b, cb)) = (STOPS[i], STOPS[i + 1]);
    let t = (v - a) / (b - a);
    let c: Vec<u8> = (0..3)
        .map(|k| (ca[k] + t * (cb[k] - ca[k])).round() as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The heatmap of a value map: each square coloured by the value with the black king there,
/// the exact value in a `<title>` tooltip, the other pieces drawn as lettered discs, and a
/// colour scale legend.
pub fn heatmap(map: &ValueMap) -> String {
    const CELL: usize = 48;
    let (files, ranks) = (map.board.files() as usize, map.board.ranks() as usize);
    let (left, top) = (28, 36);
    let grid_w = files * CELL;
    let grid_h = ranks * CELL;
    let legend_x = left + grid_w + 24;
    let width = legend_x + 110;
    let height = (top + grid_h + 30).max(top + 300);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/><text x="{left}" y="22" font-size="15">{} {}: value with the black king on each square</text>"#,
        esc(&map.fen),
        esc(&map.class)
    );
    for (r, row) in map.rows().iter().enumerate() {
        for (f, &s) in row.iter().enumerate() {
            let (x, y) = (left + f * CELL, top + r * CELL);
            let name = map.board.square_name(s);
            match map.at(s) {
                Some(v) => {
                    let approx = v.to_f64();
                    let ink = if (0.2..=0.8).contains(&approx) {
                        "#222"
                    } else {
                        "#fff"
                    };
                    let _ = writeln!(
                        out,
                        r##"<g class="square" data-square="{name}"><title>{name}: {} ≈ {}</title><rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{}" stroke="#888" stroke-width="0.5"/><text x="{}" y="{}" font-size="11" text-anchor="middle" fill="{ink}">{}</text></g>"##,
                        fraction(v),
                        decimal(v, 12),
                        colour(approx),
                        x + CELL / 2,
                        y + CELL / 2 + 4,
                        short(approx)
                    );
                    if s == map.black_king {
                        let _ = writeln!(
                            out,
                            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#000" stroke-width="3"><title>the black king stands here</title></rect>"##,
                            x + 2,
                            y + 2,
                            CELL - 4,
                            CELL - 4
                        );
                    }
                }
                None => {
                    let c = map.piece_at(s).unwrap_or('?');
                    let white = c.is_ascii_uppercase();
                    let (disc, ink) = if white {
                        ("#fff", "#000")
                    } else {
                        ("#000", "#fff")
                    };
                    let _ = writeln!(
                        out,
                        r##"<g class="piece"><title>{name}: {}</title><rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="#bbb" stroke="#888" stroke-width="0.5"/><circle cx="{}" cy="{}" r="16" fill="{disc}" stroke="#000"/><text x="{}" y="{}" font-size="18" font-weight="bold" text-anchor="middle" fill="{ink}">{}</text></g>"##,
                        piece_name(c),
                        x + CELL / 2,
                        y + CELL / 2,
                        x + CELL / 2,
                        y + CELL / 2 + 6,
                        c.to_ascii_uppercase()
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#,
            left / 2,
            top + r * CELL + CELL / 2 + 4,
            ranks - r
        );
    }
    for f in 0..files {
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#,
            left + f * CELL + CELL / 2,
            top + grid_h + 16,
            (b'a' + f as u8) as char
        );
    }
    // The legend: a vertical colour bar from 1 (top) to 0.
    let bar_h = 240;
    let _ = writeln!(
        out,
        r#"<defs><linearGradient id="scale" x1="0" y1="1" x2="0" y2="0">"#
    );
    for i in 0..=10 {
        let v = i as f64 / 10.0;
        let _ = writeln!(out, r#"<stop offset="{v}" stop-color="{}"/>"#, colour(v));
    }
    let _ = writeln!(out, "</linearGradient></defs>");
    let _ = writeln!(
        out,
        r##"<g class="legend"><rect x="{legend_x}" y="{top}" width="20" height="{bar_h}" fill="url(#scale)" stroke="#888"/>"##
    );
    for (v, label) in [
        (1.0, "1 White wins"),
        (0.75, "3/4"),
        (0.5, "1/2"),
        (0.25, "1/4"),
        (0.0, "0 Black wins"),
    ] {
        let y = top as f64 + (1.0 - v) * bar_h as f64;
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#000"/><text x="{}" y="{}" font-size="11">{label}</text>"##,
            legend_x + 20,
            legend_x + 25,
            legend_x + 28,
            y + 4.0
        );
    }
    let _ = writeln!(out, "</g></svg>");
    out
}

/// Two decimals, for the text inside a square (the tooltip has the exact value).
fn short(v: f64) -> String {
    if v == 1.0 {
        "1".into()
    } else if v == 0.0 {
        "0".into()
    } else {
        format!("{v:.2}").trim_start_matches('0').to_string()
    }
}

fn piece_name(c: char) -> String {
    let colour = if c.is_ascii_uppercase() {
        "white"
    } else {
        "black"
    };
    let kind = match c.to_ascii_uppercase() {
        'K' => "king",
        'Q' => "queen",
        'R' => "rook",
        'B' => "bishop",
        'N' => "knight",
        'P' => "pawn",
        _ => "piece",
    };
    format!("{colour} {kind}")
}

/// Line colours for the classes of a plot, in column order.
const PALETTE: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#9c755f",
];

/// A round axis step giving about `target` ticks over `span`.
fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag)
}

/// The convergence plot of a run: per class, the guesses that changed at each iteration
/// (lines) and the failed equations at each Richman test (dots), on a log scale (zero counts
/// leave gaps; a test with no failures sits on the "0" row), with the first Richman
/// iteration marked.
pub fn plot(rec: &Convergence, board: &str, first_richman: Option<u32>) -> String {
    let (width, height) = (960usize, 520usize);
    let what = if rec.settled {
        "positions reaching their final guess"
    } else {
        "guesses changed"
    };
    let (x0, x1, y0, y1) = (70.0, 780.0, 50.0, 440.0);
    let zero_row = y1 + 22.0;
    let last = rec.rows.last().map_or(1, |r| r.n).max(1) as f64;
    let max = rec
        .rows
        .iter()
        .flat_map(|r| r.changed.iter().chain(r.violations.iter().flatten()))
        .copied()
        .max()
        .unwrap_or(1)
        .max(10);
    let decades = (max as f64).log10().ceil().max(1.0);
    let sx = |n: f64| x0 + n / last * (x1 - x0);
    let sy = |c: u64| {
        if c == 0 {
            zero_row
        } else {
            y1 - (c as f64).log10() / decades * (y1 - y0)
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">"#
    );
    let title = match first_richman {
        Some(n) => format!("{board}: convergence, first Richman iteration {n}"),
        None => format!("{board}: convergence (the run did not converge)"),
    };
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/><text x="{x0}" y="28" font-size="16">{}</text>"#,
        esc(&title)
    );
    // Axes, decade grid lines and labels.
    let _ = writeln!(
        out,
        r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#000"/>"##,
        x1 - x0,
        y1 - y0
    );
    for d in 0..=decades as u32 {
        let y = y1 - d as f64 / decades * (y1 - y0);
        let _ = writeln!(
            out,
            r##"<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" font-size="11" text-anchor="end">{}</text>"##,
            x0 - 6.0,
            y + 4.0,
            10u64.pow(d)
        );
    }
    let _ = writeln!(
        out,
        r##"<text x="{}" y="{}" font-size="11" text-anchor="end">0</text>"##,
        x0 - 6.0,
        zero_row + 4.0
    );
    let step = nice_step(last, 8.0);
    let mut t = 0.0;
    while t <= last + 0.5 {
        let x = sx(t);
        let _ = writeln!(
            out,
            r##"<line x1="{x}" y1="{y1}" x2="{x}" y2="{}" stroke="#000"/><text x="{x}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
            y1 + 5.0,
            zero_row + 22.0,
            t as u64
        );
        t += step;
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">iteration n</text><text x="18" y="{}" font-size="12" text-anchor="middle" transform="rotate(-90 18 {})">positions (log scale)</text>"#,
        (x0 + x1) / 2.0,
        height - 6,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0
    );
    // One line per class (gaps where nothing changed), dots at the Richman tests.
    for (c, class) in rec.classes.iter().enumerate() {
        let colour = PALETTE[c % PALETTE.len()];
        let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for r in &rec.rows {
            let v = r.changed[c];
            if v == 0 {
                if !segments.last().is_some_and(Vec::is_empty) {
                    segments.push(Vec::new());
                }
                continue;
            }
            segments
                .last_mut()
                .expect("one open segment")
                .push((sx(r.n as f64), sy(v)));
        }
        let _ = writeln!(
            out,
            r#"<g class="class" data-class="{}"><title>{}: {what}</title>"#,
            esc(class),
            esc(class)
        );
        for seg in segments.iter().filter(|s| !s.is_empty()) {
            if seg.len() == 1 {
                let (x, y) = seg[0];
                let _ = writeln!(
                    out,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="1.5" fill="{colour}"/>"#
                );
                continue;
            }
            let points: Vec<String> = seg.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.2"/>"#,
                points.join(" ")
            );
        }
        for r in &rec.rows {
            if let Some(v) = &r.violations {
                let _ = writeln!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="none" stroke="{colour}" stroke-width="1.5"><title>{class} at n = {}: {} failed equations</title></circle>"#,
                    sx(r.n as f64),
                    sy(v[c]),
                    r.n,
                    v[c]
                );
            }
        }
        let _ = writeln!(out, "</g>");
        let ly = y0 + 10.0 + 20.0 * c as f64;
        let _ = writeln!(
            out,
            r#"<line x1="800" y1="{ly}" x2="830" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="838" y="{}" font-size="12">{}</text>"#,
            ly + 4.0,
            esc(class)
        );
    }
    let ly = y0 + 20.0 * rec.classes.len() as f64 + 14.0;
    let _ = writeln!(
        out,
        r##"<text x="800" y="{ly}" font-size="11">lines: {what}</text><circle cx="805" cy="{}" r="3.5" fill="none" stroke="#000"/><text x="814" y="{}" font-size="11">failed equations</text><text x="814" y="{}" font-size="11">(Richman tests)</text>"##,
        ly + 16.0,
        ly + 20.0,
        ly + 34.0
    );
    if let Some(n) = first_richman {
        let x = sx(n as f64);
        let _ = writeln!(
            out,
            r##"<g class="first-richman"><title>first Richman iteration: {n}</title><line x1="{x}" y1="{y0}" x2="{x}" y2="{zero_row}" stroke="#000" stroke-dasharray="5,4"/><text x="{}" y="{}" font-size="12" text-anchor="end">first Richman n = {n}</text></g>"##,
            x - 4.0,
            y0 + 14.0
        );
    }
    let _ = writeln!(out, "</svg>");
    out
}

/// The atlas's grid: one square per board (files across, ranks up), coloured by the number
/// of digits of its largest denominator on a log scale (blue: few, red: many), the digits
/// written in it and in a `<title>` tooltip.
pub fn atlas_grid(rows: &[bidtb::internal::generate::atlas::Row]) -> String {
    let size = |r: &bidtb::internal::generate::atlas::Row| -> (u32, u32) {
        let (f, rk) = r.board.split_once('x').expect("FxR");
        (f.parse().unwrap_or(0), rk.parse().unwrap_or(0))
    };
    let max_f = rows.iter().map(|r| size(r).0).max().unwrap_or(2);
    let max_r = rows.iter().map(|r| size(r).1).max().unwrap_or(2);
    let cell = 48.0;
    let (x0, y0) = (60.0, 40.0);
    let (w, h) = (
        (x0 + cell * (max_f as f64 - 1.0) + 40.0).max(480.0),
        y0 + cell * (max_r as f64 - 1.0) + 50.0,
    );
    let top = rows
        .iter()
        .map(|r| (r.max_denominator_digits as f64).ln())
        .fold(1.0f64, f64::max);
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif"><text x="{x0}" y="24" font-size="14">Largest denominator (digits) per board: files across, ranks up</text>"#
    );
    for r in rows {
        let (f, rk) = size(r);
        let x = x0 + cell * (f as f64 - 2.0);
        let y = y0 + cell * (max_r as f64 - rk as f64);
        let t = (r.max_denominator_digits as f64).ln() / top;
        out += &format!(
            r##"<g class="board" data-board="{b}" data-digits="{d}"><title>{b}: largest denominator {d} digits</title><rect x="{x}" y="{y}" width="{c}" height="{c}" fill="{fill}" stroke="#fff"/><text x="{tx}" y="{ty}" font-size="11" text-anchor="middle">{d}</text></g>"##,
            b = esc(&r.board),
            d = r.max_denominator_digits,
            c = cell,
            fill = colour(t),
            tx = x + cell / 2.0,
            ty = y + cell / 2.0 + 4.0,
        );
    }
    for f in 2..=max_f {
        out += &format!(
            r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">{f}</text>"#,
            x0 + cell * (f as f64 - 2.0) + cell / 2.0,
            y0 + cell * (max_r as f64 - 1.0) + 16.0
        );
    }
    for rk in 2..=max_r {
        out += &format!(
            r#"<text x="{}" y="{}" font-size="11" text-anchor="end">{rk}</text>"#,
            x0 - 6.0,
            y0 + cell * (max_r as f64 - rk as f64) + cell / 2.0 + 4.0
        );
    }
    out += "</svg>\n";
    out
}

/// One series of an atlas scatter: its name and its value for a row (None: no point).
pub type Series<'a> = (
    &'a str,
    &'a dyn Fn(&bidtb::internal::generate::atlas::Row) -> Option<f64>,
);

/// A log–log scatter of the atlas: `y(row)` against `x(row)` for every board, each point
/// with its board and both numbers in a `<title>`.
pub fn atlas_scatter(
    rows: &[bidtb::internal::generate::atlas::Row],
    title: &str,
    series: &[Series<'_>],
    x_name: &str,
    x: &dyn Fn(&bidtb::internal::generate::atlas::Row) -> f64,
) -> String {
    let (width, height) = (720.0, 440.0);
    let (x0, x1, y0, y1) = (70.0, 690.0, 40.0, 360.0);
    let points: Vec<(usize, f64, f64, &str)> = series
        .iter()
        .enumerate()
        .flat_map(|(k, (_, f))| {
            rows.iter().filter_map(move |r| {
                f(r).filter(|v| *v > 0.0)
                    .map(|v| (k, x(r), v, r.board.as_str()))
            })
        })
        .filter(|p| p.1 > 0.0)
        .collect();
    let span = |vals: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        (
            lo.log10().floor(),
            hi.log10().ceil().max(lo.log10().floor() + 1.0),
        )
    };
    let (xa, xb) = span(&mut points.iter().map(|p| p.1));
    let (ya, yb) = span(&mut points.iter().map(|p| p.2));
    let px = |v: f64| x0 + (v.log10() - xa) / (xb - xa) * (x1 - x0);
    let py = |v: f64| y1 - (v.log10() - ya) / (yb - ya) * (y1 - y0);
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif"><text x="{x0}" y="24" font-size="14">{}</text><rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        esc(title),
        x1 - x0,
        y1 - y0
    );
    for e in xa as i32..=xb as i32 {
        let v = 10f64.powi(e);
        out += &format!(
            r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">1e{e}</text>"#,
            px(v),
            y1 + 16.0
        );
    }
    for e in ya as i32..=yb as i32 {
        let v = 10f64.powi(e);
        out += &format!(
            r#"<text x="{}" y="{}" font-size="11" text-anchor="end">1e{e}</text>"#,
            x0 - 6.0,
            py(v) + 4.0
        );
    }
    out += &format!(
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        y1 + 36.0,
        esc(x_name)
    );
    for (k, xv, yv, board) in &points {
        out += &format!(
            r#"<circle class="point" data-board="{b}" data-series="{s}" cx="{:.1}" cy="{:.1}" r="3.5" fill="{c}"><title>{b}: {s} {yv}, {xn} {xv}</title></circle>"#,
            px(*xv),
            py(*yv),
            b = esc(board),
            s = esc(series[*k].0),
            c = PALETTE[*k % PALETTE.len()],
            xn = esc(x_name),
        );
    }
    for (k, (name, _)) in series.iter().enumerate() {
        out += &format!(
            r#"<circle cx="{}" cy="{}" r="4" fill="{}"/><text x="{}" y="{}" font-size="12">{}</text>"#,
            x0 + 10.0 + 160.0 * k as f64,
            y1 + 56.0,
            PALETTE[k % PALETTE.len()],
            x0 + 18.0 + 160.0 * k as f64,
            y1 + 60.0,
            esc(name)
        );
    }
    out += "</svg>\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_run_from_blue_through_white_to_red() {
        assert_eq!(colour(0.0), "#2166ac");
        assert_eq!(colour(0.5), "#f7f7f7");
        assert_eq!(colour(1.0), "#b2182b");
        assert_eq!(colour(-1.0), colour(0.0));
        // Halfway between the first two stops: (33+103)/2, (102+169)/2 rounded, (172+207)/2 rounded.
        assert_eq!(colour(0.125), "#4488be");
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(2660.0, 8.0), 500.0);
        assert_eq!(nice_step(40.0, 8.0), 5.0);
        assert_eq!(nice_step(3.0, 8.0), 1.0);
        assert_eq!(esc("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
    }
}
