//! The convergence record of a run, `DIR/FxR/convergence.csv`: for every iteration n, per
//! class, how many guesses sₙ changed, and, at the iterations where a Richman test ran, how
//! many equations failed. Written by `bidtb generate`, read back by `bidtb plot`.
//!
//! The file is plain CSV with a header line: `iteration`, then `changed_<Class>` for every
//! class of the board, then `violations_<Class>` for every class; a violations cell is empty
//! where no test ran. A run of the iteration that knew the exact values beforehand (the
//! default; see [`super::settle`]) computes no intermediate guesses: its columns are
//! `settled_<Class>`, the positions whose guess reached its final value at n.

use std::path::Path;

use super::Iteration;
use crate::error::Error;

/// One line of the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The iteration n.
    pub n: u32,
    /// Guesses that changed at n, per class.
    pub changed: Vec<u64>,
    /// Failing equations found by a Richman test of sₙ, per class (None: no test at n).
    pub violations: Option<Vec<u64>>,
}

/// A run's convergence record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Convergence {
    /// The class names, in column order.
    pub classes: Vec<String>,
    /// Whether the counts are positions reaching their final guess (`settled_`) rather
    /// than guesses that changed (`changed_`).
    pub settled: bool,
    /// One row per iteration, in order.
    pub rows: Vec<Row>,
}

impl Convergence {
    /// The record of an iteration run over materials named `classes` (in the index's
    /// order).
    pub fn of(classes: Vec<String>, it: &Iteration) -> Convergence {
        let rows = it
            .history
            .iter()
            .map(|r| Row {
                n: r.n,
                changed: r.changed.iter().map(|&c| c as u64).collect(),
                violations: it
                    .richman_tests
                    .iter()
                    .find(|t| t.n == r.n)
                    .map(|t| t.violations.iter().map(|&v| v as u64).collect()),
            })
            .collect();
        Convergence {
            classes,
            rows,
            settled: it.settled,
        }
    }

    /// The column prefix of the counts.
    fn prefix(&self) -> &'static str {
        if self.settled { "settled" } else { "changed" }
    }

    /// The CSV text.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("iteration");
        for prefix in [self.prefix(), "violations"] {
            for c in &self.classes {
                out += &format!(",{prefix}_{c}");
            }
        }
        out.push('\n');
        for r in &self.rows {
            out += &r.n.to_string();
            for c in &r.changed {
                out += &format!(",{c}");
            }
            for i in 0..self.classes.len() {
                out.push(',');
                if let Some(v) = &r.violations {
                    out += &v[i].to_string();
                }
            }
            out.push('\n');
        }
        out
    }

    /// Parse the CSV text of `path` (named in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Convergence, Error> {
        let bad = |line: usize, reason: String| Error::Report {
            path: path.display().to_string(),
            reason: format!("line {line}: {reason}"),
        };
        let mut lines = text.lines();
        let header: Vec<&str> = lines
            .next()
            .ok_or_else(|| bad(1, "empty file".into()))?
            .split(',')
            .collect();
        if header.first() != Some(&"iteration") || header.len() % 2 != 1 || header.len() < 3 {
            return Err(bad(
                1,
                "expected the header iteration,changed_<Class>…,violations_<Class>…".into(),
            ));
        }
        let k = (header.len() - 1) / 2;
        let mut classes = Vec::with_capacity(k);
        let settled = header[1].starts_with("settled_");
        let prefix = if settled { "settled_" } else { "changed_" };
        for i in 0..k {
            let changed = header[1 + i].strip_prefix(prefix);
            let violations = header[1 + k + i].strip_prefix("violations_");
            match (changed, violations) {
                (Some(a), Some(b)) if a == b && !a.is_empty() => classes.push(a.to_string()),
                _ => {
                    return Err(bad(
                        1,
                        format!("column {} and {} do not match", 2 + i, 2 + k + i),
                    ));
                }
            }
        }
        let mut rows = Vec::new();
        for (i, line) in lines.enumerate() {
            let no = i + 2;
            if line.is_empty() {
                continue;
            }
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != header.len() {
                return Err(bad(
                    no,
                    format!("{} cells, expected {}", cells.len(), header.len()),
                ));
            }
            let number = |s: &str| {
                s.parse::<u64>()
                    .map_err(|_| bad(no, format!("'{s}' is not a count")))
            };
            let n = cells[0]
                .parse::<u32>()
                .map_err(|_| bad(no, format!("'{}' is not an iteration", cells[0])))?;
            if rows.last().is_some_and(|r: &Row| r.n >= n) {
                return Err(bad(no, format!("iteration {n} out of order")));
            }
            let changed = cells[1..=k]
                .iter()
                .map(|s| number(s))
                .collect::<Result<_, _>>()?;
            let tail = &cells[1 + k..];
            let violations = if tail.iter().all(|s| s.is_empty()) {
                None
            } else {
                Some(tail.iter().map(|s| number(s)).collect::<Result<_, _>>()?)
            };
            rows.push(Row {
                n,
                changed,
                violations,
            });
        }
        Ok(Convergence {
            classes,
            rows,
            settled,
        })
    }

    /// Read `path`.
    pub fn read(path: &Path) -> Result<Convergence, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Board, Options, generate};

    fn record(sol: &generate::Solution) -> Convergence {
        let classes = sol.classes.iter().map(|(m, _)| m.to_string()).collect();
        Convergence::of(classes, sol.iteration().unwrap())
    }

    #[test]
    fn the_record_of_a_run_round_trips_and_adds_up() {
        let mut options = Options::new(Board::new(4, 3).unwrap());
        options.iterate_settings_mut().guesses = true;
        let sol = generate::solve(&options, &generate::Silent).expect("solves");
        let rec = record(&sol);
        assert!(!rec.settled);
        assert_eq!(
            rec.rows.len() as u32,
            sol.iteration().unwrap().iterations_run
        );
        // The counts add up to each class's guess changes in the summary.
        for (c, (_, report)) in sol.classes.iter().enumerate() {
            let total: u64 = rec.rows.iter().map(|r| r.changed[c]).sum();
            assert_eq!(Some(total), report.guess_changes);
        }
        // The last test is the one that passed; earlier ones failed somewhere.
        let tests: Vec<&Row> = rec.rows.iter().filter(|r| r.violations.is_some()).collect();
        let last = tests.last().expect("a converged run was tested");
        assert!(last.violations.as_ref().unwrap().iter().all(|&v| v == 0));
        for t in &tests[..tests.len() - 1] {
            assert!(t.violations.as_ref().unwrap().iter().any(|&v| v > 0));
        }
        let csv = rec.to_csv();
        assert_eq!(Convergence::parse(&csv, Path::new("c.csv")).unwrap(), rec);
    }

    /// The default run knows the exact values: its record counts positions settling, one
    /// per position that does not start at its final guess, each at its last change.
    #[test]
    fn the_settled_record_counts_last_changes() {
        let sol = generate::solve(&Options::new(Board::new(4, 3).unwrap()), &generate::Silent)
            .expect("solves");
        let rec = record(&sol);
        assert!(rec.settled);
        assert_eq!(
            rec.rows.len() as u32,
            sol.iteration().unwrap().iterations_run
        );
        for (c, (_, report)) in sol.classes.iter().enumerate() {
            let total: u64 = rec.rows.iter().map(|r| r.changed[c]).sum();
            assert_eq!(Some(total), report.settled);
            let range = sol.index.class_range(c);
            let last = &sol.iteration().unwrap().last_change;
            let moved = range.filter(|&i| last[i] > 0).count() as u64;
            assert_eq!(total, moved);
        }
        let csv = rec.to_csv();
        assert!(csv.starts_with("iteration,settled_KvK"));
        assert_eq!(Convergence::parse(&csv, Path::new("c.csv")).unwrap(), rec);
    }

    #[test]
    fn malformed_records_are_refused_with_the_line() {
        let p = Path::new("c.csv");
        let ok = "iteration,changed_KvK,violations_KvK\n1,2,\n2,0,0\n";
        assert_eq!(Convergence::parse(ok, p).unwrap().rows.len(), 2);
        for (text, needle) in [
            ("", "line 1"),
            ("iteration,changed_KvK\n", "line 1"),
            ("iteration,changed_KvK,violations_KRvK\n", "do not match"),
            (
                "iteration,changed_KvK,violations_KvK\n1,x,\n",
                "line 2: 'x'",
            ),
            ("iteration,changed_KvK,violations_KvK\n1,2\n", "2 cells"),
            (
                "iteration,changed_KvK,violations_KvK\n2,0,\n1,0,\n",
                "line 3",
            ),
        ] {
            let e = Convergence::parse(text, p).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
